"""Hypothesis strategies for DuckDB statements over the test schema: struct and list constructors, * with
EXCLUDE/REPLACE/COLUMNS, PIVOT/UNPIVOT, named windows, QUALIFY, ORDER BY ALL/GROUP BY ALL, DISTINCT ON,
UNION [ALL] [BY NAME], EXCEPT, INTERSECT, LATERAL and UNNEST, correlated subqueries, ASOF and positional joins,
LIMIT/OFFSET, unaliased outputs only DuckDB names, ORDER BY names an alias shadows, WITH RECURSIVE, column alias
lists, whole rows and struct references."""

from __future__ import annotations

from hypothesis import strategies as st

# alias, table, string columns, other columns
SOURCES = {
    "l": (
        "crm.learners",
        ["full_name", "email", "country", "status"],
        ["learner_id", "marketing_consent", "date_of_birth", "created_at"],
    ),
    "p": ("billing.payments", ["status"], ["payment_id", "learner_id", "course_id", "amount", "paid_at"]),
    "e": ("learning.events", ["event_type"], ["event_id", "learner_id", "course_id", "occurred_at"]),
    "t": ("support.tickets", ["subject", "body", "status"], ["ticket_id", "learner_id", "opened_at"]),
}
PLAIN = [
    "{a}.{s}",
    "{a}.{o}",
    "upper({a}.{s})",
    "{a}.{s} || '-' || {a}.{s2}",
    "coalesce({a}.{s}, {a}.{s2})",
    "[{a}.{s}, {a}.{s2}]",
    "{{'k': {a}.{s}, 'j': {a}.{o}}}",
    "struct_pack(k := {a}.{s})",
    "{a}",
    "({a}.{s})",
    "{{'k': {a}.{s}}}.k",
    "list_value({a}.{s})[1]",
    "md5({a}.{s})",
    "length({a}.{s})",
    "case when {a}.{o} is null then {a}.{s} else {a}.{s2} end",
    "count(distinct {a}.{s}) over (partition by {a}.{s2})",
    "row_number() over w",
    "first_value({a}.{s}) over (partition by {a}.{s2} order by {a}.{o}, {a}.{s})",
    "first_value({a}.{s}) over w",
    "sum(length({a}.{s})) over (order by {a}.{o})",
    "(select max(x.amount) from billing.payments x where x.learner_id = {a}.learner_id)",
    "{a}.*",
    "* exclude ({s})",
    "* replace (upper({s}) as {s})",
    "columns('{s}')",
    "columns('.*_id')",
    "{{'e': {a}.{s}, 'n': {a}.{s2}}}.*",
    "{a}.{s} = 'x'",
    "{a}.{o} is null",
    "-length({a}.{s})",
    "substring({a}.{s}, 1, 2)",
    "cast(length({a}.{s}) as decimal(10, 2))",
    "{a}.{s} like 'a%'",
    "trim({a}.{s})",
    "cast({a}.{o} as varchar)",
    "lower({a}.{s}) as {s}",
    "columns(*)",
]
WHERE = [
    "",
    "where {a}.{o} is not null",
    "where columns('{s}') like '%1%'",
    "where {a}.{s} like '%2%'",
    "where exists (select 1 from billing.payments x where x.learner_id = {a}.learner_id)",
]
TAIL = [
    "",
    "order by all limit 4",
    "order by lower({s}) limit 4",
    "order by {s} limit 4",
    "order by 1 limit 3 offset 1",
    "order by {a}.{o} limit 5",
    "order by c0 limit 4",
    "order by -length(c0::varchar) limit 4",
    "qualify row_number() over w = 1",
    "qualify count(*) over (partition by {a}.{s2}) > 1",
]
WINDOW = "window w as (partition by {a}.{s2} order by {a}.{o}, {a}.{s})"


@st.composite
def select(draw: st.DrawFn, alias: str | None = None) -> str:
    """Returns one SELECT over one source table (with a lateral unnest, a join, or neither)."""
    a = alias or draw(st.sampled_from(sorted(SOURCES)))
    table, strings, others = SOURCES[a]
    strings2 = strings + others
    picks = {
        "a": a,
        "s": draw(st.sampled_from(strings)),
        "s2": draw(st.sampled_from(strings2)),
        "o": draw(st.sampled_from(others)),
    }
    count = draw(st.integers(1, 3))
    projections = []
    for index in range(count):
        text = draw(st.sampled_from(PLAIN)).format(**picks)
        if "*" not in text and "columns(" not in text and " as " not in text and draw(st.integers(0, 4)) > 0:
            text += f" as c{index}"
        projections.append(text)
    distinct = draw(st.sampled_from(["", "distinct ", f"distinct on ({a}.{picks['s']}) "]))
    source = f"{table} {a}"
    join = draw(st.sampled_from(["", "unnest", "asof", "positional", "lateral"]))
    if join == "unnest" and a == "e":
        source += ", unnest(e.tags) as u(tag)"
        projections.append("u.tag")
    elif join == "asof" and a != "l":
        source += f" asof join crm.learners j on {a}.learner_id = j.learner_id and {a}.{others[-1]} >= j.created_at"
        projections.append("j.email as j_email")
    elif join == "positional" and a != "l":
        source += " positional join crm.learners j"
        projections.append("j.full_name as j_name")
    elif join == "lateral" and a == "l":
        source += ", lateral (select count(*) as n from billing.payments x where x.learner_id = l.learner_id) k"
        projections.append("k.n")
    where = draw(st.sampled_from(WHERE)).format(**picks)
    tail = draw(st.sampled_from(TAIL)).format(**picks)
    named = "over w" in " ".join(projections) + tail
    window = WINDOW.format(**picks) if named or draw(st.integers(0, 5)) == 0 else ""
    group = ""
    if draw(st.integers(0, 5)) == 0:
        projections = [f"{a}.{picks['s']}", f"count(*) as n{draw(st.integers(0, 9))}"]
        group, window, tail, distinct = "group by all", "", draw(st.sampled_from(["", "order by all"])), ""
    parts = [f"select {distinct}{', '.join(projections)} from {source}", where, group, window, tail]
    return " ".join(part for part in parts if part)


@st.composite
def statement(draw: st.DrawFn) -> str:
    """Returns a CTAS over a generated query: a SELECT, a set operation, a derived table, PIVOT or UNPIVOT."""
    shape = draw(
        st.sampled_from(
            ["select", "select", "union", "derived", "pivot", "unpivot", "derived ordered", "recursive", "aliased"]
        )
    )
    if shape == "union":
        operator = draw(
            st.sampled_from(
                [
                    "union",
                    "union all",
                    "union",
                    "union all",
                    "union by name",
                    "union all by name",
                    "except",
                    "intersect",
                    "except all",
                ]
            )
        )
        left = draw(select())
        right = draw(select())
        query = f"({left}) {operator} ({right})"
    elif shape == "derived":
        inner = draw(select())
        outer = draw(
            st.sampled_from(
                [
                    "select s.* from ({q}) s",
                    "select distinct s.c0 from ({q}) s",
                    "select count(*) as n from ({q}) s",
                    "select * exclude (c0) from ({q})",
                ]
            )
        )
        query = outer.format(q=inner)
    elif shape == "derived ordered":
        inner = draw(select())
        query = f"select q.* from (select * from ({inner}) s order by all limit 3) q"
    elif shape == "recursive":
        query = draw(
            st.sampled_from(
                [
                    "with recursive r(n, a, b) as (select 1, l.email, l.country from crm.learners l union all "
                    "select r.n + 1, r.b, r.a from r where r.n < 3) select r.a, r.b from r",
                    "with recursive r(n, s) as (select 1, t.subject from support.tickets t "
                    "where t.ticket_id < 4 union all "
                    "select r.n + 1, r.s || x.status from r join support.tickets x on x.ticket_id = r.n where r.n < 3) "
                    "select r.s from r",
                ]
            )
        )
    elif shape == "aliased":
        query = draw(
            st.sampled_from(
                [
                    "select x.a, x.b from crm.learners as x(a, b)",
                    "select * from billing.payments as p(k)",
                    "select c.contact_id, profile.* from support.contacts c",
                    "select support.contacts.profile.handle from support.contacts",
                    "select l from crm.learners l",
                    "select e.event_id, u.tag from learning.events e, lateral unnest(e.tags) as u(tag)",
                ]
            )
        )
    elif shape == "pivot":
        query = draw(
            st.sampled_from(
                [
                    "pivot crm.learners on country using count(*) group by status",
                    "select * from (pivot billing.payments on status using sum(amount))",
                ]
            )
        )
    elif shape == "unpivot":
        query = draw(
            st.sampled_from(
                [
                    "unpivot crm.learners on full_name, email into name k value v",
                    "select * from (unpivot support.tickets on subject, body into name k value v)",
                ]
            )
        )
    else:
        query = draw(select())
    return f"create table out.t as {query}"
