"""Running one statement's SELECT on DuckDB over pinned Iceberg reads, and writing its result."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.catalog import TableName, as_table
from airflow_lineage_governance.iceberg.errors import IcebergWriteError, NamespaceTooDeepError, without_values
from airflow_lineage_governance.iceberg.read import PinnedRead, expose_tables
from airflow_lineage_governance.iceberg.write import WriteResult, append_once, create_or_replace
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef


@dataclass(frozen=True)
class StatementRun:
    """What running a statement read and wrote, and how long each part took (seconds)."""

    reads: list[PinnedRead]
    write: WriteResult
    timings: dict[str, float] = field(default_factory=dict)


def run_statement(catalog: Catalog, *, kind: StatementKind, target: TableName, query: str,
                  sources: Sequence[TableName], insert_columns: Sequence[str] | None = None,
                  snapshot_properties: Mapping[str, str] | None = None,
                  loaded: Mapping[TableRef, Table] | None = None) -> StatementRun:
    """Runs `query` (the statement's SELECT) on DuckDB over `sources` pinned to their current snapshots and
    writes the result to `target`: replaced whole for a CTAS, appended for an INSERT (into `insert_columns`
    by position). `loaded` holds tables already loaded (as the lineage read them): they are not loaded again.
    Raises IcebergWriteError when DuckDB rejects the query; nothing is written then."""
    known = loaded or {}
    target = as_table(target)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    connection = duckdb.connect()
    try:
        try:
            reads = expose_tables(connection, catalog, sources, known)
        except NamespaceTooDeepError as error:
            raise IcebergWriteError(target, f"it reads {error.table}, whose namespace DuckDB cannot name",
                                    "keep the table in a namespace of one or two levels") from None
        except duckdb.Error as error:
            raise IcebergWriteError(target, f"the tables it reads could not be opened in DuckDB "
                                    f"({without_values(str(error))})",
                                    "check the source tables; nothing was written") from None
        timings["read"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            result = connection.sql(query).to_arrow_table()
        except duckdb.Error as error:
            raise IcebergWriteError(target, f"DuckDB could not run the statement's SELECT "
                                    f"({without_values(str(error))})",
                                    "fix the statement; nothing was written") from None
        timings["query"] = time.perf_counter() - started
    finally:
        connection.close()
    started = time.perf_counter()
    properties = dict(snapshot_properties or {})
    if kind == StatementKind.INSERT:
        write = append_once(catalog, target, list(insert_columns or []), result, properties, known.get(target))
    else:
        write = create_or_replace(catalog, target, result, properties, known.get(target))
    timings["write"] = time.perf_counter() - started
    return StatementRun(reads, write, timings)
