"""Exact column lineage of one CTAS or INSERT ... SELECT: DIRECT and INDIRECT, strict, Airflow-free."""

from airflow_lineage_governance.lineage.engine import column_lineage
from airflow_lineage_governance.lineage.errors import (
    AmbiguousColumnError,
    ColumnCountError,
    LineageError,
    SqlSyntaxError,
    StatementTooLargeError,
    UnknownColumnError,
    UnknownTableError,
    UnnamedColumnError,
    UnplaceableSourceError,
    UnsupportedStatementError,
)
from airflow_lineage_governance.lineage.model import ColumnLineage, Dependency, OutputColumn
from airflow_lineage_governance.lineage.redact import redacted_sql

__all__ = [
    "AmbiguousColumnError",
    "ColumnCountError",
    "ColumnLineage",
    "Dependency",
    "LineageError",
    "OutputColumn",
    "SqlSyntaxError",
    "StatementTooLargeError",
    "UnknownColumnError",
    "UnknownTableError",
    "UnnamedColumnError",
    "UnplaceableSourceError",
    "UnsupportedStatementError",
    "column_lineage",
    "redacted_sql",
]
