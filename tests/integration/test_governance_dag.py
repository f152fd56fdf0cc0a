"""The nightly governance DAG through real Airflow: the sensor reads the scheduler's task states through the
Task SDK and the events the OpenLineage provider really wrote (or did not)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.store.lineage_store import LineageStore
from learning_platform.seed import seed_platform
from tests.store.conftest import new_schema
from tests.support.sandbox import demo_pythonpath

pytestmark = pytest.mark.integration

PLATFORM_TASKS = [
    "birthday_offers",
    "course_performance",
    "daily_revenue",
    "learner_activity",
    "learner_dim",
    "learner_erasure",
    "marketing_audience",
    "marketing_export",
    "review_corpus",
]


def governance_env(sandbox, events_path=None) -> dict[str, str]:
    return {
        "LINEAGE_GOVERNANCE_WAIT_SECONDS": "6",
        "LINEAGE_GOVERNANCE_POKE_SECONDS": "2",
        "LINEAGE_GOVERNANCE_REPORT_DIR": str(sandbox.root / "report"),
        "LINEAGE_GOVERNANCE_EVENTS": str(events_path or sandbox.events_path),
    }


def run_report(folder, dag_id, log: str):
    """Returns the report file of the run whose log is `log`: <report folder>/<dag_id>/<run_id>/, the run id
    read from the path the log names."""
    found = re.search(r"Report written to (\S+governance-report\.json)", log)
    assert found, log[-3000:]
    path = Path(found.group(1))
    assert path.parent.parent == folder / dag_id and path.exists()
    return path


def run_governance(sandbox, dag_id="lineage_governance", events_path=None, **env):
    run = sandbox.dags_test(dag_id, **governance_env(sandbox, events_path), **env)
    report_path = run_report(sandbox.root / "report", dag_id, run.log)
    run.report_path = report_path
    return run, json.loads(report_path.read_text())


def kinds(report: dict, kind: str) -> list[dict]:
    return [f for f in report["findings"] if f["kind"] == kind]


def test_clean_run_reports_only_the_platforms_real_problems(platform_run):
    sandbox, _ = platform_run
    run, report = run_governance(sandbox)
    assert run.returncode != 0  # error findings fail the run, so Airflow's alerting fires
    assert "governance error findings" in run.log
    assert kinds(report, "missing_complete") == []
    assert kinds(report, "unaccounted_table") == [{"kind": "unaccounted_table", "table": "marketing.campaign_list"}]
    assert {
        (f["column"], f["decided_by"]["source"], f["decided_by"]["subtype"])
        for f in kinds(report, "understated_classification")
    } == {
        ("marketing.birthday_offers.learner_id", "crm.learners.date_of_birth", "FILTER"),
        ("marketing.birthday_offers.country", "crm.learners.date_of_birth", "FILTER"),
    }
    assert [f["table"] for f in kinds(report, "missing_metadata")] == ["ai.review_corpus", "marketing.audience"]
    assert kinds(report, "missing_metadata")[1]["proposals"]["email"] == "personal"
    assert len(report["findings"]) == 1 + 2 + 2
    assert set(report) == {"dag_id", "run_id", "logical_date", "findings", "coverage"}
    coverage = report["coverage"]
    assert (coverage["tasks_scheduled"], coverage["tasks_with_lineage"], coverage["parse_failures"]) == (9, 9, 0)
    markdown = run.report_path.with_suffix(".md").read_text()
    assert "marketing.campaign_list: in the catalog, but no declared source" in markdown
    assert "marketing.campaign_list: in the catalog" in run.log  # the report is shown in the task log


SYNCED = re.compile(
    r"Synced into the lineage store (\S+): \S+(?: \(read from byte \d+\))?: (\d+) read, (\d+) added, "
    r"(\d+) already in the store, 0 malformed"
)


def test_the_lineage_is_synced_into_the_store_and_a_second_run_reads_it_there(platform_run, tmp_path):
    sandbox, _ = platform_run
    before = sandbox.events_path.read_text().splitlines()
    run, report = run_governance(sandbox)
    store = sandbox.root / "report" / "lineage-store.duckdb"  # the default store, inside the report folder
    [(where, read, added, kept)] = SYNCED.findall(run.log)
    # an earlier governance run over this sandbox may have synced the file already: read from where it stopped
    assert where == str(store) and int(added) + int(kept) == int(read)
    keys = {(e["run"]["runId"], e["eventType"], e["eventTime"]) for e in map(json.loads, before)}
    with LineageStore.open(store, read_only=True) as lineage:
        stored = set(lineage.engine.query("SELECT run_id, event_type, event_time FROM events"))
        platform_jobs = {name for (name,) in lineage.engine.query("SELECT name FROM jobs")}
    assert keys <= stored and "platform_nightly.course_performance" in platform_jobs
    assert report["coverage"]["events_read"] >= len(before)
    with LineageStore.open(store, read_only=True) as lineage:  # the run's findings, beside its report file
        recorded = lineage.latest_governance_run("lineage_governance")
        assert recorded is not None and recorded.run_id == report["run_id"]
        kept_findings = lineage.governance_findings("lineage_governance", report["run_id"])
        assert [f.fields for f in kept_findings] == report["findings"]
        assert f"Findings recorded in the lineage store {store}" in run.log
    again, second = run_governance(sandbox)
    [(_, read, added, kept)] = SYNCED.findall(again.log)
    # the file is read from where the first sync stopped: only the events written since, none stored already
    assert int(kept) == 0 and int(added) == int(read) < len(before)
    assert re.search(r"Synced into the lineage store \S+: \S+ \(read from byte [1-9]\d*\)", again.log)
    assert kinds(second, "unaccounted_table") == kinds(report, "unaccounted_table")
    assert [f["kind"] for f in second["findings"]] == [f["kind"] for f in report["findings"]]


def test_a_store_on_postgresql_gives_the_same_report_and_keeps_its_password_out_of_the_log(platform_run, postgres_url):
    sandbox, _ = platform_run
    location = new_schema(postgres_url)
    password = urlsplit(location).password
    run, report = run_governance(sandbox, AIRFLOW__LINEAGE_GOVERNANCE__STORE=location)
    [(where, read, added, kept)] = SYNCED.findall(run.log)
    assert where == f"postgresql://lineage@127.0.0.1:{urlsplit(location).port}/lineage"
    assert password and password not in run.log and int(added) == int(read) and int(kept) == 0
    _, on_duckdb = run_governance(sandbox)
    assert report["findings"] == on_duckdb["findings"]
    with LineageStore.open(location) as lineage:
        assert lineage.engine.dialect == "postgres" and lineage.stats()["rows"]["events"] == int(added)


def test_one_tasks_events_removed_is_exactly_that_task(platform_run):
    sandbox, run = platform_run
    kept = [line for line in run.events_path.read_text().splitlines() if '"platform_nightly.review_corpus"' not in line]
    partial = sandbox.root / "partial-events.jsonl"
    partial.write_text("\n".join(kept) + "\n")
    _, report = run_governance(sandbox, events_path=partial)
    missing = kinds(report, "missing_complete")
    assert [(m["job"], m["task_id"], m["state"]) for m in missing] == [
        ("platform_nightly.review_corpus", "review_corpus", "success")
    ]


def test_a_backend_that_is_down_is_one_finding_not_false_unaccounted_tables(platform_run):
    # With Marquez unreachable, unaccounted was computed from an empty graph: 6 of 7 findings were false.
    sandbox, _ = platform_run
    run, report = run_governance(sandbox, events_path="http://127.0.0.1:9")
    assert run.returncode != 0
    assert sorted(m["task_id"] for m in kinds(report, "missing_complete")) == PLATFORM_TASKS
    unavailable = kinds(report, "lineage_unavailable")
    assert len(unavailable) == 1 and "Marquez at http://127.0.0.1:9 is unreachable" in unavailable[0]["reason"]
    assert unavailable[0]["skipped"] == ["understated_classification", "unaccounted_table", "missing_metadata"]
    assert kinds(report, "unaccounted_table") == kinds(report, "understated_classification") == []
    assert kinds(report, "missing_metadata") == []
    assert "is unreachable" in report["coverage"]["lineage_backend"]


@pytest.mark.parametrize(
    "lineage_off",
    [
        {"OPENLINEAGE_DISABLED": "true"},
        # No retries: with the HTTP transport's default retries each of the 14 events waits about 10 s.
        {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {
                    "type": "http",
                    "url": "http://127.0.0.1:9",
                    "timeout": 1,
                    "retry": {"total": 0, "connect": 0, "read": 0},
                }
            )
        },
        # A file transport that cannot write: its folder is a regular file (root ignores read-only modes).
        {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": "{root}/blocked/events.jsonl"}
            )
        },
        # A backend that accepts the connection and never answers: each event waits out the transport's timeout.
        {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "http", "url": "{silent}", "timeout": 1, "retry": {"total": 0, "connect": 0, "read": 0}}
            )
        },
    ],
    ids=["disabled", "dead-endpoint", "unwritable-file", "silent-endpoint"],
)
def test_lost_lineage_makes_every_platform_task_missing(sandbox, lineage_off):
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.copy_repo_dags()
    (sandbox.root / "blocked").write_text("not a folder")
    silent = socket.create_server(("127.0.0.1", 0), backlog=64)  # listens, never accepts a request's answer
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    lineage_off = {k: v.replace("{root}", str(sandbox.root)).replace("{silent}", url) for k, v in lineage_off.items()}
    try:
        platform = sandbox.dags_test("platform_nightly", **lineage_off)
    finally:
        silent.close()
    assert platform.returncode == 0, platform.log[-3000:]
    assert not sandbox.events_path.exists()
    run, report = run_governance(sandbox)
    assert run.returncode != 0
    assert sorted(m["task_id"] for m in kinds(report, "missing_complete")) == PLATFORM_TASKS
    assert report["coverage"]["tasks_with_lineage"] == 0


TARGET_DAG = """
from datetime import datetime, timedelta
from airflow.sdk import DAG, task
from airflow.sdk.exceptions import AirflowSkipException
from airflow_lineage_governance.dags.governance import governance_dag
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("target", schedule="0 2 * * *", start_date=datetime(2026, 9, 1), catchup=False) as target:
    IcebergSqlOperator(task_id="good",
                       sql="create or replace table marketing.ok as select l.learner_id from crm.learners l")
    IcebergSqlOperator(task_id="broken", sql="create table marketing.typo as select l.emial from crm.learners l")

    @task
    def skipped():
        raise AirflowSkipException("nothing to do today")

    @task(retries=1, retry_delay=timedelta(0))
    def flaky(**context):
        if context["ti"].try_number == 1:
            raise RuntimeError("first try fails")
        return "ok"

    skipped()
    flaky()

governance = governance_dag("target_governance", "target", schedule="0 2 * * *", start_date=datetime(2026, 9, 1))
"""


def test_failed_and_skipped_tasks_are_not_missing_and_retries_match_the_final_try(sandbox):
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.write_dag("target", TARGET_DAG)
    target = sandbox.dags_test("target")
    assert "first try fails" in target.log
    run, report = run_governance(sandbox, dag_id="target_governance")
    assert kinds(report, "missing_complete") == []
    assert report["coverage"]["parse_failures"] == 1
    assert report["coverage"]["tasks_succeeded"] == 2  # good, flaky (on its second try)
    flaky = [e for e in target.events if e["job"]["name"] == "target.flaky" and e["eventType"] == "COMPLETE"]
    assert [e["run"]["facets"]["airflow"]["taskInstance"]["try_number"] for e in flaky] == [2]


def test_demo_with_lineage_disabled_reports_every_platform_task(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}
    env.update(
        {
            "OPENLINEAGE_DISABLED": "true",
            "LINEAGE_GOVERNANCE_DEMO_DIR": str(tmp_path / "demo"),
            "LINEAGE_GOVERNANCE_WAIT_SECONDS": "4",
            "PYTHONPATH": demo_pythonpath(),
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "learning_platform.demo"], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [report_path] = (tmp_path / "demo" / "lineage_governance").glob("*/governance-report.json")
    report = json.loads(report_path.read_text())
    assert sorted(m["task_id"] for m in kinds(report, "missing_complete")) == PLATFORM_TASKS
    assert "no COMPLETE lineage event arrived" in done.stdout
