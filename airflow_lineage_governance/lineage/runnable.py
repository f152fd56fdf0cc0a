"""The SQL of a statement as DuckDB runs it.

Every table named by its full namespace, and every unaliased output of a CTAS named as DuckDB names it in the statement
as written (so regenerating the SQL renames nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from airflow_lineage_governance.default_keyword import with_default_keywords
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage.naming import output_name
from airflow_lineage_governance.lineage.schema import (
    CatalogSchema,
    NestedSchema,
    name_for_duckdb,
    normalized,
    place_tables,
)
from airflow_lineage_governance.lineage.statement import Statement, parse_statement, survey


def runnable_select(
    statement: Statement | str,
    schema: CatalogSchema | NestedSchema,
    *,
    dialect: str = "duckdb",
    names: Sequence[str] | None = None,
) -> str:
    """Return the statement's SELECT with each table named as DuckDB finds it.

    `schema.table`, or `catalog.schema.table` for a two-level namespace; a table named without namespace is given its
    own. Raises LineageError, UnsupportedStatementError for a MERGE, UPDATE or DELETE (which has no one SELECT: see
    runnable_statement). A Statement given is not changed (its query is copied).

    `names` (a CTAS's output names from its lineage, which are DuckDB's): when they rename a duplicate (`x`,
    `x_1`, as DuckDB's CREATE TABLE ... AS does and its SELECT does not) or name an output the regenerated SQL
    might name otherwise, the SELECT is wrapped to return its columns under those names.
    """
    if isinstance(statement, str):
        statement = parse_statement(statement, dialect)
    query = statement.query.copy()
    unnamed = False
    if statement.kind == StatementKind.CREATE_TABLE_AS:
        unnamed = not _name_unaliased(query, statement.text)
    found = survey(query)
    for table, ref in place_tables(found.tables, found.ctes, normalized(schema), statement.target):
        name_for_duckdb(table, ref)
    sql = query.sql(dialect=statement.dialect)
    if (
        names is not None
        and statement.kind == StatementKind.CREATE_TABLE_AS
        and (unnamed or _renames_a_duplicate(names))
    ):
        listed = ", ".join(exp.to_identifier(name, quoted=True).sql(dialect=statement.dialect) for name in names)
        sql = f"SELECT * FROM ({sql}) AS lineage_named ({listed})"
    return sql


def _renames_a_duplicate(names: Sequence[str]) -> bool:
    """Return whether some name is another one with a `_n` suffix (what deduplicated makes of a duplicate)."""
    known = {name.lower() for name in names}
    for name in names:
        base, _, suffix = name.rpartition("_")
        if base and suffix.isdigit() and base.lower() in known:
            return True
    return False


def _name_unaliased(query: exp.Query, text: str) -> bool:
    """Give each unaliased output expression of the query's leftmost SELECT the name DuckDB gives it in `text`.

    Only where naming.output_name tells it; returns False when some output is left unnamed or comes through a star (the
    SQL regenerated may then be named otherwise than the statement as written).
    """
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this if isinstance(query, exp.Subquery) else query.left
    if not isinstance(query, exp.Select):
        return True
    named = True
    for projection in list(query.expressions):
        inner = projection
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star)):
            named = False  # a star may bring in outputs of a subquery that the regenerated SQL names otherwise
            continue
        if isinstance(inner, (exp.Alias, exp.Column)):
            continue
        name = output_name(projection, text)
        if name is not None:
            projection.replace(exp.alias_(projection.copy(), exp.to_identifier(name, quoted=True)))
        else:
            named = False
    return named


def runnable_statement(
    statement: Statement | str,
    schema: CatalogSchema | NestedSchema,
    *,
    dialect: str = "duckdb",
    written_in: str | None = None,
) -> str:
    """Return the whole statement with each table, the target included, named as DuckDB finds it.

    A MERGE, UPDATE or DELETE; any kind is taken. Tables are named as runnable_select names them: run it on a copy of
    the target at that name. A table named without namespace is given its own (an alias the statement relies on, such as
    `t` in `MERGE INTO db.t ... ON t.id = ...`, keeps working: DuckDB binds a table's own name). Raises LineageError for
    a table the schema does not place. A Statement given is not changed (its tree is copied). The SQL is written in
    `written_in` (the statement's own dialect when None).
    """
    if isinstance(statement, str):
        statement = parse_statement(statement, dialect)
    tree = statement.tree.copy()
    found = survey(tree)
    for table, ref in place_tables(found.tables, found.ctes, normalized(schema), statement.target):
        name_for_duckdb(table, ref)
    return with_default_keywords(tree).sql(dialect=written_in or statement.dialect)
