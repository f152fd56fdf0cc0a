"""Statements whose meaning only DuckDB's binding tells exactly (the names it gives, what GROUP BY ALL, ORDER BY
ALL and BY NAME expand to, which name an ORDER BY reads): each one's facet edge by edge, and the execution oracle
on DuckDB finding no violation; a statement DuckDB cannot bind is refused with DuckDB's own sentence."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import BindError
from tests.support.lineage import fields, rows
from tests.support.oracle import check, shared_runner

pytestmark = pytest.mark.reliability

CTAS = "create table out.t as "
FORMS = [
    pytest.param(
        CTAS + "select trim(l.full_name), cast(l.created_at as date) from crm.learners l",
        {
            '"trim"(l.full_name)': ["crm.learners.full_name DIRECT TRANSFORMATION"],
            "CAST(l.created_at AS date)": ["crm.learners.created_at DIRECT TRANSFORMATION"],
        },
        [],
        id="unaliased outputs named by DuckDB",
    ),
    pytest.param(
        CTAS + "select l.country, count(*) from crm.learners l group by all",
        {"country": ["crm.learners.country DIRECT IDENTITY"], "count_star()": []},
        ["crm.learners.country GROUP_BY"],
        id="GROUP BY ALL groups by the outputs that do not aggregate",
    ),
    pytest.param(
        CTAS + "select l.learner_id from crm.learners l except select p.learner_id from billing.payments p",
        {"learner_id": ["crm.learners.learner_id DIRECT IDENTITY"]},
        ["billing.payments.learner_id FILTER", "crm.learners.learner_id FILTER"],
        id="EXCEPT: the right side only filters",
    ),
    pytest.param(
        CTAS + "select l.email from crm.learners l intersect select t.subject from support.tickets t",
        {"email": ["crm.learners.email DIRECT IDENTITY"]},
        ["crm.learners.email FILTER", "support.tickets.subject FILTER"],
        id="INTERSECT: the right side only filters",
    ),
    pytest.param(
        CTAS + "select s.learner_id from (select l.learner_id, l.email from crm.learners l order by all limit 3) s",
        {"learner_id": ["crm.learners.learner_id DIRECT IDENTITY"]},
        ["crm.learners.email SORT", "crm.learners.learner_id SORT"],
        id="ORDER BY ALL with LIMIT in a subquery sorts by every output",
    ),
    pytest.param(
        CTAS + "select upper(l.full_name) as email from crm.learners l order by lower(email) limit 3",
        {"email": ["crm.learners.full_name DIRECT TRANSFORMATION"]},
        ["crm.learners.email SORT"],
        id="a name inside an ORDER BY expression is the source column",
    ),
    pytest.param(
        CTAS + "select upper(l.full_name) as email from crm.learners l order by email limit 3",
        {"email": ["crm.learners.full_name DIRECT TRANSFORMATION"]},
        ["crm.learners.full_name SORT"],
        id="a bare ORDER BY name is the output alias",
    ),
    pytest.param(
        CTAS + "select p.payment_id as x from billing.payments p order by x + p.amount limit 3",
        {"x": ["billing.payments.payment_id DIRECT IDENTITY"]},
        ["billing.payments.amount SORT", "billing.payments.payment_id SORT"],
        id="an alias no source column shadows is read inside an ORDER BY expression",
    ),
    pytest.param(
        CTAS + "select l.email as a from crm.learners l union all select upper(t.subject) from support.tickets t",
        {"a": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT TRANSFORMATION"]},
        [],
        id="a later UNION ALL branch with unaliased columns",
    ),
    pytest.param(
        CTAS + "with s as (select l.email as a from crm.learners l union all select upper(t.subject) "
        "from support.tickets t) select s.a from s",
        {"a": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT TRANSFORMATION"]},
        [],
        id="a later UNION ALL branch with unaliased columns in a CTE",
    ),
    pytest.param(
        "insert into analytics.daily_revenue by name select sum(p.amount) as revenue_usd, "
        "cast(p.paid_at as date) as day from billing.payments p group by all",
        {
            "revenue_usd": ["billing.payments.amount DIRECT AGGREGATION"],
            "day": ["billing.payments.paid_at DIRECT TRANSFORMATION"],
        },
        ["billing.payments.paid_at GROUP_BY"],
        id="INSERT BY NAME maps by name",
    ),
    pytest.param(
        "insert into analytics.daily_revenue by name select cast(p.paid_at as date) as DAY, "
        "sum(p.amount) as Revenue_USD from billing.payments p group by all",
        {
            "day": ["billing.payments.paid_at DIRECT TRANSFORMATION"],
            "revenue_usd": ["billing.payments.amount DIRECT AGGREGATION"],
        },
        ["billing.payments.paid_at GROUP_BY"],
        id="INSERT BY NAME matches names case-insensitively",
    ),
    pytest.param(
        CTAS + "select l.email, l.country from crm.learners l union all by name "
        "select t.status as country, t.subject as email from support.tickets t",
        {
            "email": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"],
            "country": ["crm.learners.country DIRECT IDENTITY", "support.tickets.status DIRECT IDENTITY"],
        },
        [],
        id="UNION ALL BY NAME matches branches by name",
    ),
    pytest.param(
        CTAS + "select l.email, l.country from crm.learners l union by name "
        "select t.subject as email, t.body from support.tickets t",
        {
            "email": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"],
            "country": ["crm.learners.country DIRECT IDENTITY"],
            "body": ["support.tickets.body DIRECT IDENTITY"],
        },
        [],
        id="UNION BY NAME adds a name only one branch has",
    ),
    pytest.param(
        CTAS + "select s.* from (select l.email, l.country from crm.learners l union all by name "
        "select t.status as Country, t.subject as email from support.tickets t) s",
        {
            "email": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"],
            "country": ["crm.learners.country DIRECT IDENTITY", "support.tickets.status DIRECT IDENTITY"],
        },
        [],
        id="UNION ALL BY NAME in a subquery",
    ),
    pytest.param(
        CTAS + "select l.email, upper(l.country) from crm.learners l union all by name "
        "select t.subject as email, upper(t.status) from support.tickets t",
        {
            "email": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"],
            "upper(l.country)": ["crm.learners.country DIRECT TRANSFORMATION"],
            "upper(t.status)": ["support.tickets.status DIRECT TRANSFORMATION"],
        },
        [],
        id="UNION ALL BY NAME keeps unnamed outputs apart under the names DuckDB gives them",
    ),
    pytest.param(
        CTAS + "select l.learner_id, l from crm.learners l",
        {
            "learner_id": ["crm.learners.learner_id DIRECT IDENTITY"],
            "l": [
                f"crm.learners.{c} DIRECT TRANSFORMATION"
                for c in (
                    "country",
                    "created_at",
                    "date_of_birth",
                    "email",
                    "full_name",
                    "learner_id",
                    "marketing_consent",
                    "status",
                )
            ],
        },
        [],
        id="a whole row is a struct of every column",
    ),
    pytest.param(
        CTAS + "select s from (select p.payment_id, upper(p.status) as st from billing.payments p) s",
        {"s": ["billing.payments.payment_id DIRECT TRANSFORMATION", "billing.payments.status DIRECT TRANSFORMATION"]},
        [],
        id="a whole row of a subquery",
    ),
    pytest.param(
        CTAS + "select x.a, x.b from crm.learners as x(a, b)",
        {"a": ["crm.learners.learner_id DIRECT IDENTITY"], "b": ["crm.learners.full_name DIRECT IDENTITY"]},
        [],
        id="a column alias list renames a table's first columns",
    ),
    pytest.param(
        CTAS + "select x.a, l.email from crm.learners l join billing.payments as x(a) on x.learner_id = l.learner_id",
        {"a": ["billing.payments.payment_id DIRECT IDENTITY"], "email": ["crm.learners.email DIRECT IDENTITY"]},
        ["billing.payments.learner_id JOIN", "crm.learners.learner_id JOIN"],
        id="a column alias list keeps the other columns' names",
    ),
    pytest.param(
        CTAS + "select * from crm.learners as x(a, b)",
        {
            "a": ["crm.learners.learner_id DIRECT IDENTITY"],
            "b": ["crm.learners.full_name DIRECT IDENTITY"],
            **{
                c: [f"crm.learners.{c} DIRECT IDENTITY"]
                for c in ("email", "country", "marketing_consent", "status", "date_of_birth", "created_at")
            },
        },
        [],
        id="a star over a column alias list",
    ),
    pytest.param(
        CTAS + "select e.event_id, u.tag from learning.events e, lateral unnest(e.tags) as u(tag)",
        {
            "event_id": ["learning.events.event_id DIRECT IDENTITY"],
            "tag": ["learning.events.tags DIRECT TRANSFORMATION"],
        },
        ["learning.events.tags JOIN"],
        id="LATERAL unnest",
    ),
    pytest.param(
        CTAS + "select e.event_id, u.tag from learning.events e cross join lateral unnest(e.tags) as u(tag)",
        {
            "event_id": ["learning.events.event_id DIRECT IDENTITY"],
            "tag": ["learning.events.tags DIRECT TRANSFORMATION"],
        },
        ["learning.events.tags JOIN"],
        id="CROSS JOIN LATERAL unnest",
    ),
    pytest.param(
        CTAS + "with recursive r(n, e) as (select 1, l.email from crm.learners l where l.learner_id = 1 "
        "union all select r.n + 1, r.e from r where r.n < 3) select r.n, r.e from r",
        {"n": [], "e": ["crm.learners.email DIRECT IDENTITY"]},
        ["crm.learners.learner_id FILTER"],
        id="WITH RECURSIVE",
    ),
    pytest.param(
        CTAS + "with recursive r(n, a, b, c) as (select 1, l.email, l.country, l.status from crm.learners l "
        "union all select r.n + 1, r.b, r.c, r.a from r where r.n < 4) select r.a from r",
        {
            "a": [
                "crm.learners.country DIRECT IDENTITY",
                "crm.learners.email DIRECT IDENTITY",
                "crm.learners.status DIRECT IDENTITY",
            ]
        },
        [],
        id="WITH RECURSIVE: the fixpoint of a rotation takes three passes",
    ),
    pytest.param(
        CTAS + "with recursive r(n, id, s) as (select 1, l.learner_id, l.full_name from crm.learners l "
        "where l.learner_id < 3 union all select r.n + 1, p.payment_id, r.s || p.status from r "
        "join billing.payments p on p.learner_id = r.id where r.n < 3) select r.s, r.id from r",
        {
            "s": ["billing.payments.status DIRECT TRANSFORMATION", "crm.learners.full_name DIRECT TRANSFORMATION"],
            "id": ["billing.payments.payment_id DIRECT IDENTITY", "crm.learners.learner_id DIRECT IDENTITY"],
        },
        [
            "billing.payments.learner_id JOIN",
            "billing.payments.payment_id JOIN",
            "crm.learners.learner_id FILTER",
            "crm.learners.learner_id JOIN",
        ],
        id="WITH RECURSIVE joining a table in its recursive part",
    ),
    pytest.param(
        CTAS + "select columns('.*_id') from billing.payments",
        {c: [f"billing.payments.{c} DIRECT IDENTITY"] for c in ("payment_id", "learner_id", "course_id")},
        [],
        id="COLUMNS of a regular expression",
    ),
    pytest.param(
        CTAS + "select p.payment_id from billing.payments p where columns('amount') > 30",
        {"payment_id": ["billing.payments.payment_id DIRECT IDENTITY"]},
        ["billing.payments.amount FILTER"],
        id="COLUMNS in WHERE",
    ),
    pytest.param(
        CTAS + "select p.status, max(columns('amount|paid_at')) from billing.payments p group by p.status",
        {
            "status": ["billing.payments.status DIRECT IDENTITY"],
            "amount": ["billing.payments.amount DIRECT AGGREGATION"],
            "paid_at": ["billing.payments.paid_at DIRECT AGGREGATION"],
        },
        ["billing.payments.status GROUP_BY"],
        id="COLUMNS inside an aggregate",
    ),
    pytest.param(
        CTAS + "select columns(*) from crm.learners l join billing.payments p on p.learner_id = l.learner_id",
        {
            **{
                c: [f"crm.learners.{c} DIRECT IDENTITY"]
                for c in (
                    "learner_id",
                    "full_name",
                    "email",
                    "country",
                    "marketing_consent",
                    "status",
                    "date_of_birth",
                    "created_at",
                )
            },
            "payment_id": ["billing.payments.payment_id DIRECT IDENTITY"],
            "learner_id_1": ["billing.payments.learner_id DIRECT IDENTITY"],
            "course_id": ["billing.payments.course_id DIRECT IDENTITY"],
            "amount": ["billing.payments.amount DIRECT IDENTITY"],
            "status_1": ["billing.payments.status DIRECT IDENTITY"],
            "paid_at": ["billing.payments.paid_at DIRECT IDENTITY"],
        },
        ["billing.payments.learner_id JOIN", "crm.learners.learner_id JOIN"],
        id="COLUMNS(*) over a join",
    ),
    pytest.param(
        CTAS + "select c.contact_id, profile.* from support.contacts c",
        {
            "contact_id": ["support.contacts.contact_id DIRECT IDENTITY"],
            "channel": ["support.contacts.profile DIRECT TRANSFORMATION"],
            "handle": ["support.contacts.profile DIRECT TRANSFORMATION"],
        },
        [],
        id="a struct column expanded with .*",
    ),
    pytest.param(
        CTAS + "select support.contacts.profile.channel from support.contacts",
        {"channel": ["support.contacts.profile DIRECT TRANSFORMATION"]},
        [],
        id="a four-part struct reference",
    ),
    pytest.param(
        CTAS + "select s.channel from (select support.contacts.profile.channel from support.contacts) s",
        {"channel": ["support.contacts.profile DIRECT TRANSFORMATION"]},
        [],
        id="a four-part struct reference in a subquery",
    ),
    pytest.param(
        CTAS + "select * from (unpivot crm.learners on full_name, email into name k value v)",
        {
            **{
                c: [f"crm.learners.{c} DIRECT IDENTITY"]
                for c in ("learner_id", "country", "marketing_consent", "status", "date_of_birth", "created_at")
            },
            "k": [],
            "v": ["crm.learners.email DIRECT IDENTITY", "crm.learners.full_name DIRECT IDENTITY"],
        },
        ["crm.learners.email FILTER", "crm.learners.full_name FILTER"],
        id="UNPIVOT: the columns into the value, their NULLs drop rows",
    ),
    pytest.param(
        CTAS + "select s.k, s.v from (unpivot support.tickets on subject, body into name k value v) s",
        {"k": [], "v": ["support.tickets.body DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"]},
        ["support.tickets.body FILTER", "support.tickets.subject FILTER"],
        id="UNPIVOT read by name",
    ),
    pytest.param(
        CTAS + "select * from (pivot billing.payments on status in ('failed', 'pending') using sum(amount) "
        "group by learner_id)",
        {
            "learner_id": ["billing.payments.learner_id DIRECT IDENTITY"],
            "failed": ["billing.payments.amount DIRECT AGGREGATION", "billing.payments.status INDIRECT FILTER"],
            "pending": ["billing.payments.amount DIRECT AGGREGATION", "billing.payments.status INDIRECT FILTER"],
        },
        ["billing.payments.learner_id GROUP_BY"],
        id="PIVOT with IN and GROUP BY",
    ),
    pytest.param(
        CTAS + "select * from (pivot billing.payments on status in ('failed', 'succeeded') using count(*))",
        {
            **{
                c: [f"billing.payments.{c} DIRECT IDENTITY"]
                for c in ("payment_id", "learner_id", "course_id", "amount", "paid_at")
            },
            "failed": ["billing.payments.status INDIRECT FILTER"],
            "succeeded": ["billing.payments.status INDIRECT FILTER"],
        },
        [f"billing.payments.{c} GROUP_BY" for c in ("amount", "course_id", "learner_id", "paid_at", "payment_id")],
        id="PIVOT with IN groups by every other column",
    ),
]


@pytest.mark.parametrize(("sql", "expected", "shaping"), FORMS)
def test_form_is_traced_exactly_and_sound(sql, expected, shaping):
    verdict = check(sql, shared_runner())
    assert verdict.refused is None
    assert verdict.violations == []
    assert verdict.lineage is not None
    assert fields(verdict.lineage) == expected
    assert list(fields(verdict.lineage)) == list(expected)
    assert rows(verdict.lineage) == shaping


def test_a_query_duckdb_cannot_bind_is_refused_with_duckdbs_sentence():
    verdict = check(CTAS + "select country, full_name, count(*) from crm.learners group by country", shared_runner())
    assert isinstance(verdict.refused, BindError)
    assert str(verdict.refused) == (
        'out.t: DuckDB cannot bind the query (Binder Error: column "full_name" must appear in the GROUP BY clause '
        "or must be part of an aggregate function); fix the statement."
    )


def test_insert_by_name_into_a_missing_column_is_refused():
    verdict = check(
        "insert into analytics.daily_revenue by name select sum(p.amount) as revenue from billing.payments p",
        shared_runner(),
    )
    assert str(verdict.refused) == (
        "analytics.daily_revenue: analytics.daily_revenue has no column revenue; name each output of an INSERT ... "
        "BY NAME after a column of the table."
    )


def test_unnest_of_a_struct_is_refused_where_duckdb_expands_it_otherwise():
    verdict = check(CTAS + "select unnest({'a': l.email, 'b': l.country}) from crm.learners l", shared_runner())
    assert str(verdict.refused) == (
        "out.t: DuckDB's result has 2 columns and the lineage read 1; name the columns "
        "the query returns instead of expanding *."
    )


def test_a_struct_star_behind_a_table_alias_is_refused_with_duckdbs_sentence():
    verdict = check(CTAS + "select c.profile.* from support.contacts c", shared_runner())
    assert str(verdict.refused) == (
        "out.t: DuckDB cannot bind the query (Parser Error: Did not expect more than one "
        "column in front of a star expression); fix the statement."
    )


def test_a_pivot_without_in_is_refused_naming_it():
    verdict = check(CTAS + "select * from (pivot billing.payments on status using sum(amount))", shared_runner())
    assert str(verdict.refused) == (
        "out.t: the query uses a PIVOT or UNPIVOT of this form, whose lineage is not traced; pivot one catalog table "
        "ON one column IN (a list of values) USING one aggregate (DuckDB names the columns of a PIVOT without IN "
        "after the values it reads), or unpivot columns INTO NAME ... VALUE one column."
    )
