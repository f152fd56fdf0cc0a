"""Hostile statements: the engine answers or raises LineageError within bounded time and memory, never
another exception. Bounds set here: 10 s and 300 MB for a 1 MB statement; statements over 2,000,000
characters or with queries nested more than 120 deep are refused with a sentence."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from airflow_lineage_governance.lineage import LineageError, StatementTooLargeError, column_lineage
from airflow_lineage_governance.refs import ColumnRef
from learning_platform.tables import lineage_schema

pytestmark = pytest.mark.reliability
SCHEMA = lineage_schema()


def bounded(sql: str, schema=SCHEMA, seconds: float = 10.0, megabytes: float = 300.0):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        return column_lineage(sql, schema)
    finally:
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        assert elapsed < seconds, f"{elapsed:.1f} s"
        assert peak < megabytes, f"{peak:.0f} MB"


def test_a_one_megabyte_statement_is_read():
    values = ",".join(f"'user{i}@example.com'" for i in range(45_000))
    sql = f"create table out.t as select l.email from crm.learners l where l.email not in ({values})"
    assert len(sql) > 1_000_000
    lineage = bounded(sql)
    assert [f"{d.source} {d.subtype}" for d in lineage.rows] == ["crm.learners.email FILTER"]


def test_a_statement_past_the_size_bound_is_refused():
    sql = "create table out.t as select l.email from crm.learners l where l.email <> '" + "x" * 2_000_001 + "'"
    with pytest.raises(StatementTooLargeError, match="more than the 2,000,000 read"):
        bounded(sql)


def test_subqueries_nested_200_deep_are_refused_with_a_sentence():
    sql = "create table out.t as " + "select s.email from (" * 200 + "select l.email from crm.learners l" + ") s" * 200
    with pytest.raises(StatementTooLargeError, match="nested more than 120 deep; flatten the subqueries into CTEs"):
        bounded(sql)


def test_subqueries_nested_100_deep_are_read():
    sql = "create table out.t as " + "select s.email from (" * 100 + "select l.email from crm.learners l" + ") s" * 100
    lineage = bounded(sql)
    assert [d.source for d in lineage.column("email").inputs] == [ColumnRef.parse("crm.learners.email")]


def test_expressions_nested_3000_deep_raise_lineage_error_not_recursion_error():
    sql = "create table out.t as select " + "(" * 3000 + "l.email" + ")" * 3000 + " as e from crm.learners l"
    with pytest.raises(LineageError):
        bounded(sql)


def test_two_thousand_columns():
    columns = ", ".join(f"l.learner_id + {i} as c{i}" for i in range(2000))
    lineage = bounded(f"create table out.t as select {columns} from crm.learners l", seconds=5)
    assert len(lineage.columns) == 2000 and lineage.column("c1999").inputs[0].subtype == "TRANSFORMATION"


def test_unicode_and_quoted_identifiers():
    schema = {"crm": {"élèves": {"prénom": "string", "Order Id": "long", "e-mail": "string"}}}
    lineage = bounded(
        'create table out."Tabelle" as select e."prénom", e."Order Id" as "Bestell Nr", '
        'e."e-mail" from crm."élèves" e where e."e-mail" like ?',
        schema,
    )
    # DuckDB keeps a quoted alias as written, so the written table has the column "Bestell Nr".
    assert [c.name for c in lineage.columns] == ["prénom", "Bestell Nr", "e-mail"]
    assert lineage.column("Bestell Nr").inputs[0].source == ColumnRef.parse("crm.élèves.order id")
