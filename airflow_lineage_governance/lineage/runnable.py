"""The SELECT of a statement as DuckDB runs it: every table named `namespace.table`."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_lineage_governance.lineage.schema import normalized, place_tables
from airflow_lineage_governance.lineage.statement import parse_statement


def runnable_select(sql: str, schema: Mapping[str, Mapping[str, Mapping[str, str]]], *,
                    dialect: str = "duckdb") -> str:
    """Returns the statement's SELECT with each table given its namespace; raises LineageError."""
    statement = parse_statement(sql, dialect)
    target = f"{statement.target.db}.{statement.target.name}".lower()
    place_tables(statement.survey.tables, statement.survey.ctes, normalized(schema), target)
    return statement.query.sql(dialect=dialect)
