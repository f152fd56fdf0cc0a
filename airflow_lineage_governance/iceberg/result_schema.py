"""The Iceberg schema a CREATE TABLE ... AS will give its table, as DuckDB binds its SELECT.

DuckDB binds it over empty tables of the catalog's schemas: nothing is read. The lineage's binding already holds that
answer (`bound_result_schema`); `result_schema` asks DuckDB again, on a connection of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
from pyiceberg.schema import Schema
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.errors import NamespaceTooDeepError, ResultSchemaError
from airflow_lineage_governance.iceberg.read import duckdb_name, lock_down, sandboxed_connection
from airflow_lineage_governance.iceberg.session import SessionSettings
from airflow_lineage_governance.iceberg.types import NoIcebergTypeError, duckdb_type, iceberg_schema, quoted
from airflow_lineage_governance.lineage.binding import binder
from airflow_lineage_governance.lineage.errors import LineageError
from airflow_lineage_governance.lineage.model import ColumnLineage
from airflow_lineage_governance.lineage.schema import CatalogSchema, normalized
from airflow_lineage_governance.refs import TableRef


def bound_result_schema(lineage: ColumnLineage, schema: CatalogSchema) -> Schema:
    """Return the Iceberg schema of the rows a CREATE TABLE ... AS writes, from the lineage's own binding.

    The names are the lineage's output names and the types those DuckDB bound the query to when the lineage was
    read (`ColumnLineage.types`), each held by the Iceberg type `types.iceberg_type` maps it to, as the write
    gives them: the schema `result_schema` gives, without a DuckDB connection of its own.

    Args:
        lineage: the statement's lineage, as `column_lineage` read it over `schema`.
        schema: the catalog schema the lineage was read over.

    Returns:
        The schema, fields numbered from 1 (the catalog numbers them afresh).

    Raises:
        ResultSchemaError: when the lineage holds no binding of the query, or no Iceberg type holds a column's
            type.
    """
    target = lineage.target
    if len(lineage.types) != len(lineage.columns):
        raise ResultSchemaError(
            target,
            "the lineage holds no binding of the statement's SELECT",
            "read the lineage of a CREATE TABLE ... AS SELECT",
        )
    try:
        bound = binder(normalized(schema), target)
        kinds = [bound.sqltype(kind) for kind in lineage.types]
    except (LineageError, duckdb.Error):
        raise ResultSchemaError(target, "DuckDB could not bind the statement's SELECT", "fix the statement") from None
    try:
        return iceberg_schema([(column.name, kind) for column, kind in zip(lineage.columns, kinds, strict=True)])
    except NoIcebergTypeError as error:
        raise ResultSchemaError(
            target,
            f"no Iceberg type holds the type {error.duckdb_name} of column {error.column}",
            f"write it as CAST(... AS {error.cast_to})",
        ) from None


def result_schema(
    query: str, tables: Mapping[TableRef, Table], target: TableRef, session: SessionSettings | None = None
) -> Schema:
    """Return the Iceberg schema of the rows `query` gives, as a CREATE TABLE ... AS of `target` creates it.

    DuckDB binds the query, under `session`, over empty tables of the tables' current schemas (each column of the
    DuckDB type that holds its Iceberg type): the names and types are DuckDB's, each held by the Iceberg type
    `types.iceberg_type` maps it to, as the write gives them. No data file is read.

    Args:
        query: the statement's SELECT, as DuckDB runs it.
        tables: every table the query reads, as loaded from the catalog.
        target: the table the statement creates (named in the error).
        session: the DuckDB session settings the statement runs under.

    Returns:
        The schema, fields numbered from 1 (the catalog numbers them afresh).

    Raises:
        ResultSchemaError: when DuckDB cannot bind the query or name a table, or no Iceberg type holds a
            column's type.
    """
    connection = sandboxed_connection(session)
    try:
        try:
            for ref, table in tables.items():
                columns = ", ".join(f"{quoted(f.name)} {duckdb_type(f.field_type)}" for f in table.schema().fields)
                connection.execute(f"CREATE TABLE {duckdb_name(connection, ref)} ({columns})")
        except NamespaceTooDeepError as error:
            raise ResultSchemaError(
                target,
                f"it reads {error.table}, whose namespace DuckDB cannot name",
                "keep the table in a namespace of one or two levels",
            ) from None
        lock_down(connection, [])
        try:
            relation = connection.sql(query)
        except (duckdb.Error, UnicodeDecodeError):
            raise ResultSchemaError(
                target, "DuckDB could not bind the statement's SELECT", "fix the statement"
            ) from None
        if relation is None:
            raise ResultSchemaError(target, "the statement's query is not a SELECT", "fix the statement")
        try:
            return iceberg_schema(list(zip(relation.columns, relation.types, strict=True)))
        except NoIcebergTypeError as error:
            raise ResultSchemaError(
                target,
                f"no Iceberg type holds the type {error.duckdb_name} of column {error.column}",
                f"write it as CAST(... AS {error.cast_to})",
            ) from None
    finally:
        connection.close()
