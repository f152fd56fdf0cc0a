"""The provider at home in a running Airflow: the platform and governance DAGs triggered through the REST API
of a real api-server, run by a real scheduler (LocalExecutor), their results read back through the API."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.scheduler

PLATFORM = "platform_nightly"
GOVERNANCE = "lineage_governance"
LOGICAL_DATE = "2026-10-01T02:00:00+00:00"


def test_platform_and_governance_run_under_a_real_scheduler(stack):
    api, root = stack
    platform_run = api.trigger(PLATFORM, LOGICAL_DATE)
    governance_run = api.trigger(GOVERNANCE, LOGICAL_DATE)

    assert api.wait_for(PLATFORM, platform_run) == "success"
    assert api.wait_for(GOVERNANCE, governance_run) == "failed"  # error findings fail it, so alerting fires

    tasks = api.task_instances(PLATFORM, platform_run)
    assert {t: (ti["state"], ti["try_number"]) for t, ti in tasks.items()} == {
        t: ("success", 1) for t in ("birthday_offers", "course_performance", "daily_revenue", "learner_activity",
                                    "marketing_audience", "marketing_export", "review_corpus")}
    governance = api.task_instances(GOVERNANCE, governance_run)
    assert governance["wait_for_lineage"]["state"] == "success"
    assert governance["run_checks"]["state"] == "success"
    assert governance["write_report"]["state"] == "failed"

    log = api.log(PLATFORM, platform_run, "marketing_audience")
    assert "Lineage of marketing.audience" in log
    assert "email" in log and "crm.learners.email (DIRECT IDENTITY)" in log

    report = json.loads(next((root / "reports").rglob("governance-report.json")).read_text())
    errors = [f["kind"] for f in report["findings"] if f["kind"] != "missing_metadata"]
    assert sorted(errors) == ["unaccounted_table", "understated_classification", "understated_classification"]
    assert report["coverage"]["tasks_with_lineage"] == 7
