"""Exposing Iceberg tables to DuckDB under their `namespace.table` names, each pinned to one snapshot.

Fast path: DuckDB scans the snapshot's Parquet data files directly. A table with delete files, more than
one schema in its history, or data outside the local file system takes the correct path instead: pyiceberg
applies deletes and schema evolution and streams Arrow batches into DuckDB.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

import duckdb
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

DIRECT_SCAN = "direct parquet scan"
ARROW_READER = "pyiceberg arrow reader"


@dataclass(frozen=True)
class PinnedRead:
    """One table as the statement read it."""

    table: str
    snapshot_id: int | None
    path: str
    reason: str = ""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _local_path(location: str) -> str | None:
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return parsed.path
    if parsed.scheme == "" and location.startswith("/"):
        return location
    return None


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


def expose_table(connection: duckdb.DuckDBPyConnection, catalog: Catalog, name: str) -> PinnedRead:
    """Creates `name` (namespace.table) in DuckDB as the table's current snapshot and returns how it was
    read; raises pyiceberg's NoSuchTableError when the catalog has no such table."""
    table = catalog.load_table(name)
    snapshot = table.current_snapshot()
    snapshot_id = snapshot.snapshot_id if snapshot else None
    namespace, table_name = name.rsplit(".", 1)
    target = f"{_quoted(namespace)}.{_quoted(table_name)}"
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {_quoted(namespace)}")
    schema = table.schema()
    columns = ", ".join(_quoted(field.name) for field in schema.fields)
    reason, paths = _fallback_reason(table, snapshot_id)
    if not reason and paths:
        files = ", ".join("'" + path.replace("'", "''") + "'" for path in paths)
        connection.execute(f"CREATE VIEW {target} AS SELECT {columns} FROM read_parquet([{files}])")
        return PinnedRead(name, snapshot_id, DIRECT_SCAN)
    if snapshot_id is None:
        empty = schema.as_arrow().empty_table()
        reader = pa.RecordBatchReader.from_batches(empty.schema, empty.to_batches())
    else:
        reader = table.scan(snapshot_id=snapshot_id).to_arrow_batch_reader()
    relation = f"__iceberg_{namespace}_{table_name}"
    # The reader projects by field id in the current schema's order, but may keep the data files' names.
    renamed = ", ".join(f"{_quoted(old)} AS {_quoted(field.name)}"
                        for old, field in zip(reader.schema.names, schema.fields, strict=True))
    connection.register(relation, reader)
    try:
        connection.execute(f"CREATE TABLE {target} AS SELECT {renamed} FROM {_quoted(relation)}")
    finally:
        connection.unregister(relation)
    return PinnedRead(name, snapshot_id, ARROW_READER, reason or "the table is empty")


def expose_tables(connection: duckdb.DuckDBPyConnection, catalog: Catalog, names: list[str]) -> list[PinnedRead]:
    """Exposes every table in `names` and returns how each was read, in the same order."""
    return [expose_table(connection, catalog, name) for name in names]
