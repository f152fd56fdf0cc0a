"""DuckDB binds a MERGE, UPDATE or DELETE over empty tables of the catalog's schemas before its lineage is read: a
statement it cannot bind is refused with DuckDB's own first line, and one it binds keeps its facet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openlineage.client.serde import Serde

from airflow_lineage_governance.lineage import BindError
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from tests.support.lineage import read

MERGE = "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
FACETS = Path(__file__).with_name("dml_facets.json")
"""The column lineage facet of each statement, recorded before DuckDB bound MERGE, UPDATE and DELETE."""


def refusal(problem: str) -> str:
    return f"crm.learners: DuckDB cannot bind the statement (Binder Error: {problem}); fix the statement."


NOT_FOUND = 'Referenced column "nickname" not found in FROM clause!'
NO_FUNCTION = "No function matches the given name and argument types ?. You might need to add explicit type casts"


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("update crm.learners set nickname = 'x'", "Referenced update column nickname not found in table!"),
        ("update crm.learners set email = 'x' where nickname = 'y'", NOT_FOUND),
        ("update crm.learners set email = upper(created_at)", NO_FUNCTION),
        ("update crm.learners set status = 'x' where country + 1 > 2", NO_FUNCTION),
        (
            "update crm.learners l set status = p.status from billing.payments p where q.learner_id = l.learner_id",
            'Referenced table "q" not found!',
        ),
        ("delete from crm.learners where nickname = 'x'", NOT_FOUND),
        (
            "delete from crm.learners where created_at > 3.5",
            "Cannot compare values of type TIMESTAMP and type DECIMAL(2,1) - an explicit cast is required",
        ),
        (
            "delete from crm.learners l using support.tickets t where x.learner_id = l.learner_id",
            'Referenced table "x" not found!',
        ),
        (
            "merge into crm.learners t using support.tickets s on t.learner_id = s.nickname when matched then delete",
            'Table "s" does not have a column named "nickname"',
        ),
        (
            MERGE + "when matched then update set nickname = s.subject",
            "Referenced update column nickname not found in table!",
        ),
        (MERGE + "when matched then update set email = x.subject", 'Referenced table "x" not found!'),
        (MERGE + "when matched and nickname = 'x' then delete", NOT_FOUND),
        (MERGE + "when not matched then insert (learner_id, email) values (s.learner_id, nickname)", NOT_FOUND),
    ],
    ids=lambda value: value[:60],
)
def test_a_statement_duckdb_cannot_bind_is_refused_with_duckdbs_sentence(sql, problem, schema):
    with pytest.raises(BindError) as raised:
        read(sql, schema)
    assert str(raised.value) == refusal(problem)


def test_a_literal_of_the_statement_is_not_in_duckdbs_sentence(schema):
    with pytest.raises(BindError) as raised:
        read("update crm.learners set status = 'x' where country + 'secret-value' > 2", schema)
    assert "secret-value" not in str(raised.value)


def test_parameter_markers_are_bound_as_null(schema):
    lineage = read("update crm.learners set status = ? where learner_id = ?", schema)
    assert [column.name for column in lineage.columns][:2] == ["learner_id", "full_name"]


@pytest.mark.parametrize("sql", list(json.loads(FACETS.read_text())), ids=lambda sql: sql.split()[0])
def test_a_statement_duckdb_binds_keeps_its_facet(sql, schema):
    facet = json.loads(Serde.to_json(column_lineage_facet(read(sql, schema), "iceberg://platform")))
    assert facet == json.loads(FACETS.read_text())[sql]
