"""Exposing Iceberg tables to DuckDB under their names, each pinned to one snapshot: a table of a one-level
namespace as `schema.table`, of a two-level namespace `a.b` as `a.b.table` (an in-memory DuckDB catalog `a`
holding the schema `b`).

Fast path: DuckDB scans the snapshot's Parquet data files directly. A table with delete files, more than
one schema in its history, or data outside the local file system takes the correct path instead: pyiceberg
applies deletes and schema evolution and streams Arrow batches into DuckDB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlparse

import duckdb
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.catalog import TableName, as_table
from airflow_lineage_governance.iceberg.errors import NamespaceTooDeepError
from airflow_lineage_governance.refs import TableRef

DIRECT_SCAN = "direct parquet scan"
ARROW_READER = "pyiceberg arrow reader"


@dataclass(frozen=True)
class PinnedRead:
    """One table as the statement read it."""

    table: TableRef
    snapshot_id: int | None
    path: str
    reason: str = ""
    files: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The local data files DuckDB reads for the direct scan (empty when the rows came through Arrow)."""


UNSAFE_DEFAULTS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def sandboxed_connection() -> duckdb.DuckDBPyConnection:
    """Returns an in-memory DuckDB connection that installs and loads no extension on its own; call lock_down once
    the tables are exposed."""
    return duckdb.connect(config=dict(UNSAFE_DEFAULTS))


def lock_down(connection: duckdb.DuckDBPyConnection, reads: Sequence[PinnedRead]) -> None:
    """Confines the connection to the data files of the pinned snapshots: external access off but for those
    files (no other file, URL, ATTACH, COPY or extension), and the configuration locked so a query cannot
    undo it."""
    files = sorted({path for read in reads for path in read.files})
    if files:
        listed = ", ".join("'" + path.replace("'", "''") + "'" for path in files)
        connection.execute(f"SET allowed_paths = [{listed}]")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _local_path(location: str) -> str | None:
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return parsed.path
    if parsed.scheme == "" and location.startswith("/"):
        return location
    return None


def duckdb_name(connection: duckdb.DuckDBPyConnection, ref: TableRef) -> str:
    """Returns the quoted name under which DuckDB finds `ref`, creating its schema (and, for a two-level
    namespace, its in-memory catalog) when missing; raises NamespaceTooDeepError past two levels."""
    if len(ref.namespace) == 1:
        schema = _quoted(ref.namespace[0])
    elif len(ref.namespace) == 2:
        catalog = _quoted(ref.namespace[0])
        connection.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {catalog}")
        schema = f"{catalog}.{_quoted(ref.namespace[1])}"
    else:
        raise NamespaceTooDeepError(ref, f"its namespace has {len(ref.namespace)} levels, and DuckDB names at "
                                    "most two (catalog.schema)", "keep the table in a namespace of one or two levels")
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    return f"{schema}.{_quoted(ref.name)}"


def _fallback_reason(table: Table, snapshot_id: int | None) -> tuple[str, list[str]]:
    """Returns why the direct scan would be wrong ('' when it is right) and the local data file paths."""
    if len(table.metadata.schemas) > 1:
        return "the table's schema has evolved", []
    if snapshot_id is None:
        return "", []
    paths = []
    for task in table.scan(snapshot_id=snapshot_id).plan_files():
        if task.delete_files:
            return "the snapshot has delete files", []
        path = _local_path(task.file.file_path)
        if path is None:
            return "its data files are not on the local file system", []
        paths.append(path)
    return "", paths


def expose_table(connection: duckdb.DuckDBPyConnection, catalog: Catalog, name: TableName,
                 table: Table | None = None) -> PinnedRead:
    """Creates `ref` in DuckDB as the table's current snapshot (of `table` when given, already loaded, else
    loaded from the catalog) and returns how it was read; raises pyiceberg's NoSuchTableError when the catalog
    has no such table, NamespaceTooDeepError when DuckDB cannot name it."""
    ref = as_table(name)
    target = duckdb_name(connection, ref)
    if table is None:
        table = catalog.load_table(ref.identifier)
    snapshot = table.current_snapshot()
    snapshot_id = snapshot.snapshot_id if snapshot else None
    schema = table.schema()
    columns = ", ".join(_quoted(field.name) for field in schema.fields)
    reason, paths = _fallback_reason(table, snapshot_id)
    if not reason and paths:
        files = ", ".join("'" + path.replace("'", "''") + "'" for path in paths)
        connection.execute(f"CREATE VIEW {target} AS SELECT {columns} FROM read_parquet([{files}])")
        return PinnedRead(ref, snapshot_id, DIRECT_SCAN, files=tuple(paths))
    if snapshot_id is None:
        empty = schema.as_arrow().empty_table()
        reader = pa.RecordBatchReader.from_batches(empty.schema, empty.to_batches())
    else:
        reader = table.scan(snapshot_id=snapshot_id).to_arrow_batch_reader()
    relation = "__iceberg_" + "_".join(ref.identifier)
    # The reader projects by field id in the current schema's order, but may keep the data files' names.
    renamed = ", ".join(f"{_quoted(old)} AS {_quoted(field.name)}"
                        for old, field in zip(reader.schema.names, schema.fields, strict=True))
    connection.register(relation, reader)
    try:
        connection.execute(f"CREATE TABLE {target} AS SELECT {renamed} FROM {_quoted(relation)}")
    finally:
        connection.unregister(relation)
    return PinnedRead(ref, snapshot_id, ARROW_READER, reason or "the table is empty")


def expose_tables(connection: duckdb.DuckDBPyConnection, catalog: Catalog, tables: Sequence[TableName],
                  loaded: Mapping[TableRef, Table] | None = None) -> list[PinnedRead]:
    """Exposes every table in `tables` (those in `loaded` as loaded there) and returns how each was read, in
    the same order."""
    known = loaded or {}
    return [expose_table(connection, catalog, ref, known.get(ref)) for ref in map(as_table, tables)]
