"""The SELECT of a statement as DuckDB runs it: every table named by its full namespace."""

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
    LineageError. A Statement given is not changed (its query is copied)."""
    if isinstance(statement, str):
        statement = parse_statement(statement, dialect)
    query = statement.query.copy()
    found = survey(query)
    for table, ref in place_tables(found.tables, found.ctes, normalized(schema), statement.target):
        name_for_duckdb(table, ref)
    return query.sql(dialect=statement.dialect)
