"""The soundness oracle on MERGE, UPDATE and DELETE: every rule of their lineage on a hand-written statement run on
DuckDB over generated data, and generated statements (SOUNDNESS_EXAMPLES of them) each refused or sound."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from tests.soundness.conftest import EXAMPLES
from tests.soundness.dml_grammar import statement
from tests.support.dml_oracle import check_dml, shared_dml_runner
from tests.support.oracle import DuckDBRejected

pytestmark = pytest.mark.reliability

TRACED = [
    # UPDATE: SET values, WHERE, FROM joins and subqueries, CTEs, every row rewritten
    "update crm.learners set email = upper(email), full_name = 'zz' where country = 'DE'",
    "update crm.learners set email = full_name, full_name = email",
    "update crm.learners set email = 'zz'",
    "update crm.learners l set email = t.subject from support.tickets t where t.learner_id = l.learner_id",
    "update crm.learners l set email = t.subject from support.tickets t where t.ticket_id = 3",
    "update crm.learners l set email = s.top from (select p.learner_id, max(p.status) as top from billing.payments p "
    "where p.amount > 20 group by p.learner_id) s where s.learner_id = l.learner_id",
    "update crm.learners l set email = (select max(t.subject) from support.tickets t "
    "where t.learner_id = l.learner_id)",
    "update crm.learners l set full_name = 'zz' where exists (select 1 from billing.payments p "
    "where p.learner_id = l.learner_id and p.status = 'failed')",
    "update crm.learners set (email, full_name) = (full_name, 'zz') where learner_id in "
    "(select t.learner_id from support.tickets t where t.status = 'open')",
    "with paid as (select p.learner_id, p.status from billing.payments p where p.amount > 10) update crm.learners "
    "set status = paid.status from paid where paid.learner_id = learners.learner_id",
    "update crm.learners set email = case when marketing_consent then email else md5(email) end",
    "update billing.payments set amount = amount * 2 where status = 'failed' and paid_at > '2024-01-10'",
    "update crm.learners set email = md5(email) where marketing_consent",
    # DELETE: the condition, USING, subqueries, every row
    "delete from crm.learners where status = 'closed' or marketing_consent",
    "delete from crm.learners l using billing.payments p where p.learner_id = l.learner_id and p.status = 'failed'",
    "delete from crm.learners where learner_id in (select t.learner_id from support.tickets t where t.status = 'open')",
    "delete from crm.learners l where not exists (select 1 from learning.events e where e.learner_id = l.learner_id)",
    "delete from crm.learners",
    # MERGE: upsert, conditions, DELETE and DO NOTHING, NOT MATCHED BY SOURCE, subquery and CTE sources, * forms
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
    "when matched and s.status = 'resolved' then update set status = s.status, email = s.subject "
    "when not matched then insert (learner_id, full_name) values (s.learner_id, upper(s.body))",
    "merge into crm.learners t using (select p.learner_id, max(p.status) as status from billing.payments p "
    "where p.amount > 10 group by p.learner_id) s on t.learner_id = s.learner_id "
    "when matched and t.country = 'DE' then delete when matched then update set status = s.status",
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id and s.status = 'open' "
    "when matched and t.marketing_consent then update set email = s.subject "
    "when matched then update set full_name = s.body",
    "merge into crm.learners t using (select distinct x.learner_id from support.tickets x) s "
    "on t.learner_id = s.learner_id when matched then update set email = 'zz' "
    "when not matched by source then delete",
    "merge into crm.learners t using (select distinct x.learner_id from support.tickets x) s "
    "on t.learner_id = s.learner_id when matched then do nothing "
    "when not matched by source and t.status = 'active' then update set full_name = t.email",
    "merge into crm.learners t using (select l.learner_id + 100 as learner_id, l.email as full_name, "
    "l.full_name as email, l.country, l.marketing_consent, l.status, l.date_of_birth, l.created_at "
    "from crm.learners l where l.status = 'active') s on t.learner_id = s.learner_id "
    "when matched then update set * when not matched then insert *",
    "merge into crm.learners t using (select l.learner_id, l.email as full_name, l.full_name as email, l.country, "
    "l.marketing_consent, l.status, l.date_of_birth, l.created_at from crm.learners l "
    "where l.status = 'paused') s on t.learner_id = s.learner_id when matched then update",
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
    "when matched and s.status = 'open' then do nothing when matched then update set email = s.subject "
    "when not matched by source and t.marketing_consent then update set full_name = upper(t.email)",
    "with s as (select p.learner_id, p.status from billing.payments p where p.status = 'failed') "
    "merge into crm.learners t using s on t.learner_id = s.learner_id when matched then delete",
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
    "when not matched and s.status = 'open' then insert values (s.ticket_id + 1000, s.subject, s.body, null, "
    "false, null, null, s.opened_at)",
    # USING (columns), DEFAULT, RETURNING, a source's UNION ALL with an unnamed later branch
    "merge into crm.learners t using support.tickets s using (learner_id) "
    "when matched and learner_id > 3 then update set email = s.subject "
    "when not matched then insert (learner_id, full_name, status) values (learner_id, body, status) "
    "when not matched by source then update set country = upper(status)",
    "update crm.learners set email = default, status = 'x' where country = 'DE'",
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
    "when matched then update set email = default when not matched then insert (learner_id, email) "
    "values (s.learner_id, default)",
    "update crm.learners set email = upper(email) where country = 'DE' returning learner_id, email",
    "delete from crm.learners l using billing.payments p where p.learner_id = l.learner_id returning *",
    "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
    "when matched then update set email = s.subject returning merge_action, *",
    "merge into crm.learners t using (select s.learner_id, s.subject from support.tickets s union all "
    "select x.ticket_id + 1000, upper(x.body) from support.tickets x) s on t.learner_id = s.learner_id "
    "when matched then delete when not matched then insert (learner_id, email) values (s.learner_id, s.subject)",
    "merge into analytics.daily_revenue d using (select cast(p.paid_at as date) as day, sum(p.amount) as revenue "
    "from billing.payments p group by 1) s on d.day = s.day when matched then update set revenue_usd = s.revenue "
    "when not matched then insert (day, revenue_usd) values (s.day, s.revenue)",
]


@pytest.mark.parametrize("sql", TRACED, ids=lambda sql: " ".join(sql.split())[:70])
def test_dml_statement_is_traced_and_sound(sql):
    verdict = check_dml(sql, shared_dml_runner())
    assert verdict.refused is None, verdict.refused
    assert verdict.violations == []


@pytest.mark.parametrize(
    ("sql", "left_out", "caught"),
    [
        (
            "update crm.learners l set email = t.subject from support.tickets t where t.learner_id = l.learner_id",
            "crm.learners.email",
            "column email holds values of ['crm.learners.email']",
        ),
        (
            "update crm.learners l set email = t.subject from support.tickets t where t.learner_id = l.learner_id",
            "support.tickets.learner_id",
            "changing support.tickets.learner_id",
        ),
        ("delete from crm.learners where status = 'closed'", "crm.learners.status", "changing crm.learners.status"),
        (
            "merge into crm.learners t using support.tickets s on t.learner_id = s.learner_id "
            "when matched and s.status = 'open' then update set email = s.subject",
            "support.tickets.status",
            "changing support.tickets.status",
        ),
    ],
)
def test_the_oracle_sees_a_lie(monkeypatch, sql, left_out, caught):
    """A lineage that leaves out one source (what keeps a column, what decides the rows) is caught."""
    from dataclasses import replace

    from tests.support import dml_oracle

    real = dml_oracle.column_lineage

    def lying(statement, schema):
        lineage = real(statement, schema)
        columns = tuple(
            replace(c, inputs=tuple(d for d in c.inputs if str(d.source) != left_out)) for c in lineage.columns
        )
        return replace(lineage, columns=columns, rows=tuple(d for d in lineage.rows if str(d.source) != left_out))

    assert check_dml(sql, shared_dml_runner()).violations == []
    monkeypatch.setattr(dml_oracle, "column_lineage", lying)
    violations = check_dml(sql, shared_dml_runner()).violations
    assert any(caught in violation for violation in violations), violations


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(statement())
def test_generated_dml_is_refused_or_sound(sql):
    try:
        verdict = check_dml(sql, shared_dml_runner())
    except DuckDBRejected:
        assume(False)
        return
    assert verdict.violations == [], sql
