"""The SQL of a statement as DuckDB runs it: every table named by its full namespace."""

from __future__ import annotations

from airflow_lineage_governance.lineage.schema import (
    CatalogSchema,
    NestedSchema,
    name_for_duckdb,
    normalized,
    place_tables,
)
from airflow_lineage_governance.lineage.statement import Statement, parse_statement, survey


def runnable_select(statement: Statement | str, schema: CatalogSchema | NestedSchema, *,
                    dialect: str = "duckdb") -> str:
    """Returns the statement's SELECT with each table named as DuckDB finds it (`schema.table`, or
    `catalog.schema.table` for a two-level namespace), a table named without namespace given its own; raises
    LineageError, UnsupportedStatementError for a MERGE, UPDATE or DELETE (which has no one SELECT: see
    runnable_statement). A Statement given is not changed (its query is copied)."""
    if isinstance(statement, str):
        statement = parse_statement(statement, dialect)
    query = statement.query.copy()
    found = survey(query)
    for table, ref in place_tables(found.tables, found.ctes, normalized(schema), statement.target):
        name_for_duckdb(table, ref)
    return query.sql(dialect=statement.dialect)


def runnable_statement(statement: Statement | str, schema: CatalogSchema | NestedSchema, *,
                       dialect: str = "duckdb") -> str:
    """Returns the whole statement (a MERGE, UPDATE or DELETE; any kind is taken) with each table, the target
    included, named as DuckDB finds it, as runnable_select names them: run it on a copy of the target at that
    name. A table named without namespace is given its own (an alias the statement relies on, such as `t` in
    `MERGE INTO db.t ... ON t.id = ...`, keeps working: DuckDB binds a table's own name). Raises LineageError for
    a table the schema does not place. A Statement given is not changed (its tree is copied)."""
    if isinstance(statement, str):
        statement = parse_statement(statement, dialect)
    tree = statement.tree.copy()
    found = survey(tree)
    for table, ref in place_tables(found.tables, found.ctes, normalized(schema), statement.target):
        name_for_duckdb(table, ref)
    return tree.sql(dialect=statement.dialect)
