"""The qualifier's column step reduced to naming the outputs: the same tree as sqlglot's `qualify_columns`, or
the whole step done."""

from __future__ import annotations

import pytest
from sqlglot import exp
from sqlglot.optimizer.qualify_columns import qualify_columns

from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.lineage.errors import LineageError, UnknownColumnError
from airflow_lineage_governance.lineage.qualification import alias_tables, name_outputs, qualifier_schema
from airflow_lineage_governance.lineage.schema import name_for_engine, normalized, place_tables
from airflow_lineage_governance.lineage.statement import parse_statement, survey
from learning_platform.tables import lineage_schema
from tests.support.corpus import corpus

SCHEMA = {
    "raw": {
        "orders": {"id": "int", "customer_id": "int", "amount": "double", "address": "struct<city: string>"},
        "customers": {"id": "int", "name": "string", "tags": "list<string>"},
    }
}


def _prepared(sql: str, schema: dict) -> tuple[exp.Query, exp.Query, bool] | None:
    """Return the query as the engine hands it to the qualifier, the query after name_outputs, and whether it named.

    None where the engine gives the query to the whole qualifier (names not in lower case, a shorthand, tables
    that alias_tables does not name).
    """
    statement = parse_statement(sql)
    query = statement.query.copy()
    found = survey(query)
    if found.cased or found.shorthands:
        return None
    tables = normalized(schema)
    placed = place_tables(found.tables, found.ctes, tables, statement.target)
    for table, ref in placed:
        name_for_engine(table, ref)
    if not alias_tables(found):
        return None
    before = query.copy()
    return before, query, name_outputs(query, survey(query), placed, tables, "duckdb")


def _both_ways(sql: str, schema: dict) -> tuple[bool, str, str]:
    """Return whether name_outputs named the outputs, the query after it, and as `qualify_columns` qualifies it.

    Where it did not name them, the query before it instead of `qualify_columns`'.
    """
    prepared = _prepared(sql, schema)
    assert prepared is not None, sql
    before, ours, named = prepared
    if not named:  # the tree is left as it was, for the whole column step
        return named, ours.sql(dialect="duckdb"), before.sql(dialect="duckdb")
    mapping = qualifier_schema(normalized(schema), "duckdb")
    theirs = qualify_columns(before, mapping, expand_alias_refs=True, expand_stars=True)
    return named, ours.sql(dialect="duckdb"), theirs.sql(dialect="duckdb")


def test_every_corpus_query_whose_outputs_alone_are_named_reads_as_qualify_columns_leaves_it() -> None:
    named = 0
    for sql in corpus():
        if _prepared(sql, lineage_schema()) is None:
            continue
        done, ours, theirs = _both_ways(sql, lineage_schema())
        named += done
        assert ours == theirs, sql
    assert named >= 10


@pytest.mark.parametrize(
    "query",
    [
        "SELECT o.id, c.name FROM raw.orders o JOIN raw.customers c ON o.customer_id = c.id",
        "SELECT o.id + 1, upper(c.name), count(*), o.amount AS amount FROM raw.orders o, raw.customers c "
        "GROUP BY o.id, c.name",
        "SELECT orders.amount * 2 FROM raw.orders WHERE orders.amount > 0",
        "SELECT o.address, o.customer_id AS id FROM raw.orders o",
        "SELECT DISTINCT o.customer_id, sum(o.amount) OVER (PARTITION BY o.customer_id ORDER BY o.id) "
        "FROM raw.orders o",
        "SELECT o.customer_id, sum(o.amount) AS total FROM raw.orders o GROUP BY o.customer_id "
        "HAVING sum(o.amount) > 1",
        "SELECT 1, 'x', o.id FROM raw.orders o LEFT JOIN raw.customers c ON c.id = o.customer_id",
        "SELECT list_transform(c.tags, t -> t || c.name) FROM raw.customers c",  # a lambda's variable
        "SELECT s.id, s.total FROM (SELECT o.id, o.amount * 2 AS total FROM raw.orders o) AS s",  # a subquery
        "WITH w AS (SELECT o.id, count(*) AS n FROM raw.orders o GROUP BY o.id), v AS (SELECT w.id FROM w) "
        "SELECT v.id, w.n + 1 FROM v JOIN w ON v.id = w.id",  # CTEs
        "SELECT o.id FROM raw.orders o WHERE o.id IN (SELECT c.id FROM raw.customers c)",  # a subquery
        "SELECT o.id FROM raw.orders o WHERE EXISTS (SELECT c.id AS x FROM raw.customers c)",
    ],
)
def test_a_one_select_query_of_qualified_columns_gets_the_output_names_qualify_columns_gives(query: str) -> None:
    done, ours, theirs = _both_ways(f"CREATE TABLE out.t AS {query}", SCHEMA)
    assert done
    assert ours == theirs


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM raw.orders",  # an unqualified column
        "SELECT o.amount AS total, o.id FROM raw.orders o WHERE total > 1",  # an alias read as a column
        "SELECT o.id FROM raw.orders o ORDER BY 1",  # ORDER BY
        "SELECT o.customer_id, count(*) FROM raw.orders o GROUP BY 1",  # a position in GROUP BY
        "SELECT * FROM raw.orders o",  # a star
        "SELECT o.* FROM raw.orders o",
        "SELECT o.id FROM raw.orders o JOIN raw.customers c USING (id)",  # USING
        "SELECT o.id FROM raw.orders o NATURAL JOIN raw.customers c",  # NATURAL
        "SELECT o.nope FROM raw.orders o",  # a column the table does not have
        "SELECT o.address.city FROM raw.orders o",  # a struct's field
        "SELECT x.id FROM raw.orders o",  # an alias of no table
        "SELECT o.id, (SELECT max(p.amount) FROM raw.orders p WHERE p.id = o.id) FROM raw.orders o",  # correlated
        "WITH w AS (SELECT o.id + 1 FROM raw.orders o) SELECT w.id FROM w",  # an unnamed output read outside
        "WITH w (n) AS (SELECT o.id FROM raw.orders o) SELECT w.n FROM w",  # a CTE's column list
        "SELECT s.n FROM (SELECT o.id FROM raw.orders o) AS s(n)",  # a subquery's column list
        "WITH w AS (SELECT o.id FROM raw.orders o) SELECT w.amount FROM w",  # a column the CTE does not have
        "SELECT o.id FROM raw.orders o UNION ALL SELECT c.id FROM raw.customers c",  # a set operation
        "WITH RECURSIVE r AS (SELECT o.id FROM raw.orders o) SELECT r.id FROM r",
        "SELECT s.id FROM (SELECT o.id FROM raw.orders o ORDER BY o.id) AS s",  # ORDER BY in a subquery
        "SELECT o.id FROM raw.orders o USING SAMPLE 10",  # another clause
        "SELECT o.id FROM raw.orders o JOIN raw.customers o ON true",  # one name for two sources
        "SELECT DISTINCT ON (o.customer_id) o.customer_id, o.amount FROM raw.orders o",
        "SELECT [t FOR t IN c.tags] FROM raw.customers c",  # a comprehension's variable
        "SELECT c.name FROM raw.customers c ASOF JOIN raw.orders o ON o.id >= c.id",  # a join's method
    ],
)
def test_any_other_query_goes_through_the_whole_column_step(query: str) -> None:
    prepared = _prepared(f"CREATE TABLE out.t AS {query}", SCHEMA)
    assert prepared is None or not prepared[2]
    assert prepared is None or prepared[1] == prepared[0]


def test_lineage_of_a_query_whose_outputs_alone_are_named_reads_each_source_and_name() -> None:
    lineage = column_lineage(
        "CREATE TABLE out.t AS SELECT o.amount * 2, c.name, count(*) FROM raw.orders o "
        "JOIN raw.customers c ON o.customer_id = c.id GROUP BY o.amount, c.name",
        SCHEMA,
    )
    inputs = {column.name: sorted(str(dep.source) for dep in column.inputs) for column in lineage.columns}
    assert inputs == {
        "(o.amount * 2)": ["raw.orders.amount"],
        "name": ["raw.customers.name"],
        "count_star()": [],
    }


def test_two_sources_of_one_name_are_refused_as_before() -> None:
    with pytest.raises(LineageError, match="cannot be read against the catalog"):
        column_lineage("CREATE TABLE out.t AS SELECT o.id FROM raw.orders o JOIN raw.customers o ON true", SCHEMA)


def test_a_column_the_table_does_not_have_is_named_in_the_error() -> None:
    with pytest.raises(UnknownColumnError, match="raw.orders has no column nope"):
        column_lineage("CREATE TABLE out.t AS SELECT o.nope FROM raw.orders o", SCHEMA)
