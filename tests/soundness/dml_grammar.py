"""Hypothesis strategies for MERGE, UPDATE and DELETE over the test schema: crm.learners (alias t) changed from
support.tickets, billing.payments, learning.events, crm.learners itself or a subquery over them (alias x), with
values and conditions that read the target, the source, both, or correlated subqueries."""

from __future__ import annotations

from hypothesis import strategies as st

# A source with the target's columns, two of them swapped, for INSERT * and UPDATE SET * (by position).
STAR_SOURCE = (
    "(select l.learner_id + 7 as learner_id, l.email as full_name, l.full_name as email, l.country, "
    "l.marketing_consent, l.status, l.date_of_birth, l.created_at from crm.learners l "
    "where l.status <> 'closed')"
)
# source -> (strings, numbers, timestamps, conditions on x)
SOURCES = {
    "support.tickets": (
        ["subject", "body", "status"],
        ["ticket_id"],
        ["opened_at"],
        ["x.status = 'open'", "x.ticket_id % 2 = 0"],
    ),
    "billing.payments": (["status"], ["amount", "course_id"], ["paid_at"], ["x.amount > 30", "x.status = 'failed'"]),
    "learning.events": (["event_type"], ["course_id"], ["occurred_at"], ["x.event_type = 'quiz'"]),
    "crm.learners": (["full_name", "email", "country"], ["learner_id"], ["created_at"], ["x.country = 'FR'"]),
    "(select p.learner_id, max(p.status) as status, sum(p.amount) as amount from billing.payments p "
    "where p.amount > 5 group by p.learner_id)": (["status"], ["amount"], [], ["x.amount > 40"]),
    "(select distinct y.learner_id, y.subject from support.tickets y where y.status = 'open')": (
        ["subject"],
        [],
        [],
        ["x.subject like '%1%'"],
    ),
    STAR_SOURCE: (["full_name", "email", "country"], ["learner_id"], ["created_at"], ["x.status = 'paused'"]),
}
STRINGS = ["full_name", "email", "country", "status"]
T_CONDITIONS = [
    "t.country = 'DE'",
    "t.marketing_consent",
    "t.created_at > '2024-02-01'",
    "t.learner_id % 3 = 0",
    "t.learner_id in (select y.learner_id from billing.payments y where y.status = 'failed')",
    "exists (select 1 from support.tickets y where y.learner_id = t.learner_id and y.status = 'open')",
]
T_VALUES = [
    "upper(t.{t})",
    "t.{t2}",
    "'zz'",
    "md5(t.{t})",
    "coalesce(t.{t}, t.{t2})",
    "case when {c} then t.{t} else t.{t2} end",
    "(select max(y.subject) from support.tickets y where y.learner_id = t.learner_id)",
]
X_VALUES = [
    "x.{x}",
    "t.{t} || '-' || x.{x}",
    "coalesce(x.{x}, t.{t})",
    "case when {c} then x.{x} else t.{t2} end",
    "concat(x.{x}, '-', t.{t2})",
]
INSERT_VALUES = ["x.{x}", "upper(x.{x})", "'zz'", "x.{x} || '-' || cast(x.learner_id as varchar)"]


@st.composite
def _condition(draw: st.DrawFn, strings: list[str], source: str | None) -> str:
    pool = list(T_CONDITIONS)
    if source is not None:
        pool += SOURCES[source][3]
    first = draw(st.sampled_from(pool))
    if draw(st.integers(0, 3)) == 0:
        return f"({first}) {draw(st.sampled_from(['and', 'or']))} ({draw(st.sampled_from(pool))})"
    return first


@st.composite
def _assignments(draw: st.DrawFn, source: str | None, target_only: bool = False) -> str:
    columns = draw(st.lists(st.sampled_from(STRINGS), min_size=1, max_size=2, unique=True))
    parts = []
    for column in columns:
        pool = T_VALUES if target_only or source is None else T_VALUES + X_VALUES * 2
        template = draw(st.sampled_from(pool))
        x = draw(st.sampled_from(SOURCES[source][0])) if source is not None else ""
        value = template.format(
            t=draw(st.sampled_from(STRINGS)),
            t2=draw(st.sampled_from(STRINGS)),
            x=x,
            c=draw(st.sampled_from(T_CONDITIONS[:4])),
        )
        parts.append(f"{column} = {value}")
    if draw(st.integers(0, 4)) == 0:
        parts.append(
            draw(st.sampled_from(["learner_id = t.learner_id + 1000", "marketing_consent = not t.marketing_consent"]))
        )
    return ", ".join(parts)


@st.composite
def update(draw: st.DrawFn) -> str:
    """Returns an UPDATE of crm.learners, with or without FROM and WHERE."""
    source = draw(st.one_of(st.none(), st.sampled_from(sorted(SOURCES))))
    sql = f"update crm.learners as t set {draw(_assignments(source))}"
    conditions = []
    if source is not None:
        sql += f" from {source} as x"
        if draw(st.integers(0, 4)) > 0:
            conditions.append("x.learner_id = t.learner_id")
    if draw(st.booleans()):
        conditions.append(draw(_condition(STRINGS, source)))
    return sql + (" where " + " and ".join(f"({c})" for c in conditions) if conditions else "")


@st.composite
def delete(draw: st.DrawFn) -> str:
    """Returns a DELETE from crm.learners, with or without USING and WHERE."""
    source = draw(st.one_of(st.none(), st.sampled_from(sorted(SOURCES))))
    sql = "delete from crm.learners as t"
    conditions = []
    if source is not None:
        sql += f" using {source} as x"
        conditions.append("x.learner_id = t.learner_id")
    if draw(st.integers(0, 4)) > 0:
        conditions.append(draw(_condition(STRINGS, source)))
    return sql + (" where " + " and ".join(f"({c})" for c in conditions) if conditions else "")


@st.composite
def _clauses(draw: st.DrawFn, which: str, source: str, count: int) -> list[str]:
    clauses = []
    for index in range(count):
        last = index == count - 1
        condition = ""
        if not last or draw(st.booleans()):
            pool = (
                SOURCES[source][3]
                if which == "not matched"
                else T_CONDITIONS
                if which == "not matched by source"
                else T_CONDITIONS + SOURCES[source][3]
            )
            condition = f" and {draw(st.sampled_from(pool))}"
        if which == "not matched":
            strings = SOURCES[source][0]
            values = [draw(st.sampled_from(INSERT_VALUES)).format(x=draw(st.sampled_from(strings))) for _ in range(2)]
            action = f"insert (learner_id, full_name, email) values (x.learner_id, {values[0]}, {values[1]})"
            if source == STAR_SOURCE and draw(st.booleans()):
                action = draw(st.sampled_from(["insert *", "insert"]))
        else:
            actions = ["update", "update", "delete", "do nothing"]
            action = draw(st.sampled_from(actions))
            if action == "update":
                action = f"update set {draw(_assignments(source, target_only=which == 'not matched by source'))}"
                if source == STAR_SOURCE and which == "matched" and draw(st.booleans()):
                    action = draw(st.sampled_from(["update set *", "update"]))
        clauses.append(f"when {which}{condition} then {action}")
    return clauses


@st.composite
def merge(draw: st.DrawFn) -> str:
    """Returns a MERGE into crm.learners from one source, with up to two clauses of each kind."""
    source = draw(st.sampled_from(sorted(SOURCES)))
    on = "t.learner_id = x.learner_id"
    if draw(st.integers(0, 3)) == 0:
        on += f" and {draw(st.sampled_from(SOURCES[source][3]))}"
    counts = draw(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 1)).filter(lambda c: sum(c) > 0))
    clauses = [
        *draw(_clauses("matched", source, counts[0])),
        *draw(_clauses("not matched", source, counts[1])),
        *draw(_clauses("not matched by source", source, counts[2])),
    ]
    sql = f"merge into crm.learners as t using {source} as x on {on} " + " ".join(clauses)
    if draw(st.integers(0, 4)) == 0:  # the source as a CTE
        sql = f"with x as {source if source.startswith('(') else f'(select * from {source})'} " + sql.replace(
            f"using {source} as x", "using x"
        )
    return sql


def statement() -> st.SearchStrategy[str]:
    """Returns a strategy of MERGE, UPDATE and DELETE statements."""
    return st.one_of(merge(), update(), delete())
