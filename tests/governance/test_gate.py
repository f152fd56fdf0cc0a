"""The CI gate: columns a SQL change alters or removes, with their impact in the received lineage."""

from __future__ import annotations

from airflow_lineage_governance.governance.gate import changed_columns, gate
from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.refs import ColumnRef
from tests.support.events import complete, output
from tests.support.governance import stored_governance_of

C = ColumnRef.parse
SCHEMA = {"crm": {"learners": {"learner_id": "bigint", "email": "string", "country": "string"}}}
BEFORE = "create table marketing.offers as select l.learner_id, l.country from crm.learners l"


def test_changed_and_removed_columns():
    before = column_lineage(BEFORE, SCHEMA)
    after = column_lineage(
        "create table marketing.offers as select l.learner_id, upper(l.country) as country from crm.learners l", SCHEMA
    )
    assert changed_columns(before, after) == [(C("marketing.offers.country"), "changed")]
    assert changed_columns(before, None) == [
        (C("marketing.offers.learner_id"), "removed"),
        (C("marketing.offers.country"), "removed"),
    ]
    assert changed_columns(before, before) == []


def test_gate_scores_each_change_by_its_impact(tmp_path):
    governance = stored_governance_of(
        tmp_path, complete("p.report", output("analytics.report", {"country": ["marketing.offers.country"]}))
    )
    changes = gate(governance, column_lineage(BEFORE, SCHEMA), None)
    assert [(str(c.column), c.change, c.score) for c in changes] == [
        ("marketing.offers.learner_id", "removed", 0.0),
        ("marketing.offers.country", "removed", 1.0),
    ]
    assert changes[0].impact is None
    assert changes[1].to_dict()["impact"]["columns_reached"] == ["analytics.report.country"]
    assert changes[1].to_dict()["column"] == "marketing.offers.country"
