"""Every kind of LineageError, with the sentence a DAG author reads."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import (
    AmbiguousColumnError,
    BindError,
    ColumnCountError,
    LineageError,
    SqlSyntaxError,
    UnknownColumnError,
    UnknownTableError,
    UnplaceableSourceError,
    UnsupportedStatementError,
)
from tests.support.lineage import read

CASES = [
    (
        "merge into analytics.learner_activity a using crm.learners l on a.learner_id = l.learner_id "
        "when matched then update set country = l.country",
        UnknownTableError,
        "analytics.learner_activity: the catalog has no table analytics.learner_activity to merge into; ",
    ),
    (
        "truncate crm.learners",
        UnsupportedStatementError,
        "crm.learners: lineage is read only from CREATE ... AS SELECT, INSERT ... SELECT, MERGE, UPDATE and DELETE, "
        "not from TRUNCATE; ",
    ),
    ("drop table crm.learners", UnsupportedStatementError, "not from DROP"),
    ("select * from crm.learners", UnsupportedStatementError, "not from SELECT"),
    (
        "create view out.v as select l.email from crm.learners l",
        UnsupportedStatementError,
        "not from CREATE VIEW without AS SELECT",
    ),
    (
        "insert into analytics.daily_revenue values (current_date, 1.0)",
        UnsupportedStatementError,
        "not from INSERT ... VALUES",
    ),
    (
        "create table out.t as select emial from crm.learners",
        UnknownColumnError,
        "out.t: crm.learners has no column emial; check the spelling against the catalog.",
    ),
    (
        "create table out.t as select l.emial from crm.learners l",
        UnknownColumnError,
        "out.t: crm.learners has no column emial",
    ),
    (
        "create table out.t as with c as (select l.email from crm.learners l) select c.emial from c",
        UnknownColumnError,
        "out.t: the CTE c has no column emial",
    ),
    (
        "create table out.t as select l.email from crm.learners l where l.statuss = 'x'",  # codespell:ignore statuss
        UnknownColumnError,
        "out.t: crm.learners has no column statuss",  # codespell:ignore statuss
    ),
    (
        "create table out.t as with c as (select l.email from crm.learners l where l.contry = 'x') "  # codespell:ignore
        "select c.email from c",
        UnknownColumnError,
        "out.t: crm.learners has no column contry",  # codespell:ignore contry
    ),
    (
        "create table out.t as select l.email from crm.learners l join billing.payments p "
        "on p.learner_id = l.learner_id order by status",
        AmbiguousColumnError,
        "out.t: the column status could come from crm.learners or billing.payments; qualify it",
    ),
    (
        "create table out.t as select status from crm.learners l join billing.payments p "
        "on p.learner_id = l.learner_id",
        AmbiguousColumnError,
        "could come from crm.learners or billing.payments",
    ),
    (
        "create table out.t as select x.email from crm.learners l",
        UnplaceableSourceError,
        "out.t: x.email names x, which is no table",
    ),
    (
        "create table out.t as select * from read_parquet('/tmp/x.parquet')",
        UnplaceableSourceError,
        "is not a catalog table",
    ),
    (
        "create table out.t as select u.x from crm.learners l, unnest([1, 2]) with ordinality as u(x, i)",
        UnplaceableSourceError,
        "which is not a catalog table",
    ),
    (
        "create table out.t as select t.a from nowhere.things t",
        UnknownTableError,
        "out.t: the catalog has no table nowhere.things",
    ),
    (
        "create table out.t as select t.a from things t",
        UnknownTableError,
        "out.t: the table things is in no namespace of the catalog",
    ),
    (
        "insert into analytics.missing select 1",
        UnknownTableError,
        "analytics.missing: the catalog has no table analytics.missing to insert into",
    ),
    (
        "insert into analytics.daily_revenue select cast(p.paid_at as date), sum(p.amount), count(*) "
        "from billing.payments p group by 1",
        ColumnCountError,
        "analytics.daily_revenue: the INSERT writes 2 columns, and its SELECT has 3 values",
    ),
    (
        "insert into analytics.daily_revenue (day) select cast(p.paid_at as date), 1 from billing.payments p",
        ColumnCountError,
        "the INSERT writes 1 columns, and its SELECT has 2 values",
    ),
    (
        "insert into analytics.daily_revenue (dy) select cast(p.paid_at as date) from billing.payments p",
        UnknownColumnError,
        "analytics.daily_revenue has no column dy",
    ),
    (
        "create table out.t as select l.country, l.full_name, count(*) from crm.learners l group by l.country",
        BindError,
        'out.t: DuckDB cannot bind the query (Binder Error: column "full_name" must appear in the GROUP BY '
        "clause or must be part of an aggregate function); fix the statement.",
    ),
    (
        "create table out.t as select l.email from crm.learners l where l.learner_id::int + 'ann@example.com' > 0",
        BindError,
        "out.t: DuckDB cannot bind the query (Binder Error: Could not choose a best candidate function for "
        'the function call "+(INTEGER, STRING_LITERAL)". In order to select one, please add explicit type casts); fix '
        "the statement.",
    ),
    ("create table t as select l.email from crm.learners l", UnknownTableError, "t: the target names no namespace"),
    ("create table out.t as selec l.email from crm.learners l", SqlSyntaxError, "does not parse"),
    (
        "create table out.t as select 1 as a; create table out.u as select 2 as b",
        UnsupportedStatementError,
        "the text holds 2 statements",
    ),
]


@pytest.mark.parametrize(("sql", "kind", "sentence"), CASES, ids=[c[2][:40] for c in CASES])
def test_error_names_target_table_and_column(sql, kind, sentence, schema):
    with pytest.raises(kind) as raised:
        read(sql, schema)
    assert isinstance(raised.value, LineageError)
    assert sentence in str(raised.value)
    assert str(raised.value).count("\n") == 0 and str(raised.value).endswith(".")


def test_a_statement_kind_not_read_is_refused_before_the_parser_runs(schema):
    # Not even valid SQL after the keyword: the refusal must come from the statement kind alone.
    with pytest.raises(UnsupportedStatementError, match="not from ALTER"):
        read("alter table a.b using ((( nonsense", schema)


def test_duckdbs_sentence_keeps_no_quoted_value():
    from airflow_lineage_governance.lineage.binding import duckdb_sentence

    error = ValueError("Conversion Error: Could not convert string 'ann@example.com' to INT32\nLINE 1: ...")
    assert duckdb_sentence(error) == "Conversion Error: Could not convert string ? to INT32"
