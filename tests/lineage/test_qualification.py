"""The qualifier's table step done from the survey: the same tree as sqlglot's `qualify_tables`, or nothing done."""

from __future__ import annotations

import pytest
from sqlglot.optimizer.qualify_tables import qualify_tables

from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.lineage.qualification import alias_tables
from airflow_lineage_governance.lineage.statement import parse_statement, survey
from tests.support.corpus import corpus

SCHEMA = {
    "raw": {
        "orders": {"id": "int", "customer_id": "int", "amount": "double", "address": "struct<city: string>"},
        "customers": {"id": "int", "name": "string", "tags": "list<string>"},
    }
}


def _both_ways(sql: str) -> tuple[bool, str, str]:
    """Return whether alias_tables named the query's tables, the query after it, and after `qualify_tables`."""
    query = parse_statement(sql).query
    ours, theirs = query.copy(), query.copy()
    named = alias_tables(survey(ours))
    return named, ours.sql(dialect="duckdb"), qualify_tables(theirs, dialect="duckdb").sql(dialect="duckdb")


def test_every_corpus_query_it_names_reads_as_qualify_tables_leaves_it() -> None:
    named = 0
    for sql in corpus():
        found = survey(parse_statement(sql).query)
        if found.cased or found.shorthands:
            continue  # the engine gives those to the whole qualifier
        done, ours, theirs = _both_ways(sql)
        if done:
            named += 1
            assert ours == theirs, sql
    assert named >= 20


@pytest.mark.parametrize(
    "query",
    [
        "SELECT o.id, c.name FROM raw.orders o JOIN raw.customers c ON o.customer_id = c.id",
        "SELECT id FROM raw.orders",
        "WITH big AS (SELECT id, amount FROM raw.orders WHERE amount > 10) SELECT big.id FROM big",
        "SELECT s.id FROM (SELECT id FROM raw.orders) AS s WHERE s.id IN (SELECT id FROM raw.customers)",
        "SELECT id, (SELECT max(amount) FROM raw.orders) AS top FROM raw.customers",
    ],
)
def test_a_query_of_plain_tables_gets_the_aliases_qualify_tables_gives(query: str) -> None:
    done, ours, theirs = _both_ways(f"CREATE TABLE out.t AS {query}")
    assert done
    assert ours == theirs


@pytest.mark.parametrize(
    "query",
    [
        "SELECT s.id FROM (SELECT id FROM raw.orders) WHERE id > 0",  # a subquery without alias
        "SELECT s.id FROM ((SELECT id FROM raw.orders)) AS s",  # nested parentheses
        "SELECT c.id, u.tag FROM raw.customers c, unnest(c.tags) AS u(tag)",  # a table-making function
        "SELECT v.x FROM (VALUES (1), (2)) AS v(x)",
        "SELECT raw.orders.id FROM raw.orders",  # a column named with its table's namespace
        'SELECT id FROM raw."Orders-2"',  # a name the qualifier would quote
    ],
)
def test_any_other_query_is_left_to_qualify_tables_unchanged(query: str) -> None:
    sql = f"CREATE TABLE out.t AS {query}"
    before = parse_statement(sql).query
    copy = before.copy()
    assert not alias_tables(survey(copy))
    assert copy == before


def test_lineage_through_tables_named_by_the_survey_reads_each_source() -> None:
    lineage = column_lineage(
        "CREATE TABLE out.t AS WITH paid AS (SELECT customer_id, amount FROM raw.orders WHERE amount > 0) "
        "SELECT customers.name, paid.amount FROM paid JOIN raw.customers ON paid.customer_id = customers.id",
        SCHEMA,
    )
    inputs = {column.name: sorted(str(dep.source) for dep in column.inputs) for column in lineage.columns}
    assert inputs == {"name": ["raw.customers.name"], "amount": ["raw.orders.amount"]}
