"""Exposing Iceberg tables to DuckDB under their names, each pinned to one snapshot.

A table of a one-level namespace as `schema.table`, of a two-level namespace `a.b` as `a.b.table` (an in-memory DuckDB
catalog `a` holding the schema `b`).

Every read of the provider goes through `expose_table`, which gives exactly the rows and types the snapshot
holds: DuckDB scans the snapshot's data files with the columns matched by Iceberg field id, values taken from
the files only (never from their paths), NaN never assumed absent from a file's statistics. Where DuckDB alone
cannot read the snapshot right (delete files, a nested field renamed, files without field ids, files off the
local file system), pyiceberg's reader applies them and DuckDB casts its batches to the table's types.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import chain, count
from typing import Any
from urllib.parse import urlparse

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType, UUIDType

from airflow_lineage_governance.iceberg.catalog import TableName, as_table
from airflow_lineage_governance.iceberg.errors import NamespaceTooDeepError
from airflow_lineage_governance.iceberg.manifests import ManifestEntries
from airflow_lineage_governance.iceberg.resources import Resources, apply_resources
from airflow_lineage_governance.iceberg.session import SessionSettings, apply_session
from airflow_lineage_governance.iceberg.types import duckdb_type, quoted, text_literal
from airflow_lineage_governance.refs import TableRef

DIRECT_SCAN = "direct parquet scan"
ARROW_READER = "pyiceberg arrow reader"
_NAME_MAPPING = "schema.name-mapping.default"


@dataclass(frozen=True)
class PinnedRead:
    """One table as the statement read it."""

    table: TableRef
    snapshot_id: int | None
    path: str
    reason: str = ""
    files: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The local files DuckDB reads for the direct scan (empty when the rows came through Arrow)."""
    data_files: Mapping[str, DataFile] = field(default_factory=dict, repr=False, compare=False)
    """Each data file of the snapshot, by the value its rows hold in the file column (when one was asked for)."""


UNSAFE_DEFAULTS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

_spare_lock = threading.Lock()
_spare: list[tuple[int, Future[duckdb.DuckDBPyConnection]]] = []
"""The connection being opened for the next statement, with the id of the process that opened it."""


def _new_connection() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(config=dict(UNSAFE_DEFAULTS))


def prepare_sandboxed_connection() -> None:
    """Start opening the next `sandboxed_connection` in the background, so that it is ready when asked for.

    Opening an in-memory DuckDB database takes tens of milliseconds, during which DuckDB holds no Python lock:
    started before the catalog is read and the lineage bound, it costs the statement nothing. At most one
    connection waits at a time.
    """
    with _spare_lock:
        if not _spare:
            future: Future[duckdb.DuckDBPyConnection] = Future()
            _spare.append((os.getpid(), future))
            threading.Thread(target=_open_into, args=(future,), name="duckdb-connect", daemon=True).start()


def _open_into(future: Future[duckdb.DuckDBPyConnection]) -> None:
    try:
        future.set_result(_new_connection())
    except BaseException as error:  # handed to the caller of sandboxed_connection
        future.set_exception(error)


def _taken_connection() -> duckdb.DuckDBPyConnection:
    """Return the connection `prepare_sandboxed_connection` opened (waiting for it), else a new one."""
    with _spare_lock:
        pid, future = _spare.pop() if _spare else (None, None)
    if future is not None and pid == os.getpid():  # a forked child never uses its parent's database
        try:
            return future.result()
        except duckdb.Error:
            pass
    return _new_connection()


def sandboxed_connection(
    session: SessionSettings | None = None,
    resources: Resources | None = None,
    spill: str | None = None,
    database: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Return an in-memory DuckDB connection (or one on a new `database` file) that installs and loads no extension.

    The connection runs under `session` (default: `SessionSettings()`, UTC), never the worker's environment,
    and never trusts a Parquet file's float statistics to leave NaN out. It takes at most the memory and threads
    of `resources` (default: the task's share of the machine) and spills only to `spill` (none: it does not
    spill). Call `lock_down` once the tables are exposed.

    Args:
        session: the DuckDB session settings the statement runs under.
        resources: the task's DuckDB memory limit and threads.
        spill: the task's spill folder (`resources.spill_folder`), or None.
        database: a new DuckDB database file (in the spill folder) to hold the connection's tables, whose blocks
            DuckDB can evict to disk; None for an in-memory database.

    Raises:
        SessionSettingError: when DuckDB refuses one of the settings.
    """
    connection = _taken_connection() if database is None else duckdb.connect(database, config=dict(UNSAFE_DEFAULTS))
    apply_session(connection, session or SessionSettings())
    apply_resources(connection, resources or Resources(), spill)
    connection.execute("SET parquet_can_have_nan = true")
    # A statement reads some files more than once (a rewrite: the files it can change, then their rows); the files of
    # a snapshot never change, so their footers are read once.
    connection.execute("SET parquet_metadata_cache = true")
    return connection


def close_in_background(connection: duckdb.DuckDBPyConnection) -> threading.Thread:
    """Close a connection no one uses any more on a thread of its own, so its in-memory database is freed meanwhile.

    DuckDB holds no Python lock while it frees the database, so the statement's commit goes on at once. Join the
    returned thread before the statement returns: a process forked while DuckDB frees a database would inherit the
    locks DuckDB holds then.
    """
    closing = threading.Thread(target=connection.close, name="duckdb-close", daemon=True)
    closing.start()
    return closing


def lock_down(connection: duckdb.DuckDBPyConnection, reads: Sequence[PinnedRead], staging: str | None = None) -> None:
    """Confine the connection to the data files of the pinned snapshots.

    External access off but for those files (no other file, URL, ATTACH, COPY or extension) and the `staging` folder,
    where the connection writes the result's data file, and the configuration locked so a query cannot undo it.
    """
    files = sorted({path for read in reads for path in read.files})
    if files:
        connection.execute(f"SET allowed_paths = [{_listed(files)}]")
    if staging is not None:
        connection.execute(f"SET allowed_directories = [{text_literal(staging.rstrip('/') + '/')}]")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")


def _listed(paths: Sequence[str]) -> str:
    return ", ".join(map(text_literal, paths))


def local_path(location: str) -> str | None:
    """Return the local file system path of `location` (a `file:` URI or an absolute path), None for another."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return parsed.path
    if parsed.scheme == "" and location.startswith("/"):
        return location
    return None


def duckdb_name(connection: duckdb.DuckDBPyConnection, ref: TableRef) -> str:
    """Return the quoted name under which DuckDB finds `ref`, creating its schema when missing.

    For a two-level namespace, its in-memory catalog too. Raises NamespaceTooDeepError past two levels.
    """
    _check_nameable(ref)
    if len(ref.namespace) == 1:
        schema = quoted(ref.namespace[0])
    else:
        catalog = quoted(ref.namespace[0])
        connection.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {catalog}")
        schema = f"{catalog}.{quoted(ref.namespace[1])}"
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    return f"{schema}.{quoted(ref.name)}"


def _check_nameable(ref: TableRef) -> None:
    """Raise NamespaceTooDeepError when DuckDB cannot name the table: its namespace has more than two levels."""
    if len(ref.namespace) not in (1, 2):
        raise NamespaceTooDeepError(
            ref,
            f"its namespace has {len(ref.namespace)} levels, and DuckDB names at most two (catalog.schema)",
            "keep the table in a namespace of one or two levels",
        )


def _nested_names(schema: Schema) -> dict[int, tuple[int | str, ...]]:
    """Return every field nested in a struct, list or map column, by field id.

    Its column's field id, then the names leading to it.
    """
    found: dict[int, tuple[int | str, ...]] = {}

    def visit(kind: IcebergType, path: tuple[int | str, ...]) -> None:
        children: list[tuple[int, str, IcebergType]] = []
        if isinstance(kind, StructType):
            children = [(f.field_id, f.name, f.field_type) for f in kind.fields]
        elif isinstance(kind, ListType):
            children = [(kind.element_id, "element", kind.element_type)]
        elif isinstance(kind, MapType):
            children = [(kind.key_id, "key", kind.key_type), (kind.value_id, "value", kind.value_type)]
        for field_id, name, child in children:
            found[field_id] = (*path, name)
            visit(child, (*path, name))

    for column in schema.fields:
        visit(column.field_type, (column.field_id,))
    return found


def _nested_fields_changed(table: Table) -> bool:
    """Return whether a field nested in a column was renamed, or a nested name given to another field.

    In the table's history: DuckDB matches nested fields by name, so those tables take pyiceberg's reader.
    """
    current = _nested_names(table.schema())
    by_path = {path: field_id for field_id, path in current.items()}
    for schema in table.metadata.schemas:
        for field_id, path in _nested_names(schema).items():
            if current.get(field_id, path) != path or by_path.get(path, field_id) != field_id:
                return True
    return False


def _fallback_reason(table: Table, tasks: Sequence[FileScanTask]) -> str:
    """Return why DuckDB's scan of the files would be wrong ('' when it is right)."""
    if _NAME_MAPPING in table.metadata.properties:
        return "its data files may lack field ids (the table has a name mapping)"
    if _nested_fields_changed(table):
        return "a field nested in one of its columns has been renamed"
    for task in tasks:
        if task.delete_files:
            return "the snapshot has delete files"
        if local_path(task.file.file_path) is None:
            return "its data files are not on the local file system"
    return ""


def _schema_map(fields: Sequence[NestedField]) -> str:
    """Return the `schema` option of read_parquet that reads each column by its field id.

    As its current name and type (NULL in a file written before the column was added).
    """
    entries = ", ".join(
        f"{f.field_id}: {{name: {text_literal(f.name)}, type: {text_literal(duckdb_type(f.field_type))}, "
        "default_value: NULL}"
        for f in fields
    )
    return f"MAP {{{entries}}}"


def _file_has_field(data_file: DataFile, path: str, field_id: int) -> bool:
    """Return whether the data file holds the column `field_id`.

    Read from its footer when its metrics say nothing of the column.
    """
    for metrics in (data_file.value_counts, data_file.null_value_counts, data_file.column_sizes):
        if metrics and field_id in metrics:
            return True
    return any(
        f.metadata and f.metadata.get(b"PARQUET:field_id") == str(field_id).encode() for f in pq.read_schema(path)
    )


def _missing_identity_values(
    table: Table, task: FileScanTask, path: str, fields: Sequence[NestedField]
) -> tuple[tuple[int, Any], ...]:
    """Return, for each identity-partition column the data file lacks, its field id and partition value.

    The value the manifest's partition tuple gives it.
    """
    spec = table.specs().get(task.file.spec_id)
    if spec is None or spec.is_unpartitioned():
        return ()
    wanted = {f.field_id for f in fields}
    found = []
    for position, partition_field in enumerate(spec.fields):
        source = partition_field.source_id
        if isinstance(partition_field.transform, IdentityTransform) and source in wanted:
            if not _file_has_field(task.file, path, source):
                found.append((source, task.file.partition[position]))
    return tuple(found)


def _constants_table(
    connection: duckdb.DuckDBPyConnection,
    fields: Mapping[int, NestedField],
    values: Sequence[tuple[int, Any]],
    names: Iterator[int],
) -> str:
    """Create a one-row DuckDB table holding the partition values `values` and return its quoted name.

    `values` are (field id, value), typed by the table's schema.
    """
    columns = [fields[field_id] for field_id, _ in values]
    row = [value for _, value in values]
    return create_values_table(connection, f"__iceberg_partition_values_{next(names)}", columns, [row])


def create_values_table(
    connection: duckdb.DuckDBPyConnection,
    name: str,
    columns: Sequence[NestedField],
    rows: Sequence[Sequence[Any]],
    text_column: str | None = None,
) -> str:
    """Create the DuckDB table `main.<name>` holding `rows`, each column of its field's DuckDB type.

    Args:
        connection: the statement's connection, not yet locked down.
        name: the table's name (unquoted).
        columns: the fields of the values, in their order in each row; values as pyiceberg holds them (a partition
            tuple's values).
        rows: the rows; with `text_column`, each row's last value is that column's text.
        text_column: the name of a last VARCHAR column, if any.

    Returns:
        The table's quoted name, `main."<name>"`.
    """
    arrays, arrow_fields = [], []
    for position, column in enumerate(columns):
        arrow_type = Schema(column).as_arrow().field(0).type
        is_uuid = isinstance(column.field_type, UUIDType)
        raw = [row[position].bytes if is_uuid and row[position] is not None else row[position] for row in rows]
        arrays.append(pa.array(raw, type=arrow_type))
        arrow_fields.append(pa.field(column.name, arrow_type))
    casts = [
        f"CAST({quoted(column.name)} AS {duckdb_type(column.field_type)}) AS {quoted(column.name)}"
        for column in columns
    ]
    if text_column is not None:
        arrays.append(pa.array([str(row[len(columns)]) for row in rows], type=pa.string()))
        arrow_fields.append(pa.field(text_column, pa.string()))
        casts.append(quoted(text_column))
    registered = f"{name}_arrow"
    connection.register(registered, pa.Table.from_arrays(arrays, schema=pa.schema(arrow_fields)))
    try:
        connection.execute(f"CREATE TABLE main.{quoted(name)} AS SELECT {', '.join(casts)} FROM {quoted(registered)}")
    finally:
        connection.unregister(registered)
    return f"main.{quoted(name)}"


_CONSTANT_TABLES = count()


def _scan_sql(
    connection: duckdb.DuckDBPyConnection, table: Table, tasks: Sequence[FileScanTask], file_column: str | None
) -> tuple[str, list[str], dict[str, DataFile]]:
    """Return the SELECT that reads the tasks' data files as the table's rows, and the local paths it reads.

    And each data file by its path (the file column's value).
    """
    fields = table.schema().fields
    by_id = {f.field_id: f for f in fields}
    groups: dict[tuple[tuple[int, Any], ...], list[str]] = {}
    data_files: dict[str, DataFile] = {}
    for task in tasks:
        path = local_path(task.file.file_path) or task.file.file_path
        data_files[path] = task.file
        groups.setdefault(_missing_identity_values(table, task, path, fields), []).append(path)
    options = f"schema = {_schema_map(fields)}"
    if file_column is not None:
        options += f", filename = {text_literal(file_column)}"
    extra = [quoted(file_column)] if file_column is not None else []
    parts = []
    for missing, paths in groups.items():
        # Values from the files, never from their paths; no row group skipped on float statistics without NaN.
        scan = f"read_parquet([{_listed(paths)}], {options}, hive_partitioning = false, can_have_nan = true)"
        if not missing:
            parts.append(f"SELECT {', '.join([*(quoted(f.name) for f in fields), *extra])} FROM {scan}")
            continue
        constants = _constants_table(connection, by_id, missing, _CONSTANT_TABLES)
        replaced = {field_id for field_id, _ in missing}
        columns = [f"k.{quoted(f.name)}" if f.field_id in replaced else f"f.{quoted(f.name)}" for f in fields]
        parts.append(f"SELECT {', '.join([*columns, *(f'f.{e}' for e in extra)])} FROM {scan} AS f, {constants} AS k")
    return " UNION ALL ".join(parts), sorted(data_files), data_files


def _empty_sql(schema: Schema, file_column: str | None) -> str:
    columns = [f"CAST(NULL AS {duckdb_type(f.field_type)}) AS {quoted(f.name)}" for f in schema.fields]
    if file_column is not None:
        columns.append(f"CAST(NULL AS VARCHAR) AS {quoted(file_column)}")
    return f"SELECT {', '.join(columns)} WHERE false"


def _read_through_arrow(
    connection: duckdb.DuckDBPyConnection,
    table: Table,
    tasks: Sequence[FileScanTask],
    target: str,
    file_column: str | None,
) -> dict[str, DataFile]:
    """Create `target` in DuckDB from pyiceberg's reader of the tasks, each column cast by DuckDB to its table type.

    Returns each data file by the file column's value.
    """
    schema = table.schema()
    relation = "__iceberg_arrow_batches"
    casts = ", ".join(
        f"CAST({quoted(f.name)} AS {duckdb_type(f.field_type)}) AS {quoted(f.name)}" for f in schema.fields
    )
    connection.execute(f"CREATE TABLE {target} AS {_empty_sql(schema, file_column)}")
    scan = ArrowScan(table.metadata, table.io, schema, AlwaysTrue())
    data_files: dict[str, DataFile] = {}
    for task in tasks if file_column is not None else [None]:
        if task is None:
            batches = scan.to_record_batches(tasks)
            extra = ""
        else:
            batches = scan.to_record_batches([task])
            data_files[task.file.file_path] = task.file
            extra = f", {text_literal(task.file.file_path)} AS {quoted(str(file_column))}"
        names = [f.name for f in schema.fields]
        renamed = (batch.rename_columns(names) for batch in batches)
        first = next(renamed, None)
        if first is None:
            continue
        reader = pa.RecordBatchReader.from_batches(first.schema, chain([first], renamed))
        connection.register(relation, reader)
        try:
            connection.execute(f"INSERT INTO {target} SELECT {casts}{extra} FROM {quoted(relation)}")
        finally:
            connection.unregister(relation)
    return data_files


@dataclass(frozen=True)
class ScanPlan:
    """A table's current snapshot and the data files a read of it scans, planned before DuckDB is involved."""

    table: TableRef
    loaded: Table
    snapshot_id: int | None
    tasks: tuple[FileScanTask, ...]
    fallback: str
    """Why DuckDB's scan of the files would be wrong, so pyiceberg's reader reads them ('' when it is right)."""


def plan_scan(
    catalog: Catalog, name: TableName, table: Table | None = None, entries: ManifestEntries | None = None
) -> ScanPlan:
    """Plan the read of the table's current snapshot: its data files, largest first, and how they are read.

    Args:
        catalog: the catalog holding the table.
        name: the table.
        table: the table as already loaded (else it is loaded from the catalog).
        entries: when given, the table's manifests are read through it, so that a later commit of the same
            statement finds them read.

    Returns:
        The plan, which `expose_planned` turns into a DuckDB view or table.

    Raises:
        NoSuchTableError: (pyiceberg's) when the catalog has no such table.
        NamespaceTooDeepError: when DuckDB cannot name the table.
    """
    ref = as_table(name)
    _check_nameable(ref)
    if table is None:
        table = catalog.load_table(ref.identifier)
    snapshot = table.current_snapshot()
    if snapshot is None:
        return ScanPlan(ref, table, None, (), "")
    planned = entries.scan_tasks(snapshot, table.io) if entries is not None else None
    tasks = planned if planned is not None else list(table.scan(snapshot_id=snapshot.snapshot_id).plan_files())
    # Largest files first: DuckDB estimates a list's rows from its first file (join sides are chosen by it).
    tasks.sort(key=lambda task: -task.file.record_count)
    return ScanPlan(ref, table, snapshot.snapshot_id, tuple(tasks), _fallback_reason(table, tasks))


def expose_planned(
    connection: duckdb.DuckDBPyConnection, plan: ScanPlan, *, file_column: str | None = None, held: bool = False
) -> PinnedRead:
    """Create the planned table in DuckDB under its name, as the rows of the planned snapshot; return how it was read.

    Args:
        connection: the statement's connection (from `sandboxed_connection`), not yet locked down.
        plan: the read, from `plan_scan`.
        file_column: when given, the name of an extra column holding each row's data file (`data_files` of
            the result maps its values to the snapshot's data files).
        held: read the data files once into a DuckDB table, for a table the statement reads several times;
            else a view reads them at each query.

    Returns:
        The table, the snapshot read, and how (`DIRECT_SCAN` or `ARROW_READER`, with the reason).

    Raises:
        NamespaceTooDeepError: when DuckDB cannot name the table.
    """
    ref, table, tasks = plan.table, plan.loaded, plan.tasks
    target = duckdb_name(connection, ref)
    if plan.snapshot_id is None:
        connection.execute(f"CREATE TABLE {target} AS {_empty_sql(table.schema(), file_column)}")
        return PinnedRead(ref, None, DIRECT_SCAN, "the table is empty")
    if plan.fallback:
        data_files = _read_through_arrow(connection, table, tasks, target, file_column)
        return PinnedRead(ref, plan.snapshot_id, ARROW_READER, plan.fallback, data_files=data_files)
    if not tasks:
        connection.execute(f"CREATE TABLE {target} AS {_empty_sql(table.schema(), file_column)}")
        return PinnedRead(ref, plan.snapshot_id, DIRECT_SCAN, "the snapshot has no data files")
    sql, paths, data_files = _scan_sql(connection, table, tasks, file_column)
    connection.execute(f"CREATE {'TABLE' if held else 'VIEW'} {target} AS {sql}")
    return PinnedRead(ref, plan.snapshot_id, DIRECT_SCAN, files=tuple(paths), data_files=data_files)


def expose_table(
    connection: duckdb.DuckDBPyConnection,
    catalog: Catalog,
    name: TableName,
    table: Table | None = None,
    *,
    file_column: str | None = None,
) -> PinnedRead:
    """Create `name` in DuckDB as the rows of the table's current snapshot, and return how it was read.

    Args:
        connection: the statement's connection (from `sandboxed_connection`), not yet locked down.
        catalog: the catalog holding the table.
        name: the table.
        table: the table as already loaded (else it is loaded from the catalog).
        file_column: when given, the name of an extra column holding each row's data file (`data_files` of
            the result maps its values to the snapshot's data files).

    Returns:
        The table, the snapshot read, and how (`DIRECT_SCAN` or `ARROW_READER`, with the reason).

    Raises:
        NoSuchTableError: (pyiceberg's) when the catalog has no such table.
        NamespaceTooDeepError: when DuckDB cannot name the table.
    """
    return expose_planned(connection, plan_scan(catalog, name, table), file_column=file_column)


def expose_tables(
    connection: duckdb.DuckDBPyConnection,
    catalog: Catalog,
    tables: Sequence[TableName],
    loaded: Mapping[TableRef, Table] | None = None,
) -> list[PinnedRead]:
    """Expose every table in `tables` and return how each was read, in the same order.

    Those in `loaded` are exposed as loaded there.
    """
    known = loaded or {}
    return [expose_table(connection, catalog, ref, known.get(ref)) for ref in map(as_table, tables)]
