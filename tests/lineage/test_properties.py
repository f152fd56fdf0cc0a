"""Property: on any statement, mutated or generated, the engine answers or raises LineageError, nothing else,
and every output column it returns has an entry in the facet."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_governance.lineage import LineageError, column_lineage
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from learning_platform.pipelines import PIPELINES, pipeline_sql
from learning_platform.tables import lineage_schema

SCHEMA = lineage_schema()
SEEDS = [pipeline_sql(name) for name in PIPELINES] + [
    "create table out.t as select l.email, count(*) over (partition by l.country) as n from crm.learners l",
    "create table out.t as select * from crm.learners l join billing.payments p using (learner_id)",
    "create table out.t as with c as (select p.learner_id, sum(p.amount) as s from billing.payments p "
    "group by 1) select c.s, l.email from c join crm.learners l on l.learner_id = c.learner_id",
]
WORDS = [
    "select",
    "from",
    "where",
    "join",
    "on",
    "group by",
    "order by",
    "having",
    "union",
    "(",
    ")",
    ",",
    "*",
    "l.email",
    "email",
    "p.amount",
    "count(*)",
    "sum(",
    "case when",
    "then",
    "end",
    "as x",
    "'x'",
    "1",
    "crm.learners",
    "billing.payments l",
    "with",
    "qualify",
    "over (",
    "partition by",
    "filter (",
    "merge",
    "insert into",
    "values",
    "not",
    "null",
    ";",
    "--",
    "using (learner_id)",
    "distinct",
    "lateral",
    "exists (",
    "in (",
    "md5(",
    "coalesce(",
    "::int",
    '"',
    "`",
    "é",
    "\x00",
]


def tokens(sql: str) -> list[str]:
    return re.findall(r"\w+(?:\.\w+)*|'[^']*'|\S", sql)


@st.composite
def mutated(draw) -> str:
    parts = tokens(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(parts)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "swap"]))
        if action == "delete" and position < len(parts):
            del parts[position]
        elif action == "insert":
            parts.insert(position, draw(st.sampled_from(WORDS)))
        elif action == "replace" and position < len(parts):
            parts[position] = draw(st.sampled_from(WORDS))
        elif action == "swap" and position + 1 < len(parts):
            parts[position], parts[position + 1] = parts[position + 1], parts[position]
    return " ".join(parts)


def check(sql: str) -> None:
    try:
        lineage = column_lineage(sql, SCHEMA)
    except LineageError as error:
        assert str(error).strip(), "an error must say something"
        return
    facet = column_lineage_facet(lineage, "iceberg://platform")
    assert [c.name for c in lineage.columns] == list(facet.fields)
    assert all(c.name for c in lineage.columns)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_statements_answer_or_raise_lineage_error(sql):
    check(sql)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_answers_or_raises_lineage_error(text):
    check(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_arbitrary_text_after_a_ctas_prefix(text):
    check("create table out.t as select " + text)
