"""Output names are DuckDB's: each case runs as `CREATE TABLE ... AS` on DuckDB itself, and the lineage's
column names must equal what DESCRIBE gives of the table it wrote, for expressions the engine's own rendering
knows and for those only DuckDB's binding names (a CAST to INT, trim, a subquery, ...)."""

from __future__ import annotations

import duckdb
import pytest

from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.lineage.errors import BindError
from airflow_lineage_governance.lineage.naming import KEYWORDS, deduplicated

SCHEMA = {
    "s": {
        "t": {"a": "INTEGER", "b": "VARCHAR", "c": "DOUBLE", "d": "DATE", "year": "INTEGER"},
        "u": {"a": "INTEGER", "id": "INTEGER"},
        "v": {"id": "INTEGER", "z": "INTEGER"},
    }
}

NAMED = [
    "SUM(a)",
    "sum(a)",
    "Sum(A)",
    "SUM(DISTINCT a)",
    "avg(c)",
    "min(a)",
    "MAX(a)",
    "count(*)",
    "COUNT( * )",
    "count(1)",
    "count(a)",
    "count(DISTINCT a)",
    "a + 1",
    "a+1",
    "A + 1",
    "T.a + 1",
    '"a" + 1',
    '"year" + 1',
    "a * (c + 1)",
    "a + 1 + 2",
    "a + (1 + 2)",
    "abs(a) / 2",
    "a % 2",
    "a // 2",
    "b || 'x'",
    "a - 1",
    "-a",
    "- 1",
    "-(1)",
    "-1.5",
    "1",
    "100",
    "1.50",
    "'x'",
    "'it''s'",
    "NULL",
    "TRUE",
    "false",
    "a = 1",
    "a <> 1",
    "a != 1",
    "a < 1",
    "a <= 1",
    "a > 1",
    "a >= 1",
    "a > 1 AND c < 2",
    "a > 1 AND c < 2 AND b = 'x'",
    "(a > 1 AND c < 2) AND b = 'x'",
    "a > 1 OR c < 2 AND b = 'x'",
    "NOT (a > 1)",
    "a IS NULL",
    "a IS NOT NULL",
    "a IN (1, 2)",
    "a NOT IN (1, 2)",
    "a BETWEEN 1 AND 2",
    "a NOT BETWEEN 1 AND 2",
    "CASE WHEN a > 1 THEN b ELSE 'z' END",
    "CASE WHEN a > 1 THEN 1 WHEN a > 2 THEN 2 END",
    "CASE a WHEN 1 THEN 'x' END",
    "CAST(a AS DECIMAL(15, 4))",
    "cast(a as numeric(10,2))",
    "a::decimal(9,1)",
    "round(c, 2)",
    "round(c)",
    "substring(b, 1, 2)",
    "SUBSTRING(b FROM 1 FOR 2)",
    "substr(b, 1, 2)",
    "upper(b)",
    "UPPER(b)",
    "ucase(b)",
    "lower(b)",
    "abs(a)",
    "coalesce(a, 1)",
    "ifnull(a, 0)",
    "year(d)",
    "first(a)",
    "nullif(a, 0)",
    "stddev_samp(c)",
    "stddev(c)",
    "variance(c)",
    "dense_rank() OVER ()",
    "row_number() OVER (PARTITION BY a)",
    "rank() OVER (PARTITION BY a, b)",
    "max(a) FILTER (WHERE a > 1)",
    "count(*) FILTER (WHERE a > 1)",
    "sum(a) OVER ()",
    "sum(a) OVER (PARTITION BY b)",
    "sum(a) / count(*)",
    "count(*) OVER ()",
    "count(*) OVER (PARTITION BY b)",
    "count(*) FILTER (WHERE a > 1) OVER ()",
    "sum(a) FILTER (WHERE a > 1) OVER ()",
    "count(DISTINCT a) OVER ()",
    "count(a) OVER (PARTITION BY b)",
    "(sum(a) * 100) / sum(c)",
    "(a)",
    "DISTINCT(a)",
    "md5_number(b)",
    "hash(a)",
    "strip_accents(b)",
    "even(a)",
    "gcd(a, 2)",
    "Nfc_Normalize(b)",
    "HASH(a, b)",
    "length(b)",
    "md5(b)",
    "ln(a)",
    "sqrt(a)",
    "exp(a)",
    "sign(a)",
    "month(d)",
    "day(d)",
    "quarter(d)",
    "trunc(c)",
    "reverse(b)",
    "ascii(b)",
    "median(c)",
    "mode(a)",
    "last(a)",
    "array_agg(a)",
    "bool_and(a > 1)",
    "left(b, 1)",
    "right(b, 1)",
    "power(a, 2)",
    "pow(a, 2)",
    "corr(a, c)",
    "covar_pop(a, c)",
]
BOUND = [
    "CAST(a AS INT)",
    "a::int",
    "CAST(a AS VARCHAR)",
    "CAST(a AS decimal)",
    "CAST(a AS DECIMAL(18, 3))",
    "TRY_CAST(a AS BIGINT)",
    "b LIKE 'x%'",
    "b ILIKE 'x'",
    "a IS TRUE",
    "sum(a) OVER (ORDER BY c)",
    "trim(b)",
    "extract(year from d)",
    "date_trunc('month', d)",
    "(SELECT 1)",
    "EXISTS (SELECT 1)",
    "[a, 1]",
    "{'k': a}",
    "concat(b, 'x')",
    "greatest(a, 1)",
    "1e3",
    ".5",
    "date '2020-01-01'",
    "interval 1 day",
    "main.sum(a)",
    '"sum"(a)',
]
QUERIES = [
    "SELECT a AS x, b AS x FROM s.t",
    "SELECT a AS x, b AS x, c AS x_1 FROM s.t",
    "SELECT a AS x_1, b AS x, c AS x FROM s.t",
    "SELECT a AS x, b AS x, c AS x, d AS x_2 FROM s.t",
    "SELECT a AS X, b AS x, c AS x_1 FROM s.t",
    "SELECT a, a FROM s.t",
    "SELECT a, a AS A FROM s.t",
    "SELECT * FROM s.u JOIN s.v ON u.id = v.id",
    "SELECT * FROM s.u JOIN s.v USING (id)",
    "SELECT u.id, v.id FROM s.u JOIN s.v ON u.id = v.id",
    "SELECT sum(a), sum(a) FROM s.t",
    'SELECT * FROM (SELECT a AS Big, b AS "Quoted Name" FROM s.t) q',
    "SELECT Big FROM (SELECT a AS Big FROM s.t) q",
    "WITH w AS (SELECT a AS Seg FROM s.t) SELECT seg, seg * 2 AS twice FROM w",
    "SELECT * FROM (SELECT a, count(b) FROM s.t GROUP BY a) AS c (Key, Cnt)",
    "WITH w (Key, Total) AS (SELECT a, sum(c) FROM s.t GROUP BY a) SELECT * FROM w",
    "SELECT a AS Left FROM s.t UNION ALL SELECT a AS other FROM s.t",
    "SELECT a, sum(c) FROM s.t GROUP BY a UNION ALL SELECT a, c FROM s.t",
]


@pytest.fixture(scope="module")
def connection():
    made = duckdb.connect()
    made.execute("CREATE SCHEMA s; CREATE SCHEMA out")
    for table, columns in SCHEMA["s"].items():
        listed = ", ".join(f'"{column}" {kind}' for column, kind in columns.items())
        made.execute(f"CREATE TABLE s.{table} ({listed})")
    yield made
    made.close()


def _described(connection, query: str) -> list[str]:
    connection.execute(f"CREATE OR REPLACE TABLE out.t AS {query}")
    return [row[0] for row in connection.execute("DESCRIBE out.t").fetchall()]


def _named(query: str) -> list[str]:
    return [column.name for column in column_lineage(f"CREATE TABLE out.t AS {query}", SCHEMA).columns]


@pytest.mark.parametrize("expression", NAMED)
def test_an_unaliased_expression_is_named_as_duckdb_names_it(expression, connection):
    query = f"SELECT {expression} FROM s.t AS T"
    assert _named(query) == _described(connection, query)


@pytest.mark.parametrize("expression", BOUND)
def test_an_expression_only_duckdb_can_name_takes_duckdbs_name(expression, connection):
    query = f"SELECT {expression} FROM s.t AS T"
    assert _named(query) == _described(connection, query)


@pytest.mark.parametrize("query", QUERIES)
def test_duplicates_and_written_case_are_duckdbs(query, connection):
    assert _named(query) == _described(connection, query)


def test_an_insert_takes_the_targets_names():
    schema = {**SCHEMA, "out": {"t": {"k": "INTEGER", "total": "DOUBLE"}}}
    lineage = column_lineage("INSERT INTO out.t SELECT a, sum(c) FROM s.t GROUP BY a", schema)
    assert [column.name for column in lineage.columns] == ["k", "total"]


def test_deduplication_takes_the_first_free_suffix():
    assert deduplicated(["x", "x", "x", "x_2"]) == ["x", "x_1", "x_2", "x_2_1"]
    assert deduplicated(["X", "x", "x_1"]) == ["X", "x_1", "x_1_1"]
    assert deduplicated(["x_1", "x_1", "x"]) == ["x_1", "x_1_1", "x"]


def test_the_keywords_are_duckdbs():
    """A name that is a DuckDB keyword is written quoted (`"year"(d)`): the list must be the running DuckDB's."""
    found = {row[0] for row in duckdb.sql("SELECT keyword_name FROM duckdb_keywords()").fetchall()}
    assert KEYWORDS == found


def test_a_query_duckdb_cannot_bind_is_refused_with_duckdbs_sentence():
    with pytest.raises(
        BindError,
        match=r'^out\.t: DuckDB cannot bind the query \(Binder Error: column "b" must '
        r"appear in the GROUP BY clause or must be part of an aggregate function\); fix the "
        r"statement\.$",
    ):
        _named("SELECT b, sum(a) FROM s.t")


def test_a_parsed_statement_is_named_as_its_text():
    """The engine reads a Statement on a copy of its tree, and names outputs by the text the Statement keeps."""
    from airflow_lineage_governance.lineage import parse_statement

    sql = "-- a comment first\nCREATE TABLE out.t AS SELECT substr(b, 1, 2), Sum(a) AS Total, 1.50 FROM s.t GROUP BY b"
    statement = parse_statement(sql)
    names = [column.name for column in column_lineage(statement, SCHEMA).columns]
    assert names == ["substr(b, 1, 2)", "Total", "1.50"]
    assert names == [column.name for column in column_lineage(sql, SCHEMA).columns]
    assert names == [column.name for column in column_lineage(statement, SCHEMA).columns]  # the tree is unchanged


def test_the_runnable_select_keeps_duckdbs_names(connection):
    """The operator runs sqlglot's rendering of the SELECT (`substr` comes back as SUBSTRING): each unaliased
    output is aliased with the name DuckDB gives it in the statement as written."""
    from airflow_lineage_governance.lineage import parse_statement, runnable_select

    statement = parse_statement("CREATE TABLE out.t AS SELECT substr(b, 1, 2), 1.50, count(*) FROM s.t GROUP BY b")
    names = [column.name for column in column_lineage(statement, SCHEMA).columns]
    relation = connection.sql(runnable_select(statement, SCHEMA))
    assert relation.columns == names == ["substr(b, 1, 2)", "1.50", "count_star()"]


@pytest.mark.parametrize("query", [q for q in QUERIES if q.startswith("SELECT")])
def test_the_runnable_select_returns_the_lineages_names(query, connection):
    """A CTAS's SELECT keeps duplicates (`id`, `id`) where the CTAS writes `id`, `id_1`: given the lineage's
    names, the runnable SELECT returns its columns under them, so the operator writes what the lineage names."""
    from airflow_lineage_governance.lineage import parse_statement, runnable_select

    statement = parse_statement(f"CREATE TABLE out.t AS {query}")
    names = [column.name for column in column_lineage(statement, SCHEMA).columns]
    assert connection.sql(runnable_select(statement, SCHEMA, names=names)).columns == names
