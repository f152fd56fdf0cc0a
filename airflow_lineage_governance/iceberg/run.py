"""Running one statement's SELECT on DuckDB over pinned Iceberg reads, and writing its result."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.casts import cast_stream, ctas_casts, engine_message, insert_casts
from airflow_lineage_governance.iceberg.catalog import TableName, as_table, load_tables
from airflow_lineage_governance.iceberg.errors import IcebergWriteError, NamespaceTooDeepError, without_values
from airflow_lineage_governance.iceberg.partitions import APPEND, OVERWRITE_PARTITIONS, PartitionField
from airflow_lineage_governance.iceberg.read import PinnedRead, expose_tables, lock_down, sandboxed_connection
from airflow_lineage_governance.iceberg.resources import Resources, spill_folder
from airflow_lineage_governance.iceberg.returning import ReturnedRows
from airflow_lineage_governance.iceberg.session import SessionSettings
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


def _insert_target(catalog: Catalog, target: TableRef, known: Mapping[TableRef, Table]) -> Table:
    """Return the table an INSERT writes (as already loaded, else from the catalog).

    Raises IcebergWriteError when it does not exist.
    """
    if target in known:
        return known[target]
    try:
        return catalog.load_table(target.identifier)
    except NoSuchTableError:
        raise IcebergWriteError(
            target,
            "the INSERT writes a table that does not exist",
            "create it first, with CREATE TABLE ... AS; nothing was written",
        ) from None


@dataclass(frozen=True)
class StatementRun:
    """What running a statement read and wrote, and how long each part took (seconds)."""

    reads: list[PinnedRead]
    write: WriteResult
    timings: dict[str, float] = field(default_factory=dict)
    returned: ReturnedRows | None = None
    """The rows a MERGE, UPDATE or DELETE ... RETURNING gave (None without RETURNING, or when an earlier try of
    the task wrote the snapshot)."""


def run_statement(
    catalog: Catalog,
    *,
    kind: StatementKind,
    target: TableName,
    query: str,
    sources: Sequence[TableName],
    insert_columns: Sequence[str] | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    loaded: Mapping[TableRef, Table] | None = None,
    replace: bool = True,
    partition_by: Sequence[PartitionField] = (),
    write_mode: str = APPEND,
    if_not_exists: bool = False,
    session: SessionSettings | None = None,
    resources: Resources | None = None,
) -> StatementRun:
    """Run `query` (the statement's SELECT) on DuckDB over `sources` pinned to their current snapshots.

    The result is written to `target`: replaced whole for a CTAS, appended for an INSERT (into `insert_columns` by
    position). DuckDB casts the values before they leave it, as it would for a table of its own: for an INSERT to the
    target's column types, for a CTAS to the types that hold the SELECT's types in Iceberg (`types.iceberg_type`), of
    which the new table's schema is made. `loaded` holds tables already loaded (as the lineage read them): they are not
    loaded again. `replace` False (a plain CREATE TABLE ... AS) replaces an existing target only when this task instance
    wrote it (the WRITE_KEY of `snapshot_properties`). A CTAS target is partitioned by `partition_by`; an INSERT with
    `write_mode` OVERWRITE_PARTITIONS replaces the partitions its rows fall in instead of appending. DuckDB runs
    sandboxed, under `session` (default: UTC), within `resources` (default: the task's share of the machine), spilling
    only to a folder of its own that is removed when the statement ends: it reads only the pinned snapshots' data files,
    and the result streams into the target's data files in bounded memory. With `if_not_exists` (CREATE TABLE IF NOT
    EXISTS ... AS) an existing target is left as it is: nothing is run or written (`write.untouched`). Raises
    IcebergWriteError when the target's name cannot be stored, DuckDB rejects the query or cannot cast a value to its
    column's type, no Iceberg type holds a CTAS column's type, a date or timestamp is beyond what the table can store,
    or the target exists and may not be replaced; nothing is written then.
    """
    known = loaded or {}
    target = as_table(target)
    check_target_name(target)
    if if_not_exists and kind == StatementKind.CREATE_TABLE_AS:
        existing = known.get(target) or load_tables(catalog, [target]).get(target)
        if existing is not None:
            return StatementRun([], existing_target(existing, target, dict(snapshot_properties or {})))
    table = _insert_target(catalog, target, known) if kind == StatementKind.INSERT else None
    with spill_folder(resources or Resources()) as spill:
        return _run_in(
            catalog,
            spill,
            kind=kind,
            target=target,
            query=query,
            sources=sources,
            insert_columns=insert_columns,
            snapshot_properties=snapshot_properties,
            known=known,
            table=table,
            replace=replace,
            partition_by=partition_by,
            write_mode=write_mode,
            if_not_exists=if_not_exists,
            session=session,
            resources=resources,
        )


def _run_in(
    catalog: Catalog,
    spill: str,
    *,
    kind: StatementKind,
    target: TableRef,
    query: str,
    sources: Sequence[TableName],
    insert_columns: Sequence[str] | None,
    snapshot_properties: Mapping[str, str] | None,
    known: Mapping[TableRef, Table],
    table: Table | None,
    replace: bool,
    partition_by: Sequence[PartitionField],
    write_mode: str,
    if_not_exists: bool,
    session: SessionSettings | None,
    resources: Resources | None,
) -> StatementRun:
    """Run the statement as run_statement says, DuckDB spilling to `spill`."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    connection = sandboxed_connection(session, resources, spill)
    staging = os.path.join(spill, "result")
    os.mkdir(staging)
    try:
        try:
            reads = expose_tables(connection, catalog, sources, known)
            lock_down(connection, reads, staging)
        except NamespaceTooDeepError as error:
            raise IcebergWriteError(
                target,
                f"it reads {error.table}, whose namespace DuckDB cannot name",
                "keep the table in a namespace of one or two levels",
            ) from None
        except duckdb.Error as error:
            raise IcebergWriteError(
                target,
                f"the tables it reads could not be opened in DuckDB ({without_values(str(error))})",
                "check the source tables; nothing was written",
            ) from None
        timings["read"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            relation = connection.sql(query)
        except (duckdb.Error, UnicodeDecodeError) as error:
            raise IcebergWriteError(
                target,
                f"DuckDB could not run the statement's SELECT ({engine_message(error)})",
                "fix the statement; nothing was written",
            ) from None
        if relation is None:
            raise IcebergWriteError(
                target, "the statement's query is not a SELECT", "fix the statement; nothing was written"
            )
        schema = None
        if table is not None:
            casts = insert_casts(target, table.schema(), list(insert_columns or []), len(relation.columns))
        else:
            schema, casts = ctas_casts(target, relation.columns, relation.types)
        result = cast_stream(target, relation, casts, staging=staging)
        timings["query"] = time.perf_counter() - started
        started = time.perf_counter()
        properties = dict(snapshot_properties or {})
        columns = [cast.name for cast in casts]
        try:
            if table is not None and write_mode == OVERWRITE_PARTITIONS:
                write = overwrite_partitions(catalog, target, columns, result, properties, table)
            elif table is not None:
                write = append_once(catalog, target, columns, result, properties, table)
            else:
                write = create_or_replace(
                    catalog,
                    target,
                    result,
                    properties,
                    known.get(target),
                    replace=replace,
                    partition_by=partition_by,
                    if_not_exists=if_not_exists,
                    schema=schema,
                )
        except (ValueError, TypeError, OverflowError, pa.ArrowException) as error:
            raise IcebergWriteError(
                target,
                f"the result could not be written ({without_values(str(error))})",
                "cast the SELECT's values to the table's types; nothing was written",
            ) from None
        timings["write"] = time.perf_counter() - started
    finally:
        connection.close()
    return StatementRun(reads, write, timings)
