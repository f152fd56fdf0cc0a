"""The names DuckDB gives a subquery's outputs, asked of DuckDB: an unnamed output (`"trim"(full_name)`), outputs
that share a name (`x`, `x_1` in a derived table), and COLUMNS(...) over a subquery, a CTE or an UNNEST, each
read edge by edge; what DuckDB cannot name on its own is still refused with one sentence."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import LineageError, UnsupportedConstructError, column_lineage
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from tests.support.lineage import fields, rows

SCHEMA = {
    "crm": {"learners": {"learner_id": "long", "full_name": "string", "email": "string", "country": "string"}},
    "support": {"tickets": {"ticket_id": "long", "learner_id": "long", "subject": "string"}},
    "learning": {"events": {"event_id": "long", "event_type": "string", "tags": "list<string>"}},
}
CTAS = "create table out.t as "


def test_an_unnamed_output_of_a_subquery_is_read_by_duckdbs_name():
    lineage = column_lineage(
        CTAS + 'select s."""trim""(l.full_name)" as name, s."upper(l.email)" '
        "from (select trim(l.full_name), upper(l.email) from crm.learners l) s",
        SCHEMA,
    )
    assert [output.name for output in lineage.columns] == ["name", "upper(l.email)"]
    assert fields(lineage) == {
        "name": ["crm.learners.full_name DIRECT TRANSFORMATION"],
        "upper(l.email)": ["crm.learners.email DIRECT TRANSFORMATION"],
    }
    assert rows(lineage) == []


def test_an_unnamed_output_of_a_by_name_branch_is_matched_by_duckdbs_name():
    lineage = column_lineage(
        CTAS + "(select l.email as e from crm.learners l) union all by name "
        "(select upper(t.subject), t.subject as e from support.tickets t)",
        SCHEMA,
    )
    assert fields(lineage) == {
        "e": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"],
        "upper(t.subject)": ["support.tickets.subject DIRECT TRANSFORMATION"],
    }


def test_outputs_sharing_a_name_in_a_derived_table_are_read_as_duckdb_renames_them():
    lineage = column_lineage(
        CTAS + "select s.* from (select l.*, t.learner_id, t.subject as email from crm.learners l "
        "join support.tickets t on t.learner_id = l.learner_id) s",
        SCHEMA,
    )
    assert fields(lineage) == {
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY"],
        "full_name": ["crm.learners.full_name DIRECT IDENTITY"],
        "email": ["crm.learners.email DIRECT IDENTITY"],
        "country": ["crm.learners.country DIRECT IDENTITY"],
        "learner_id_1": ["support.tickets.learner_id DIRECT IDENTITY"],
        "email_1": ["support.tickets.subject DIRECT IDENTITY"],
    }
    assert rows(lineage) == ["crm.learners.learner_id JOIN", "support.tickets.learner_id JOIN"]


def test_a_star_over_a_derived_table_of_two_stars_reads_every_renamed_column():
    lineage = column_lineage(CTAS + "select * from (select t.*, * from support.tickets t) s", SCHEMA)
    assert fields(lineage) == {
        "ticket_id": ["support.tickets.ticket_id DIRECT IDENTITY"],
        "learner_id": ["support.tickets.learner_id DIRECT IDENTITY"],
        "subject": ["support.tickets.subject DIRECT IDENTITY"],
        "ticket_id_1": ["support.tickets.ticket_id DIRECT IDENTITY"],
        "learner_id_1": ["support.tickets.learner_id DIRECT IDENTITY"],
        "subject_1": ["support.tickets.subject DIRECT IDENTITY"],
    }


def test_columns_over_a_subquery_expands_to_its_columns_duckdb_matches():
    lineage = column_lineage(
        CTAS + "select columns('.*mail') from (select l.email, t.subject as email from crm.learners l, "
        "support.tickets t where t.learner_id = l.learner_id) s",
        SCHEMA,
    )
    assert fields(lineage) == {
        "email": ["crm.learners.email DIRECT IDENTITY"],
        "email_1": ["support.tickets.subject DIRECT IDENTITY"],
    }
    assert rows(lineage) == ["crm.learners.learner_id FILTER", "support.tickets.learner_id FILTER"]


def test_columns_over_a_cte_expands_to_its_columns():
    lineage = column_lineage(
        CTAS + "with w as (select l.learner_id, l.email as contact from crm.learners l) "
        "select columns('.*_id'), w.contact from w",
        SCHEMA,
    )
    assert fields(lineage) == {
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY"],
        "contact": ["crm.learners.email DIRECT IDENTITY"],
    }


def test_columns_in_a_where_over_an_unnest_is_the_and_of_its_columns():
    lineage = column_lineage(
        CTAS + "select e.event_id, u.tag from learning.events e, unnest(e.tags) as u(tag) "
        "where columns('^(event_type|tag)$') like '%1%'",
        SCHEMA,
    )
    assert fields(lineage) == {
        "event_id": ["learning.events.event_id DIRECT IDENTITY"],
        "tag": ["learning.events.tags DIRECT TRANSFORMATION"],
    }
    assert rows(lineage) == [
        "learning.events.event_type FILTER",
        "learning.events.tags FILTER",
        "learning.events.tags JOIN",
    ]
    facet = column_lineage_facet(lineage, "iceberg")
    assert {
        name: [(f.name, f.field, [(t.type, t.subtype) for t in f.transformations]) for f in field.inputFields]
        for name, field in facet.fields.items()
    } == {
        "event_id": [("learning.events", "event_id", [("DIRECT", "IDENTITY")])],
        "tag": [("learning.events", "tags", [("DIRECT", "TRANSFORMATION")])],
    }
    assert [(f.name, f.field, sorted((t.type, t.subtype) for t in f.transformations)) for f in facet.dataset] == [
        ("learning.events", "event_type", [("INDIRECT", "FILTER")]),
        ("learning.events", "tags", [("INDIRECT", "FILTER"), ("INDIRECT", "JOIN")]),
    ]


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        (
            "select columns('.*mail.*') from (select upper(l.email), l.full_name from crm.learners l) s",
            "out.t: the query uses COLUMNS(...) over a source whose columns DuckDB cannot name on their own (a "
            "correlated subquery, a table function, or a subquery output named after its expression); name the "
            "columns.",
        ),
        (
            "select l.learner_id, k.* from crm.learners l, lateral (select columns('.*_id') from support.tickets t "
            "join (select t2.subject from support.tickets t2 where t2.learner_id = l.learner_id) x on true) k",
            "out.t: the query uses COLUMNS(...) over a source whose columns DuckDB cannot name on their own (a "
            "correlated subquery, a table function, or a subquery output named after its expression); name the "
            "columns.",
        ),
    ],
)
def test_columns_over_a_source_duckdb_cannot_name_alone_is_refused(query, sentence):
    with pytest.raises(UnsupportedConstructError) as raised:
        column_lineage(CTAS + query, SCHEMA)
    assert str(raised.value) == sentence


def test_an_outer_reference_to_a_name_duckdb_does_not_give_is_still_refused():
    with pytest.raises(LineageError, match=r"^out\.t: the subquery s has no column trim\(l\.full_name\)"):
        column_lineage(
            CTAS + 'select s."trim(l.full_name)" from (select trim(l.full_name) from crm.learners l) s', SCHEMA
        )
