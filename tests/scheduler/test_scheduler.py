"""The provider at home in a running Airflow: the platform and governance DAGs triggered through the REST API
of a real api-server, run by a real scheduler (LocalExecutor), their results read back through the API and seen
in the UI through headless Chromium."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from tests.scheduler import browser

pytestmark = pytest.mark.scheduler

PLATFORM = "platform_nightly"
GOVERNANCE = "lineage_governance"
LOGICAL_DATE = "2026-10-01T02:00:00+00:00"
CONCURRENT_DATES = ("2026-10-02T02:00:00+00:00", "2026-10-03T02:00:00+00:00")
PLATFORM_TASKS = (
    "birthday_offers",
    "course_performance",
    "daily_revenue",
    "learner_activity",
    "learner_dim",
    "learner_erasure",
    "marketing_audience",
    "marketing_export",
    "review_corpus",
)
OPERATOR_TASKS = tuple(t for t in PLATFORM_TASKS if t != "marketing_export")
SHORT_SECRET = "Skipping masking for a secret as it's too short"
FINDING_LINES = ("unaccounted table: marketing.campaign_list: in the catalog", "marketing.birthday_offers.country")


def first_try_states(api, dag_id: str, run_id: str) -> dict[str, tuple[str, int]]:
    return {t: (ti["state"], ti["try_number"]) for t, ti in api.task_instances(dag_id, run_id).items()}


def expected_governance_states() -> dict[str, tuple[str, int]]:
    return {"wait_for_lineage": ("success", 1), "run_checks": ("success", 1), "write_report": ("failed", 1)}


def outside_groups(lines: list[str], wanted: str) -> bool:
    """Returns True when a line holding `wanted` is logged outside every ::group:: … ::endgroup:: fold."""
    depth = 0
    for line in lines:
        if line.startswith("::group::"):
            depth += 1
        elif line.startswith("::endgroup::"):
            depth = max(0, depth - 1)
        elif wanted in line and depth == 0:
            return True
    return False


def report_of(root: Path, run_id: str) -> Path:
    return root / "reports" / GOVERNANCE / run_id / "governance-report.json"


def test_the_connection_form_is_the_providers(stack):
    api, _ = stack
    meta = api.hook_meta("iceberg_catalog")
    assert meta["hook_name"] == "Apache Iceberg catalog"
    standard = meta["standard_fields"]
    assert all(standard[name]["hidden"] for name in ("host", "port", "login"))
    assert standard["password"]["title"] == "Catalog credential or token"
    assert {"type", "uri", "warehouse", "catalog_name"} <= set(meta["extra_fields"])
    assert meta["extra_fields"]["warehouse"]["schema"]["title"] == "Warehouse"


def test_platform_and_governance_run_under_a_real_scheduler(stack, browser, screenshots):
    api, root = stack
    platform_run = api.trigger(PLATFORM, LOGICAL_DATE)
    governance_run = api.trigger(GOVERNANCE, LOGICAL_DATE)

    assert api.wait_for(PLATFORM, platform_run) == "success"
    assert api.wait_for(GOVERNANCE, governance_run) == "failed"  # error findings fail it, so alerting fires

    assert first_try_states(api, PLATFORM, platform_run) == {t: ("success", 1) for t in PLATFORM_TASKS}
    assert first_try_states(api, GOVERNANCE, governance_run) == expected_governance_states()
    assert [r["run_type"] for r in api.runs(PLATFORM) + api.runs(GOVERNANCE)] == ["manual", "manual"]

    log = api.log(PLATFORM, platform_run, "marketing_audience")
    assert "Lineage of marketing.audience" in log
    assert "email" in log and "crm.learners.email (DIRECT IDENTITY)" in log
    for dag_id, run_id, tasks in (
        (PLATFORM, platform_run, PLATFORM_TASKS),
        (GOVERNANCE, governance_run, tuple(expected_governance_states())),
    ):
        for task_id in tasks:
            assert SHORT_SECRET not in api.log(dag_id, run_id, task_id), f"{dag_id}.{task_id}"

    # The transport and namespace came from airflow.cfg only: the sensor found the events, in namespace platform.
    report_path = report_of(root, governance_run)
    report = json.loads(report_path.read_text())
    errors = [f["kind"] for f in report["findings"] if f["kind"] != "missing_metadata"]
    assert sorted(errors) == ["unaccounted_table", "understated_classification", "understated_classification"]
    assert report["coverage"]["tasks_with_lineage"] == 9
    assert report["coverage"]["event_source"] == str(root / "events.jsonl")
    assert report["coverage"]["target_run_id"] == platform_run

    summary = api.xcom(GOVERNANCE, governance_run, "write_report", "report")
    assert summary == {
        "report": str(report_path),
        "markdown": str(report_path.with_suffix(".md")),
        "findings": 5,
        "errors": 3,
        "warnings": 2,
    }
    report_lines = api.log_lines(GOVERNANCE, governance_run, "write_report")
    for wanted in FINDING_LINES:
        assert outside_groups(report_lines, wanted), wanted
    failure = api.call(
        "GET",
        f"/dags/{GOVERNANCE}/dagRuns/{urllib.parse.quote(governance_run, safe='')}"
        f"/taskInstances/write_report/logs/1?full_content=true",
    )
    assert f"see {report_path.with_suffix('.md')}" in json.dumps(failure)  # the failure names its own report

    events = {e["uri"]: e for e in api.asset_events(PLATFORM, platform_run)}
    audience = events["iceberg://iceberg_default/marketing/audience"]
    assert audience["source_task_id"] == "marketing_audience"
    assert audience["extra"]["table"] == "marketing.audience"
    assert audience["extra"]["rows"] > 0 and isinstance(audience["extra"]["snapshot_id"], int)
    assert len(events) == len(OPERATOR_TASKS) - 1  # learner_dim and learner_erasure write one table

    seen_in_the_ui(api, browser, platform_run, governance_run, screenshots)


def seen_in_the_ui(api, chromium: browser.Browser, platform_run: str, governance_run: str, folder: Path) -> None:
    """Opens the grid of the platform run and the logs of an operator task and the report task in headless
    Chromium (logged in); saves their screenshots under `folder` and checks what a person reads there."""
    platform = f"dags/{PLATFORM}/runs/{urllib.parse.quote(platform_run, safe='')}"
    pages = {
        "grid": (api.ui(platform), ["marketing_audience", "review_corpus", "marketing_export"]),
        "operator-log": (
            api.ui(f"{platform}/tasks/marketing_audience"),
            ["Lineage of marketing.audience", "crm.learners.email (DIRECT IDENTITY)"],
        ),
        "report-log": (
            api.ui(f"dags/{GOVERNANCE}/runs/{urllib.parse.quote(governance_run, safe='')}/tasks/write_report"),
            list(FINDING_LINES),
        ),
    }
    for name, (url, wanted) in pages.items():
        chromium.open(url)
        text = chromium.text(wanted)
        shot = chromium.screenshot(folder / f"ui-{name}.png")
        assert shot.exists() and shot.stat().st_size > 10_000, name
        for line in wanted:
            assert line in text, f"{name}: {line!r} not on the page"


def test_two_runs_of_both_dags_at_once_write_two_reports(stack):
    api, root = stack
    runs = [(api.trigger(PLATFORM, date), api.trigger(GOVERNANCE, date)) for date in CONCURRENT_DATES]
    for platform_run, governance_run in runs:
        assert api.wait_for(PLATFORM, platform_run) == "success"
        assert api.wait_for(GOVERNANCE, governance_run) == "failed"
        assert first_try_states(api, PLATFORM, platform_run) == {t: ("success", 1) for t in PLATFORM_TASKS}
        assert first_try_states(api, GOVERNANCE, governance_run) == expected_governance_states()
    reports = [json.loads(report_of(root, governance_run).read_text()) for _, governance_run in runs]
    assert [r["run_id"] for r in reports] == [governance_run for _, governance_run in runs]
    assert [r["coverage"]["target_run_id"] for r in reports] == [platform_run for platform_run, _ in runs]
    for (_, governance_run), report in zip(runs, reports, strict=True):
        summary = api.xcom(GOVERNANCE, governance_run, "write_report", "report")
        assert summary["report"] == str(report_of(root, governance_run))
        assert report["coverage"]["tasks_with_lineage"] == 9
