"""The nightly report with a design: the differences as warning findings, told by the scheduler's task states."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from airflow_lineage_governance.governance.nightly import nightly_report
from airflow_lineage_governance.governance.report import GovernanceReport, markdown
from airflow_lineage_governance.graph.design import TaskSql, design_lineage
from tests.support.design import CHANGED, OFFERS, SCHEMA, run_event
from tests.support.events import NS
from tests.support.governance import synced_lineage

WEEKEND = "create or replace table marketing.weekend as select l.learner_id from crm.learners l"


def test_design_differences_are_warnings_and_a_skipped_task_is_a_branch_not_taken(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(run_event("p.offers", CHANGED, "2026-10-01T02:00:00Z", "r1")) + "\n")
    (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (tmp_path / "metadata.toml").write_text(
        '[tables."crm.learners"]\nsource = true\n[tables."marketing.offers"]\nowner = "m"\n'
    )
    governance, _ = synced_lineage(
        tmp_path, events, rules_path=tmp_path / "lineage.toml", metadata_path=tmp_path / "metadata.toml"
    )
    design = design_lineage(
        [
            TaskSql("p", "offers", sql=OFFERS),
            TaskSql("p", "weekend", sql=WEEKEND),
            TaskSql("p", "gone", sql=WEEKEND.replace("weekend", "gone")),
        ],
        SCHEMA,
    )
    verdict = {
        "target_dag_id": "p",
        "target_run_id": "scheduled__1",
        "finished": True,
        "backend_problem": None,
        "task_states": {"offers": "success", "weekend": "skipped", "gone": "success"},
        "missing": [],
    }
    report = nightly_report(
        verdict,
        governance,
        ["crm.learners", "marketing.offers"],
        dag_id="g",
        run_id="r",
        logical_date="l",
        design=design,
        now=datetime(2026, 10, 1, 3, tzinfo=UTC),
    )
    assert report.errors == []
    found = [(f.kind, f.job or str(f.table)) for f in report.findings]
    assert found == [
        ("sql_hash_mismatch", "p.offers"),
        ("designed_not_observed", "p.gone"),
        ("designed_not_observed", "p.offers"),
        ("observed_not_designed", "p.offers"),
        ("designed_not_observed", "p.weekend"),
        ("designed_not_observed", "marketing.gone"),
        ("designed_not_observed", "marketing.weekend"),
    ]
    reasons = {
        f.job: f.evidence["reason"]
        for f in report.findings
        if f.job and "reason" in f.evidence and f.kind == "designed_not_observed"
    }
    assert reasons["p.weekend"].endswith("a branch not taken")
    assert reasons["p.gone"].endswith("a collection gap")
    assert "other SQL" in reasons["p.offers"]
    assert (report.coverage["design_tasks_compared"], report.coverage["design_differences"]) == (3, 7)
    assert GovernanceReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    text = markdown(report)
    assert "## sql hash mismatch (warning)\n- p.offers: the deployed SQL is " in text
    assert "- design differences: 7\n" in text
    unreachable = nightly_report(
        verdict,
        governance,
        [],
        dag_id="g",
        run_id="r",
        logical_date="l",
        design=design,
        backend_problem="Marquez at http://x is unreachable.",
    )
    assert [f.kind for f in unreachable.findings] == ["lineage_unavailable"]  # no design diff over no lineage
