"""One parsed Statement for everything downstream; nested namespaces; no statement text in any log line."""

from __future__ import annotations

import logging
import threading

import pytest

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.kinds import EdgeType, StatementKind, Subtype
from airflow_lineage_governance.lineage import (
    LineageError,
    UnknownColumnError,
    UnknownTableError,
    column_lineage,
    parse_statement,
    redacted_sql,
    runnable_select,
    schema_from_nested,
)
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.lineage import fields, rows

NESTED = {
    TableRef(("a", "b"), "src"): {"id": "long", "email": "string", "country": "string"},
    TableRef(("crm",), "learners"): {"learner_id": "long", "country": "string"},
}


def test_parse_statement_carries_kind_target_sources_and_tree():
    statement = parse_statement(
        "insert into analytics.daily_revenue (day) with c as (select 1 as x) "
        "select cast(p.paid_at as date) from billing.payments p join c on true "
        "join refunds r on true"
    )
    assert statement.kind is StatementKind.INSERT
    assert statement.target == TableRef(("analytics",), "daily_revenue")
    assert statement.target_columns == ("day",)
    assert statement.sources == (TableRef(("billing",), "payments"),)
    assert statement.unplaced is True  # `refunds` has no namespace; `c` is a CTE
    assert statement.tables == (TableRef(("analytics",), "daily_revenue"), TableRef(("billing",), "payments"))


def test_one_statement_serves_lineage_runnable_select_and_redaction_without_changing(schema):
    sql = (
        "create table out.t as select l.email, p.amount from crm.learners l "
        "join payments p on p.learner_id = l.learner_id where l.status = 'secret'"
    )
    statement = parse_statement(sql)
    before = statement.tree.sql()
    first = column_lineage(statement, schema)
    assert runnable_select(statement, schema) == runnable_select(sql, schema)
    assert "billing.payments" in runnable_select(statement, schema)
    assert redacted_sql(statement) == redacted_sql(sql) and "secret" not in redacted_sql(statement)
    again = column_lineage(statement, schema)
    assert statement.tree.sql() == before
    assert first == again == column_lineage(sql, schema)
    assert fields(first) == fields(again)


def test_kinds_and_names_are_typed(schema):
    lineage = column_lineage(
        "create table out.t as select md5(l.email) as h from crm.learners l where l.country = 'x'", schema
    )
    assert lineage.kind is StatementKind.CREATE_TABLE_AS
    assert lineage.target == TableRef(("out",), "t")
    (dependency,) = lineage.column("h").inputs
    assert dependency.source == ColumnRef(TableRef(("crm",), "learners"), "email")
    assert (dependency.type, dependency.subtype, dependency.masking) == (EdgeType.DIRECT, Subtype.TRANSFORMATION, True)
    assert lineage.to_dict()["sources"] == ["crm.learners"]


def test_a_two_level_namespace_is_read_end_to_end():
    sql = (
        "create table a.b.out as select s.id, upper(s.email) as email, l.learner_id from a.b.src s "
        "join crm.learners l on l.country = s.country where s.id > 3"
    )
    lineage = column_lineage(sql, NESTED)
    assert lineage.target == TableRef(("a", "b"), "out")
    assert lineage.sources == (TableRef(("a", "b"), "src"), TableRef(("crm",), "learners"))
    assert fields(lineage) == {
        "id": ["a.b.src.id DIRECT IDENTITY"],
        "email": ["a.b.src.email DIRECT TRANSFORMATION"],
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY"],
    }
    assert rows(lineage) == ["a.b.src.country JOIN", "a.b.src.id FILTER", "crm.learners.country JOIN"]
    assert lineage.column("id").inputs[0].source.table.namespace == ("a", "b")
    runnable = runnable_select(sql, NESTED)
    assert "FROM a.b.src AS s" in runnable and "crm.learners AS l" in runnable


def test_a_nested_table_named_without_namespace_and_an_insert_into_one():
    schema = {**NESTED, TableRef(("a", "b"), "out"): {"id": "long", "email": "string"}}
    lineage = column_lineage("insert into a.b.out select s.id, s.email from src s", schema)
    assert lineage.sources == (TableRef(("a", "b"), "src"),)
    assert "FROM a.b.src AS s" in runnable_select("insert into a.b.out select s.id, s.email from src s", schema)
    with pytest.raises(UnknownColumnError) as raised:
        column_lineage("create table a.b.out2 as select s.emial from a.b.src s", NESTED)
    assert str(raised.value) == "a.b.out2: a.b.src has no column emial; check the spelling against the catalog."
    with pytest.raises(UnknownTableError) as raised:
        column_lineage("create table a.b.out2 as select s.id from a.c.src s", NESTED)
    assert str(raised.value) == (
        "a.b.out2: the catalog has no table a.c.src; check the name, or create the table before this task runs."
    )


def test_a_namespace_deeper_than_duckdb_names_is_a_sentence():
    with pytest.raises(UnknownTableError) as raised:
        parse_statement("create table out.t as select x.id from w.x.y.z x")
    assert str(raised.value) == (
        "out.t: w.x.y.z has a namespace of 3 levels, and DuckDB names at most 2; keep the "
        "table in a namespace of one or two levels."
    )
    with pytest.raises(UnknownTableError, match="w.x.y.z has a namespace of 3 levels"):
        parse_statement("create table w.x.y.z as select 1 as a")


def test_the_json_schema_form_converts_once():
    nested = {"crm": {"Learners": {"Email": "string"}}, "a.b": {"src": {"id": "long"}}}
    assert schema_from_nested(nested) == {
        TableRef(("crm",), "Learners"): {"Email": "string"},
        TableRef(("a", "b"), "src"): {"id": "long"},
    }
    lineage = column_lineage("create table a.b.t as select l.email, s.id from crm.learners l, a.b.src s", nested)
    assert [str(d.source) for c in lineage.columns for d in c.inputs] == ["crm.learners.email", "a.b.src.id"]


def test_errors_share_the_package_root():
    assert issubclass(LineageError, LineageGovernanceError)
    with pytest.raises(LineageGovernanceError):
        parse_statement("truncate crm.learners")


def test_no_statement_text_reaches_a_log_line_and_the_logger_level_is_left_alone(caplog):
    logger = logging.getLogger("sqlglot")
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG):
            for sql in (
                "create table out.t as select 'zz-secret' as x from crm.learners l pivot wibble",
                "insert into out.t select 'zz-secret' ;; garbage 'zz-secret'",
                "create table out.t as select l.email from crm.learners l where l.emial = 'zz-secret'",
            ):
                with pytest.raises(LineageError):
                    column_lineage(sql, {TableRef(("crm",), "learners"): {"email": "string"}})
                redacted_sql(sql)
        assert "zz-secret" not in caplog.text
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(logging.NOTSET)


def test_statements_read_at_once_on_many_threads_log_no_text_and_leave_the_logger_level_alone(caplog):
    logger = logging.getLogger("sqlglot")
    logger.setLevel(logging.DEBUG)
    hostile = "create table out.t as select 'zz-secret' as x from crm.learners l pivot wibble"
    schema = {TableRef(("crm",), "learners"): {"email": "string"}}

    def read_many() -> None:
        for _ in range(150):
            with pytest.raises(LineageError):
                column_lineage(hostile, schema)
            redacted_sql(hostile)

    try:
        with caplog.at_level(logging.DEBUG):
            threads = [threading.Thread(target=read_many) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert "zz-secret" not in caplog.text
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(logging.NOTSET)
