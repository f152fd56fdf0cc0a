"""Every DuckDB construct the issue names: traced (the oracle finds its lineage sound on DuckDB) or refused with
a LineageError sentence naming it. docs/RELIABILITY.md lists the same table."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import LineageError
from tests.support.oracle import check, shared_runner

pytestmark = pytest.mark.reliability

CTAS = "create table out.t as "
TRACED = [
    "select e.event_id, t.tag from learning.events e, unnest(e.tags) as t(tag)",
    "select e.event_id, t.tag from learning.events e cross join unnest(e.tags) as t(tag)",
    "select e.event_type, count(*) as n from learning.events e, unnest(e.tags) as u(tag) group by all",
    "select e.event_id, unnest(e.tags) as tag from learning.events e",
    "select [l.email, l.full_name] as pair, struct_pack(a := l.country) as s, {'k': l.status} as k from crm.learners l",
    "select {'k': l.email}.k as k from crm.learners l",
    "select * exclude (email) from crm.learners",
    "select * replace (upper(email) as email) from crm.learners",
    "select l.* from crm.learners l",
    "select p.payment_id, p.amount from billing.payments p qualify row_number() over "
    "(partition by p.learner_id order by p.paid_at) = 1",
    "select p.payment_id from billing.payments p order by all limit 3",
    "select p.payment_id as x from billing.payments p order by x + p.amount limit 3",
    "select p.payment_id, p.amount as a from billing.payments p order by -a limit 3",
    "select p.learner_id, sum(p.amount) as s from billing.payments p group by all order by all",
    "select distinct on (p.learner_id) p.learner_id, p.amount from billing.payments p order by p.learner_id, p.paid_at",
    "select distinct on (p.learner_id) p.amount from billing.payments p order by p.learner_id, p.paid_at",
    "select s.learner_id from (select distinct p.learner_id, p.course_id from billing.payments p) s",
    "select s.learner_id from (select p.learner_id, p.course_id from billing.payments p union "
    "select r.payment_id, r.payment_id from billing.refunds r) s",
    "select l.email from crm.learners l union select t.subject from support.tickets t",
    "select l.email from crm.learners l union all select t.subject from support.tickets t",
    "select p.payment_id, count(distinct p.course_id) over (partition by p.learner_id) as n from billing.payments p",
    "select l.learner_id, (select max(p.amount) from billing.payments p where p.learner_id = l.learner_id) as m "
    "from crm.learners l",
    "select l.email, x.n from crm.learners l, lateral (select count(*) as n from billing.payments p "
    "where p.learner_id = l.learner_id) x",
    "select p.payment_id, l.email from billing.payments p asof join crm.learners l "
    "on p.learner_id = l.learner_id and p.paid_at >= l.created_at",
    "select p.payment_id, l.email from billing.payments p positional join crm.learners l",
    "select p.payment_id from billing.payments p order by p.paid_at limit 5 offset 2",
    "select p.payment_id, sum(p.amount) over w as s from billing.payments p "
    "window w as (partition by p.learner_id order by p.paid_at)",
    "select p.payment_id from billing.payments p qualify row_number() over w = 1 "
    "window w as (partition by p.learner_id order by p.paid_at)",
    "select p.payment_id, row_number() over (w order by p.paid_at) as r from billing.payments p "
    "window w as (partition by p.learner_id)",
    "select (p.amount) from billing.payments p",
    "select distinct(p.status) from billing.payments p",
    'select p.amount as "Excess Discount Amount", p.status as Status from billing.payments p',
]
NAMED_BY_BINDING = [
    "select s.* from (select trim(l.full_name), upper(l.email) from crm.learners l) s",
    "select s.* from (select p.*, p.* from billing.payments p) s",
    "select q.* from (select * from (select p.*, p.status from billing.payments p) s order by all limit 3) q",
    "select columns('.*mail') from (select l.email, t.subject as email from crm.learners l, support.tickets t "
    "where t.learner_id = l.learner_id) s",
    "with w as (select l.learner_id, l.email as contact from crm.learners l) select columns('.*_id'), w.contact from w",
    "select e.event_id, u.tag from learning.events e, unnest(e.tags) as u(tag) where columns('event_type') like '%1%'",
    "(select l.email as e from crm.learners l) union all by name "
    "(select upper(t.subject), t.subject as e from support.tickets t)",
]
"""Subquery outputs DuckDB names itself (unnamed, or sharing a name) and COLUMNS(...) over a subquery, CTE or
UNNEST: the names asked of DuckDB."""
REFUSED = [
    ("select * from (pivot billing.payments on status using sum(amount))", "PIVOT or UNPIVOT"),
    ("unpivot crm.learners on full_name, email into name k value v", "does not parse"),
    ("select {'e': l.email, 'n': l.full_name}.* from crm.learners l", ".* over a value"),
    ("select s.* from (select {'e': l.email, 'n': l.full_name}.* from crm.learners l) s", ".* over a value"),
    ("select s.* from (select {'e': l.email, 'n': l.full_name}.* as x from crm.learners l) s", ".* over a value"),
    (
        "select p.payment_id, sum(p.amount) over v as s from billing.payments p "
        "window w as (partition by p.learner_id order by p.paid_at)",
        "named WINDOW",
    ),
    ("select l.email from crm.learners l cross join lateral read_text('/etc/hostname') f", "not a catalog table"),
    ("select * from read_csv('/etc/passwd')", "not a catalog table"),
    ("select u.x from crm.learners l, unnest([1, 2]) with ordinality as u(x, i)", "not a catalog table"),
]


NAMED_BY_DUCKDB = [
    ("select sum(p.amount) from billing.payments p", ["sum(p.amount)"]),
    ("select p.amount, p.amount from billing.payments p", ["amount", "amount_1"]),
    ("select p.amount as a, p.status as A from billing.payments p", ["a", "A_1"]),
    ("select count(*), p.status from billing.payments p group by p.status", ["count_star()", "status"]),
    ("select * from billing.payments p join billing.refunds r on r.payment_id = p.payment_id", None),
    ("select q.Total from (select sum(p.amount) as Total from billing.payments p) q", ["Total"]),
    ("select s.* from (select md5(p.status), p.payment_id from billing.payments p) s", ["md5(p.status)", "payment_id"]),
    ("with w as (select upper(l.email), l.country from crm.learners l) select * from w", ["upper(l.email)", "country"]),
    ("select cast(p.amount as int) from billing.payments p", ["CAST(p.amount AS INTEGER)"]),
    (
        "select p.payment_id, sum(p.amount) over (order by p.paid_at) from billing.payments p",
        ["payment_id", "sum(p.amount) OVER (ORDER BY p.paid_at)"],
    ),
]
"""Outputs DuckDB names itself (an unaliased expression, a duplicate name): the oracle checks the names against
DESCRIBE of DuckDB's own CREATE TABLE ... AS, and the lineage stays sound."""


@pytest.mark.parametrize(("sql", "names"), NAMED_BY_DUCKDB)
def test_output_named_by_duckdb_is_read_and_sound(sql, names):
    verdict = check(CTAS + sql, shared_runner())
    assert verdict.refused is None
    assert verdict.violations == []
    assert verdict.lineage is not None
    written = [column.name for column in verdict.lineage.columns]
    if names is not None:
        assert written == names
    else:
        assert len(written) == len({name.lower() for name in written})


@pytest.mark.parametrize("sql", TRACED + NAMED_BY_BINDING)
def test_construct_is_traced_and_sound(sql):
    verdict = check(CTAS + sql, shared_runner())
    assert verdict.refused is None
    assert verdict.violations == []


@pytest.mark.parametrize(("sql", "named"), REFUSED)
def test_construct_is_refused_with_a_sentence(sql, named):
    verdict = check(CTAS + sql, shared_runner())
    assert isinstance(verdict.refused, LineageError)
    assert named in str(verdict.refused)
    assert str(verdict.refused).startswith("out.t: ")


def test_unnest_of_a_list_column_is_exact():
    verdict = check(CTAS + TRACED[0], shared_runner())
    assert verdict.lineage is not None
    tag = verdict.lineage.column("tag")
    assert [(str(d.source), d.type, d.subtype) for d in tag.inputs] == [
        ("learning.events.tags", "DIRECT", "TRANSFORMATION")
    ]
    assert [(str(d.source), d.type) for d in verdict.lineage.rows] == [("learning.events.tags", "INDIRECT")]


def test_a_named_window_is_read_as_written_inline():
    verdict = check(CTAS + next(q for q in TRACED if "over w as s" in q), shared_runner())
    assert verdict.lineage is not None
    assert {(str(d.source), d.subtype) for d in verdict.lineage.column("s").inputs} == {
        ("billing.payments.amount", "AGGREGATION"),
        ("billing.payments.learner_id", "WINDOW"),
        ("billing.payments.paid_at", "WINDOW"),
    }


def test_output_names_are_duckdbs():
    verdict = check(CTAS + TRACED[-1], shared_runner())
    assert verdict.lineage is not None
    assert [c.name for c in verdict.lineage.columns] == ["Excess Discount Amount", "Status"]


def test_distinct_on_keys_shape_the_rows():
    verdict = check(CTAS + TRACED[15], shared_runner())
    assert verdict.lineage is not None
    assert "billing.payments.learner_id" in {str(d.source) for d in verdict.lineage.rows}
