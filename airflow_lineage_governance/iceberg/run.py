"""Running one statement's SELECT on DuckDB over pinned Iceberg reads, and writing its result."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.catalog import TableName, as_table, load_tables
from airflow_lineage_governance.iceberg.errors import IcebergWriteError, NamespaceTooDeepError, without_values
from airflow_lineage_governance.iceberg.partitions import APPEND, OVERWRITE_PARTITIONS, PartitionField
from airflow_lineage_governance.iceberg.read import PinnedRead, expose_tables, lock_down, sandboxed_connection
from airflow_lineage_governance.iceberg.write import (
    WriteResult,
    append_once,
    check_target_name,
    create_or_replace,
    existing_target,
    overwrite_partitions,
)
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef

# DuckDB types an Iceberg table cannot hold, and the cast to suggest for each.
_UNSTORABLE = {"HUGEINT": "CAST(... AS DECIMAL(38, 0)) or CAST(... AS BIGINT)",
               "UHUGEINT": "CAST(... AS DECIMAL(38, 0)) or CAST(... AS BIGINT)",
               "INTERVAL": "CAST(... AS VARCHAR), or epoch(...) for seconds as a number",
               "TIMESTAMP_NS": "CAST(... AS TIMESTAMP) (microseconds)", "TIME_NS": "CAST(... AS TIME)",
               "UNION": "CAST(... AS VARCHAR)", "\"NULL\"": "CAST(NULL AS VARCHAR), or the type the column should have",
               "NULL": "CAST(NULL AS VARCHAR), or the type the column should have", "BIT": "CAST(... AS VARCHAR)"}


def _check_result_types(target: TableRef, names: Sequence[str], types: Sequence[str]) -> None:
    """Raises IcebergWriteError naming the first result column whose DuckDB type (or a type nested in it) an
    Iceberg table cannot hold, and the cast to write instead."""
    for name, kind in zip(names, types, strict=True):
        words = set(kind.replace("(", " ").replace(")", " ").replace(",", " ").replace("[", " ").split())
        for unstorable, cast in _UNSTORABLE.items():
            if unstorable in words or kind.startswith(unstorable + "("):
                raise IcebergWriteError(target, f"column {name} has the type {kind}, which an Iceberg table cannot "
                                        "hold", f"write it as {cast} in the SELECT; nothing was written")


@dataclass(frozen=True)
class StatementRun:
    """What running a statement read and wrote, and how long each part took (seconds)."""

    reads: list[PinnedRead]
    write: WriteResult
    timings: dict[str, float] = field(default_factory=dict)


def run_statement(catalog: Catalog, *, kind: StatementKind, target: TableName, query: str,
                  sources: Sequence[TableName], insert_columns: Sequence[str] | None = None,
                  snapshot_properties: Mapping[str, str] | None = None,
                  loaded: Mapping[TableRef, Table] | None = None, replace: bool = True,
                  partition_by: Sequence[PartitionField] = (), write_mode: str = APPEND,
                  if_not_exists: bool = False) -> StatementRun:
    """Runs `query` (the statement's SELECT) on DuckDB over `sources` pinned to their current snapshots and
    writes the result to `target`: replaced whole for a CTAS, appended for an INSERT (into `insert_columns`
    by position). `loaded` holds tables already loaded (as the lineage read them): they are not loaded again.
    `replace` False (a plain CREATE TABLE ... AS) replaces an existing target only when this task instance wrote it
    (the WRITE_KEY of `snapshot_properties`). A CTAS target is partitioned by `partition_by`; an INSERT with
    `write_mode` OVERWRITE_PARTITIONS replaces the partitions its rows fall in instead of appending. DuckDB runs
    sandboxed: it reads only the pinned snapshots' data files. With `if_not_exists` (CREATE TABLE IF NOT EXISTS
    ... AS) an existing target is left as it is: nothing is run or written (`write.untouched`).
    Raises IcebergWriteError when the target's name cannot be stored, DuckDB rejects the query, or the target
    exists and may not be replaced; nothing is written then."""
    known = loaded or {}
    target = as_table(target)
    check_target_name(target)
    if if_not_exists and kind == StatementKind.CREATE_TABLE_AS:
        existing = known.get(target) or load_tables(catalog, [target]).get(target)
        if existing is not None:
            return StatementRun([], existing_target(existing, target, dict(snapshot_properties or {})))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    connection = sandboxed_connection()
    try:
        try:
            reads = expose_tables(connection, catalog, sources, known)
            lock_down(connection, reads)
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
            relation = connection.sql(query)
            _check_result_types(target, relation.columns, [str(kind) for kind in relation.types])
            result = relation.to_arrow_table()
        except duckdb.Error as error:
            raise IcebergWriteError(target, f"DuckDB could not run the statement's SELECT "
                                    f"({without_values(str(error))})",
                                    "fix the statement; nothing was written") from None
        timings["query"] = time.perf_counter() - started
    finally:
        connection.close()
    started = time.perf_counter()
    properties = dict(snapshot_properties or {})
    try:
        if kind == StatementKind.INSERT and write_mode == OVERWRITE_PARTITIONS:
            write = overwrite_partitions(catalog, target, list(insert_columns or []), result, properties,
                                         known.get(target))
        elif kind == StatementKind.INSERT:
            write = append_once(catalog, target, list(insert_columns or []), result, properties, known.get(target))
        else:
            write = create_or_replace(catalog, target, result, properties, known.get(target), replace=replace,
                                      partition_by=partition_by, if_not_exists=if_not_exists)
    except (ValueError, TypeError, pa.ArrowException) as error:
        raise IcebergWriteError(target, f"the result could not be written ({without_values(str(error))})",
                                "cast the SELECT's values to the table's types; nothing was written") from None
    timings["write"] = time.perf_counter() - started
    return StatementRun(reads, write, timings)
