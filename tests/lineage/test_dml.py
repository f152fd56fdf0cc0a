"""MERGE, UPDATE and DELETE: each rule of their column lineage on its own small statement, with exact edges, the
forms refused with their sentences, and the facet valid against the OpenLineage schema."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage import (
    BindError,
    LineageError,
    SqlSyntaxError,
    UnsupportedStatementError,
    parse_statement,
    runnable_statement,
)
from airflow_lineage_governance.refs import TableRef
from tests.support.lineage import fields, read, rows

LEARNERS = ["learner_id", "full_name", "email", "country", "marketing_consent", "status", "date_of_birth", "created_at"]


def kept(*names: str) -> dict[str, list[str]]:
    """Each named learners column kept as is."""
    return {name: [f"crm.learners.{name} DIRECT IDENTITY"] for name in names}


def others(*written: str) -> dict[str, list[str]]:
    """Every learners column but the written ones, kept as is."""
    return kept(*[name for name in LEARNERS if name not in written])


# UPDATE


def test_update_set_columns_read_their_values_and_the_where(schema):
    lineage = read("update crm.learners set email = upper(email), status = 'closed' where country = 'DE'", schema)
    assert lineage.kind == StatementKind.UPDATE and lineage.target == TableRef(("crm",), "learners")
    assert fields(lineage) == {
        **others("email", "status"),
        "email": ["crm.learners.country INDIRECT CONDITIONAL", "crm.learners.email DIRECT TRANSFORMATION"],
        "status": ["crm.learners.country INDIRECT CONDITIONAL", "crm.learners.status DIRECT IDENTITY"],
    }
    assert rows(lineage) == []
    assert [str(s) for s in lineage.sources] == ["crm.learners"]


def test_update_of_every_row_keeps_no_old_value(schema):
    lineage = read("update crm.learners set status = 'closed', email = full_name", schema)
    assert fields(lineage)["status"] == []
    assert fields(lineage)["email"] == ["crm.learners.full_name DIRECT IDENTITY"]


def test_update_from_a_join_decides_which_rows_and_gives_values(schema):
    lineage = read(
        """update crm.learners set status = p.status from billing.payments p
        where p.learner_id = learners.learner_id and p.amount > 10""",
        schema,
    )
    assert fields(lineage) == {
        **others("status"),
        "status": [
            "billing.payments.amount INDIRECT CONDITIONAL",
            "billing.payments.learner_id INDIRECT CONDITIONAL",
            "billing.payments.status DIRECT IDENTITY",
            "crm.learners.learner_id INDIRECT CONDITIONAL",
            "crm.learners.status DIRECT IDENTITY",
        ],
    }
    assert rows(lineage) == []
    assert [str(s) for s in lineage.sources] == ["crm.learners", "billing.payments"]


def test_update_from_a_subquery_its_filters_decide_the_rows(schema):
    lineage = read(
        """update crm.learners as l set country = s.top from
        (select p.learner_id, max(p.status) as top from billing.payments p where p.amount > 5 group by p.learner_id) s
        where s.learner_id = l.learner_id""",
        schema,
    )
    assert fields(lineage)["country"] == [
        "billing.payments.amount INDIRECT CONDITIONAL",
        "billing.payments.learner_id INDIRECT CONDITIONAL",
        "billing.payments.status DIRECT AGGREGATION",
        "crm.learners.country DIRECT IDENTITY",
        "crm.learners.learner_id INDIRECT CONDITIONAL",
    ]


def test_update_with_a_correlated_subquery_in_set_and_where(schema):
    lineage = read(
        """update crm.learners l set email = (select max(t.subject) from support.tickets t
        where t.learner_id = l.learner_id) where exists (select 1 from billing.payments p
        where p.learner_id = l.learner_id and p.status = 'failed')""",
        schema,
    )
    assert fields(lineage)["email"] == [
        "billing.payments.learner_id INDIRECT CONDITIONAL",
        "billing.payments.status INDIRECT CONDITIONAL",
        "crm.learners.email DIRECT IDENTITY",
        "crm.learners.learner_id INDIRECT CONDITIONAL",
        "crm.learners.learner_id INDIRECT FILTER",
        "support.tickets.learner_id INDIRECT FILTER",
        "support.tickets.subject DIRECT AGGREGATION",
    ]


def test_update_with_a_cte_and_a_tuple_assignment(schema):
    lineage = read(
        """with paid as (select p.learner_id, p.status from billing.payments p where p.amount > 1)
        update crm.learners set (status, country) = (paid.status, 'DE') from paid
        where paid.learner_id = learners.learner_id""",
        schema,
    )
    assert fields(lineage)["status"] == [
        "billing.payments.amount INDIRECT CONDITIONAL",
        "billing.payments.learner_id INDIRECT CONDITIONAL",
        "billing.payments.status DIRECT IDENTITY",
        "crm.learners.learner_id INDIRECT CONDITIONAL",
        "crm.learners.status DIRECT IDENTITY",
    ]
    assert "billing.payments.status DIRECT IDENTITY" not in fields(lineage)["country"]


def test_update_masks_a_column_only_when_no_row_keeps_it_raw(schema):
    everywhere = read("update crm.learners set email = md5(email)", schema)
    assert fields(everywhere)["email"] == ["crm.learners.email DIRECT TRANSFORMATION masked"]
    some = read("update crm.learners set email = md5(email) where marketing_consent", schema)
    assert fields(some)["email"] == [
        "crm.learners.email DIRECT TRANSFORMATION",
        "crm.learners.marketing_consent INDIRECT CONDITIONAL",
    ]


# DELETE


def test_delete_keeps_every_column_and_its_condition_filters_rows(schema):
    lineage = read("delete from crm.learners where status = 'closed' and marketing_consent", schema)
    assert lineage.kind == StatementKind.DELETE
    assert fields(lineage) == others()
    assert rows(lineage) == ["crm.learners.marketing_consent FILTER", "crm.learners.status FILTER"]


def test_delete_using_and_subqueries_filter_rows(schema):
    lineage = read(
        """delete from crm.learners l using billing.payments p where p.learner_id = l.learner_id
        and p.status = 'failed' and l.email in (select t.subject from support.tickets t where t.status = 'open')""",
        schema,
    )
    assert fields(lineage) == others()
    assert rows(lineage) == [
        "billing.payments.learner_id FILTER",
        "billing.payments.status FILTER",
        "crm.learners.email FILTER",
        "crm.learners.learner_id FILTER",
        "support.tickets.status FILTER",
        "support.tickets.subject FILTER",
    ]
    assert [str(s) for s in lineage.sources] == ["crm.learners", "billing.payments", "support.tickets"]


def test_delete_of_every_row(schema):
    lineage = read("delete from crm.learners", schema)
    assert fields(lineage) == others() and rows(lineage) == []


# MERGE

UPSERT = """merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id
    when matched and s.status = 'resolved' then update set status = s.status, email = s.subject
    when not matched then insert (learner_id, full_name) values (s.learner_id, upper(s.body))"""


def test_merge_upsert(schema):
    lineage = read(UPSERT, schema)
    assert lineage.kind == StatementKind.MERGE
    assert fields(lineage) == {
        **others("learner_id", "full_name", "status", "email"),
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY", "support.tickets.learner_id DIRECT IDENTITY"],
        "full_name": ["crm.learners.full_name DIRECT IDENTITY", "support.tickets.body DIRECT TRANSFORMATION"],
        "status": [
            "crm.learners.status DIRECT IDENTITY",
            "support.tickets.status DIRECT IDENTITY",
            "support.tickets.status INDIRECT CONDITIONAL",
        ],
        "email": [
            "crm.learners.email DIRECT IDENTITY",
            "support.tickets.status INDIRECT CONDITIONAL",
            "support.tickets.subject DIRECT IDENTITY",
        ],
    }
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "support.tickets.learner_id JOIN"]
    assert [str(s) for s in lineage.sources] == ["crm.learners", "support.tickets"]


def test_merge_conditional_delete_shapes_rows_and_a_later_clause_depends_on_it(schema):
    lineage = read(
        """merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id
        when matched and s.status = 'open' then update set status = 'open'
        when matched and t.country = 'DE' then delete
        when matched then update set email = s.subject""",
        schema,
    )
    assert rows(lineage) == [
        "crm.learners.country CONDITIONAL",
        "crm.learners.learner_id JOIN",
        "support.tickets.learner_id JOIN",
        "support.tickets.status CONDITIONAL",
    ]
    assert fields(lineage)["email"] == ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"]
    assert fields(lineage)["status"] == ["crm.learners.status DIRECT IDENTITY"]


def test_merge_condition_is_conditional_on_the_columns_its_clause_and_later_ones_write(schema):
    lineage = read(
        """merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id
        when matched and t.country = 'DE' then update set status = s.status
        when matched then update set email = s.subject""",
        schema,
    )
    assert fields(lineage)["status"] == [
        "crm.learners.country INDIRECT CONDITIONAL",
        "crm.learners.status DIRECT IDENTITY",
        "support.tickets.status DIRECT IDENTITY",
    ]
    assert fields(lineage)["email"] == [
        "crm.learners.country INDIRECT CONDITIONAL",
        "crm.learners.email DIRECT IDENTITY",
        "support.tickets.subject DIRECT IDENTITY",
    ]
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "support.tickets.learner_id JOIN"]


def test_merge_that_rewrites_or_deletes_every_row_keeps_no_old_value(schema):
    lineage = read(
        """merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id
        when matched then update set email = s.subject when not matched by source then delete""",
        schema,
    )
    assert fields(lineage)["email"] == ["support.tickets.subject DIRECT IDENTITY"]
    assert fields(lineage)["status"] == ["crm.learners.status DIRECT IDENTITY"]


def test_merge_do_nothing_with_a_condition_decides_the_later_update(schema):
    lineage = read(
        """merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id
        when matched and s.status = 'open' then do nothing
        when matched then update set email = s.subject
        when not matched by source and t.marketing_consent then update set full_name = upper(t.email)""",
        schema,
    )
    assert fields(lineage)["email"] == [
        "crm.learners.email DIRECT IDENTITY",
        "support.tickets.status INDIRECT CONDITIONAL",
        "support.tickets.subject DIRECT IDENTITY",
    ]
    assert fields(lineage)["full_name"] == [
        "crm.learners.email DIRECT TRANSFORMATION",
        "crm.learners.full_name DIRECT IDENTITY",
        "crm.learners.marketing_consent INDIRECT CONDITIONAL",
    ]
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "support.tickets.learner_id JOIN"]


def test_merge_insert_star_and_update_set_star_write_by_position(schema):
    lineage = read(
        """merge into crm.learners t using (select l.learner_id, l.email as full_name, l.full_name as email,
        l.country, l.marketing_consent, l.status, l.date_of_birth, l.created_at from crm.learners l
        where l.status = 'active') s on t.learner_id = s.learner_id
        when matched then update set * when not matched then insert *""",
        schema,
    )
    assert fields(lineage)["full_name"] == [
        "crm.learners.email DIRECT IDENTITY",
        "crm.learners.full_name DIRECT IDENTITY",
    ]
    assert fields(lineage)["email"] == ["crm.learners.email DIRECT IDENTITY", "crm.learners.full_name DIRECT IDENTITY"]
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "crm.learners.status FILTER"]


def test_merge_insert_values_by_position_and_a_cte_source(schema):
    lineage = read(
        """with s as (select p.learner_id, p.status from billing.payments p)
        merge into analytics.daily_revenue t using s on t.day = cast(s.learner_id as date)
        when not matched then insert values (cast(s.learner_id as date), 1.0)""",
        schema,
    )
    assert fields(lineage) == {
        "day": ["analytics.daily_revenue.day DIRECT IDENTITY", "billing.payments.learner_id DIRECT TRANSFORMATION"],
        "revenue_usd": ["analytics.daily_revenue.revenue_usd DIRECT IDENTITY"],
    }
    assert rows(lineage) == ["analytics.daily_revenue.day JOIN", "billing.payments.learner_id JOIN"]


# USING (columns), DEFAULT and RETURNING


def test_merge_using_columns_joins_on_them_and_an_unqualified_key_is_the_sources(schema):
    lineage = read(
        "merge into crm.learners t using support.tickets s using (learner_id) "
        "when matched and learner_id > 3 then update set email = s.subject "
        "when not matched then insert (learner_id, full_name, status) values (learner_id, body, status) "
        "when not matched by source then update set country = upper(status)",
        schema,
    )
    assert fields(lineage) == {
        **others("learner_id", "full_name", "email", "status", "country"),
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY", "support.tickets.learner_id DIRECT IDENTITY"],
        "full_name": ["crm.learners.full_name DIRECT IDENTITY", "support.tickets.body DIRECT IDENTITY"],
        "email": [
            "crm.learners.email DIRECT IDENTITY",
            "support.tickets.learner_id INDIRECT CONDITIONAL",
            "support.tickets.subject DIRECT IDENTITY",
        ],
        "status": ["crm.learners.status DIRECT IDENTITY", "support.tickets.status DIRECT IDENTITY"],
        "country": ["crm.learners.country DIRECT IDENTITY", "crm.learners.status DIRECT TRANSFORMATION"],
    }
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "support.tickets.learner_id JOIN"]


def test_set_to_default_writes_null_and_keeps_the_column_where_the_where_leaves_rows(schema):
    lineage = read("update crm.learners set email = default, status = 'x' where country = 'DE'", schema)
    assert fields(lineage)["email"] == [
        "crm.learners.country INDIRECT CONDITIONAL",
        "crm.learners.email DIRECT IDENTITY",
    ]
    lineage = read(
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert (learner_id, email) values (s.learner_id, default)",
        schema,
    )
    assert fields(lineage)["email"] == ["crm.learners.email DIRECT IDENTITY"]
    assert "SET email = DEFAULT" in runnable_statement(
        parse_statement("update crm.learners set email = default"), schema
    )


@pytest.mark.parametrize(
    "sql",
    [
        "update crm.learners set email = upper(email) where country = 'DE'",
        "delete from crm.learners l using billing.payments p where p.learner_id = l.learner_id",
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then update set email = s.subject when not matched then insert (learner_id) values (s.ticket_id)",
    ],
)
def test_returning_leaves_the_lineage_of_the_statement_without_it(sql, schema):
    returning = read(f"{sql} returning *", schema)
    plain = read(sql, schema)
    assert (fields(returning), rows(returning), returning.sources) == (fields(plain), rows(plain), plain.sources)


# Refused forms

AMBIGUOUS_STATUS = (
    'crm.learners: DuckDB cannot bind the statement (Binder Error: Ambiguous reference to column name "status" '
    "(use: ? or ?)); fix the statement."
)

REFUSED = [
    (
        "delete from crm.learners l returning (select max(t.subject) from support.tickets t)",
        UnsupportedStatementError,
        "the RETURNING of a DELETE reads a subquery",
    ),
    (
        "merge into crm.learners t using support.tickets s using (learner_id) "
        "when matched then update set status = status",
        BindError,
        AMBIGUOUS_STATUS,
    ),
    (
        "update crm.learners set emial = null",
        BindError,
        "crm.learners: DuckDB cannot bind the statement (Binder Error: Referenced update column emial not found in "
        "table!); fix the statement.",
    ),
    (
        "update crm.learners set email = emial",
        BindError,
        'crm.learners: DuckDB cannot bind the statement (Binder Error: Referenced column "emial" not found in FROM '
        "clause!); fix the statement.",
    ),
    (
        "update crm.learners set email = 'a', email = 'b'",
        BindError,
        'crm.learners: DuckDB cannot bind the statement (Binder Error: Multiple assignments to same column "email"); '
        "fix the statement.",
    ),
    (
        "update crm.learners set (email, status) = (select t.subject, t.status from support.tickets t)",
        UnsupportedStatementError,
        "a SET assignment that is not column = value",
    ),
    (
        "update crm.learners l set status = p.status from billing.payments p, support.tickets t "
        "where p.learner_id = l.learner_id and t.learner_id = l.learner_id and status = 'x'",
        BindError,
        AMBIGUOUS_STATUS,
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert by name",
        UnsupportedStatementError,
        "crm.learners: an INSERT of a MERGE by name",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert by position",
        UnsupportedStatementError,
        "crm.learners: an INSERT of a MERGE by name, by position or of DEFAULT VALUES is not read",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then update by name",
        UnsupportedStatementError,
        "the statement: DuckDB reads it, but the lineage engine does not read this form of it (",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then error 'a learner is there already'",
        UnsupportedStatementError,
        "the statement: DuckDB reads it, but the lineage engine does not read this form of it (",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then update bye name",
        SqlSyntaxError,
        "the statement: the statement does not parse as duckdb SQL (",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert default values",
        UnsupportedStatementError,
        "DEFAULT VALUES is not read",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then delete when matched then update set email = s.subject",
        UnsupportedStatementError,
        "a WHEN MATCHED clause follows an unconditional one",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert *",
        BindError,
        'crm.learners: DuckDB cannot bind the statement (Binder Error: table "learners" has 8 columns but 6 values '
        "were supplied); fix the statement.",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert (learner_id, email) values (s.learner_id)",
        BindError,
        "crm.learners: DuckDB cannot bind the statement (Binder Error: Column name/value mismatch for insert on "
        '"learners": expected 2 columns but 1 values were supplied); fix the statement.',
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then update set email = s.subjet",  # codespell:ignore subjet
        BindError,
        'crm.learners: DuckDB cannot bind the statement (Binder Error: Table "s" does not have a column named '
        '"subjet"); fix the statement.',  # codespell:ignore subjet
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when matched then update set status = status",
        BindError,
        AMBIGUOUS_STATUS,
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched then insert (learner_id, email) values (s.learner_id, t.email)",
        UnsupportedStatementError,
        "a WHEN NOT MATCHED clause reads t.email, and its rows have no target row",
    ),
    (
        "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
        "when not matched by source and s.status = 'open' then delete",
        UnsupportedStatementError,
        "a WHEN NOT MATCHED BY SOURCE clause reads s.status, and its rows have no source row",
    ),
    (
        "merge into crm.learners t using read_csv('/etc/passwd') s on t.learner_id = s.learner_id "
        "when matched then delete",
        LineageError,
        "is not a catalog table",
    ),
    (
        "delete from crm.learners where learner_id in (select learner_id from nowhere.things)",
        LineageError,
        "the catalog has no table nowhere.things",
    ),
    (
        "update crm.learners set email = 'x'; delete from crm.learners",
        UnsupportedStatementError,
        "the text holds 2 statements",
    ),
    ("with q as (delete from crm.learners returning *) select * from q", UnsupportedStatementError, "not from WITH"),
    (
        "delete from crm.learners where learner_id in (select l.learner_id from crm.learners l pivot wibble)",
        LineageError,
        "does not parse",
    ),
]


@pytest.mark.parametrize(("sql", "kind", "sentence"), REFUSED, ids=[c[2][:40] for c in REFUSED])
def test_dml_form_refused_with_a_sentence(sql, kind, sentence, schema):
    with pytest.raises(kind) as raised:
        read(sql, schema)
    assert sentence in str(raised.value)
    assert str(raised.value).count("\n") == 0 and str(raised.value).endswith(".")


# The statement and its runnable form


def test_the_statement_says_it_reads_its_target():
    statement = parse_statement(UPSERT)
    assert statement.reads_target and statement.target == TableRef(("crm",), "learners")
    assert statement.sources == (TableRef(("support",), "tickets"),)
    assert statement.tables == (TableRef(("crm",), "learners"), TableRef(("support",), "tickets"))
    assert not parse_statement("create table out.t as select 1 as a").reads_target
    with pytest.raises(UnsupportedStatementError, match="a MERGE has no one SELECT"):
        _ = statement.query


def test_runnable_statement_names_every_table_as_duckdb_finds_it():
    schema = {
        TableRef(("a", "crm"), "learners"): {"learner_id": "long", "email": "string"},
        TableRef(("support",), "tickets"): {"learner_id": "long", "subject": "string"},
    }
    sql = (
        "merge into a.crm.learners using tickets s on learners.learner_id = s.learner_id "
        "when matched then update set email = s.subject"
    )
    assert runnable_statement(sql, schema) == (
        "MERGE INTO a.crm.learners USING support.tickets AS s ON learners.learner_id = s.learner_id "
        "WHEN MATCHED THEN UPDATE SET email = s.subject"
    )


def test_the_facet_of_each_kind_is_valid_openlineage(schema):
    from tests.lineage.test_facet import facet_json, validate

    for sql in (
        UPSERT,
        "update crm.learners set email = null where status = 'x'",
        "delete from crm.learners where status = 'x'",
    ):
        data = facet_json(sql, schema)
        validate(data)
        assert sorted(data["fields"]) == sorted(LEARNERS)
    dataset = facet_json("delete from crm.learners where status = 'x'", schema)["dataset"]
    assert [(d["field"], d["transformations"][0]["subtype"]) for d in dataset] == [("status", "FILTER")]
