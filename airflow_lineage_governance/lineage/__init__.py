"""Exact column lineage of one CTAS, INSERT ... SELECT, MERGE, UPDATE or DELETE.

DIRECT and INDIRECT, strict, Airflow-free.

Parse a statement once (`parse_statement`) and pass the Statement to `column_lineage`, `runnable_select` (CTAS,
INSERT) or `runnable_statement` (MERGE, UPDATE, DELETE) and `redacted_sql`; each also takes the text.
"""

from airflow_lineage_governance.lineage.engine import column_lineage
from airflow_lineage_governance.lineage.errors import (
    AmbiguousColumnError,
    BindError,
    ColumnCountError,
    LineageError,
    SqlSyntaxError,
    StatementTooLargeError,
    UnknownColumnError,
    UnknownTableError,
    UnnamedColumnError,
    UnplaceableSourceError,
    UnsupportedConstructError,
    UnsupportedStatementError,
)
from airflow_lineage_governance.lineage.model import ColumnLineage, Dependency, OutputColumn
from airflow_lineage_governance.lineage.redact import redacted_sql
from airflow_lineage_governance.lineage.runnable import runnable_select, runnable_statement
from airflow_lineage_governance.lineage.schema import CatalogSchema, NestedSchema, schema_from_nested
from airflow_lineage_governance.lineage.statement import Statement, parse_statement

__all__ = [
    "AmbiguousColumnError",
    "BindError",
    "CatalogSchema",
    "ColumnCountError",
    "ColumnLineage",
    "Dependency",
    "LineageError",
    "NestedSchema",
    "OutputColumn",
    "SqlSyntaxError",
    "Statement",
    "StatementTooLargeError",
    "UnknownColumnError",
    "UnknownTableError",
    "UnnamedColumnError",
    "UnplaceableSourceError",
    "UnsupportedConstructError",
    "UnsupportedStatementError",
    "column_lineage",
    "parse_statement",
    "redacted_sql",
    "runnable_select",
    "runnable_statement",
    "schema_from_nested",
]
