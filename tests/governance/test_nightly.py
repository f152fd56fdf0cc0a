"""The nightly report: the sensor's verdict and the received lineage, as findings and coverage."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from airflow_lineage_governance.governance.nightly import nightly_report
from airflow_lineage_governance.governance.report import GovernanceReport
from tests.support.events import complete, event, extraction_error, output
from tests.support.governance import governance_of


def test_a_report_of_the_verdict_and_the_lineage(tmp_path):
    governance = governance_of(
        tmp_path,
        complete(
            "p.offers",
            output(
                "marketing.offers", {"country": ["crm.learners.country"], "learner_id": ["crm.learners.learner_id"]}
            ),
            dag_run="run-1",
        ),
        event("FAIL", "p.broken", dag_run="run-1", run_facets=extraction_error()),
    )
    missing = {"kind": "missing_complete", "job": "p.late", "task_id": "late", "try_number": 1, "state": "success"}
    verdict = {
        "target_dag_id": "p",
        "target_run_id": "run-1",
        "finished": True,
        "backend_problem": None,
        "task_states": {"offers": "success", "late": "success", "broken": "failed"},
        "missing": [missing],
    }
    report = nightly_report(
        verdict,
        governance,
        ["crm.learners", "marketing.offers", "marketing.stray"],
        dag_id="lineage_governance",
        run_id="manual__1",
        logical_date="2026-10-01",
        now=datetime(2026, 10, 1, 3, tzinfo=UTC),
    )
    assert [f.to_dict() for f in report.findings] == [
        missing,
        {"kind": "unaccounted_table", "table": "marketing.stray"},
    ]
    assert report.coverage == {
        "target_dag_id": "p",
        "target_run_id": "run-1",
        "tasks_scheduled": 3,
        "tasks_succeeded": 2,
        "tasks_with_lineage": 1,
        "columns_with_lineage": 2,
        "parse_failures": 1,
        "events_of_target_run": 2,
        "events_read": 2,
        "events_malformed": 0,
        "events_duplicated": 0,
        "events_late": 0,
        "events_other_namespace": 0,
        "lineage_backend": "reachable",
        "event_source": "in-process",
        "runs_with_lineage_share": 0.5,
        "complete_runs_checked": 1,
        "complete_runs_missing_inputs": ["p.offers"],
        "complete_runs_missing_outputs": [],
        "complete_runs_missing_versions": ["p.offers"],
        "freshness_days": 7,
        "tables_without_recent_edges": ["crm.learners", "marketing.stray"],
        "parse_failures_in_events": 1,
    }
    assert len(report.errors) == 2
    assert GovernanceReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_an_unfinished_target_and_an_unreachable_backend(tmp_path):
    governance = governance_of(tmp_path)
    verdict = {
        "target_dag_id": "p",
        "target_run_id": None,
        "finished": False,
        "backend_problem": "no run of p exists for the logical date 2026-10-01T00:00:00+00:00",
        "task_states": {},
        "missing": [],
    }
    report = nightly_report(
        verdict,
        governance,
        ["crm.learners"],
        dag_id="g",
        run_id="r",
        logical_date="l",
        backend_problem="Marquez at http://x is unreachable.",
    )
    assert [f.to_dict() for f in report.findings] == [
        {
            "kind": "target_run_unfinished",
            "dag_id": "p",
            "run_id": None,
            "reason": "no run of p exists for the logical date 2026-10-01T00:00:00+00:00",
        },
        {
            "kind": "lineage_unavailable",
            "source": "in-process",
            "reason": "Marquez at http://x is unreachable.",
            "skipped": ["understated_classification", "unaccounted_table", "missing_metadata"],
        },
    ]
    assert report.coverage["lineage_backend"] == "Marquez at http://x is unreachable."
    assert report.coverage["tasks_scheduled"] == 0 and report.coverage["target_run_id"] == ""
