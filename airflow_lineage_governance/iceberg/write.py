"""Writing a query's result to the catalog in one Iceberg commit.

CTAS creates or atomically replaces a table, INSERT appends once per Airflow task instance (a retried try finds its
earlier commit).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    CommitFailedException,
    CommitStateUnknownException,
    TableAlreadyExistsError,
    ValidationException,
)
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema
from pyiceberg.table import Table, Transaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, FloatType

from airflow_lineage_governance.iceberg.catalog import TableName, as_table
from airflow_lineage_governance.iceberg.data_files import (
    ResultStream,
    WrittenFiles,
    chunk_bytes,
    chunks,
    data_location,
    remove_written,
    stream_of,
    write_chunks,
    write_id,
)
from airflow_lineage_governance.iceberg.direct_write import NotDirectlyWritable, directly_writable, write_directly
from airflow_lineage_governance.iceberg.errors import CommitConflictError, IcebergWriteError, without_values
from airflow_lineage_governance.iceberg.orphans import remove_orphans, unreferenced_files_of
from airflow_lineage_governance.iceberg.partitioned import (
    commit_files,
    files_in_partitions,
    partition_names,
    partition_scope,
    set_partition_spec,
    written_partitions,
)
from airflow_lineage_governance.iceberg.partitions import PartitionField, check_columns
from airflow_lineage_governance.iceberg.sort_order import mark_sorted, sort_plan, sorted_stream
from airflow_lineage_governance.iceberg.types import facet_fields
from airflow_lineage_governance.refs import TableRef

# Row groups of DuckDB's own default size let DuckDB read a table with every core (one per row group).
TABLE_PROPERTIES = {"write.parquet.row-group-limit": "122880"}
# The snapshot-summary key that names what wrote an append: the same key finds the earlier commit of a retried
# try, a cleared task or a re-run for the same logical date, and nothing is appended twice.
WRITE_KEY = "airflow.write_key"
TRY_NUMBER = "airflow.try_number"
"""The snapshot-summary key of the Airflow try that committed; a try after the first cleans up after the earlier."""


def write_key(dag_id: str, task_id: str, map_index: int | None, logical_date: str | None, run_id: str) -> str:
    """Return the key of one task instance's append.

    Its DAG, task, map index and logical date (the run id for runs without a logical date).
    """
    return f"{dag_id}/{task_id}/{map_index}/{logical_date or run_id}"


@dataclass(frozen=True)
class RowCounts:
    """What a MERGE, UPDATE or DELETE changed.

    Rows inserted, updated and deleted, and how many of the table's data files it rewrote (copy-on-write) of those its
    pinned snapshot held.
    """

    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files_rewritten: int = 0
    files_in_table: int = 0

    @property
    def changed(self) -> int:
        """Return the rows the statement changed: inserted, updated and deleted together."""
        return self.inserted + self.updated + self.deleted


ROW_COUNT_KEYS = {
    "inserted": "airflow.rows_inserted",
    "updated": "airflow.rows_updated",
    "deleted": "airflow.rows_deleted",
}
"""The snapshot-summary keys under which a rewrite records its row counts, for a retried try to report them."""


@dataclass(frozen=True)
class WriteResult:
    """What one write did.

    The table, the snapshot it made (or found, for a repeated INSERT), the rows, and the table's columns and types after
    the write (`types.facet_fields`: as the event's schema facet names them).
    """

    table: TableRef
    snapshot_id: int | None
    rows: int
    replaced: bool = False
    already_written: bool = False
    columns: tuple[tuple[str, str], ...] = ()
    partitions: tuple[str, ...] = ()
    """The partitions the write added files to (`paid_at_day=2026-01-05`); none for an unpartitioned table."""
    counts: RowCounts | None = None
    """Rows inserted, updated and deleted, for a MERGE, UPDATE or DELETE."""
    untouched: bool = False
    """A CREATE TABLE IF NOT EXISTS ... AS found the table there and wrote nothing."""
    earlier_files_removed: int = 0
    """The files an earlier try of the task instance wrote and never committed, removed by this try."""


SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog", "main", "temp", "system"})
"""DuckDB's own schemas: a table named into one would be found there, not in the catalog."""
_UNSAFE_CHARACTERS = frozenset("./\\")


def check_target_name(ref: TableRef) -> None:
    """Raise IcebergWriteError when pyiceberg cannot store the target's name faithfully.

    A part that is empty, blank or holds a dot, slash or backslash, or a namespace that is one of DuckDB's system
    schemas.
    """
    for part in ref.identifier:
        if not part.strip() or _UNSAFE_CHARACTERS & set(part) or part != part.strip():
            raise IcebergWriteError(
                ref,
                "a part of the table's name is empty, blank, or holds a dot or a slash, "
                "which the catalog cannot store as written",
                "name it namespace.table with letters, digits and underscores; nothing was written",
            )
    if ref.namespace[0].lower() in SYSTEM_SCHEMAS:
        raise IcebergWriteError(
            ref,
            f"{ref.namespace[0]} is a schema of DuckDB itself, not a catalog namespace",
            "write the table into a namespace of its own; nothing was written",
        )


def _unstorable(kind: pa.DataType) -> str | None:
    """Return the cast to suggest when Iceberg cannot hold `kind` (None when it can)."""
    if pa.types.is_null(kind):
        return "CAST(NULL AS VARCHAR), or the type the column should have"
    if pa.types.is_interval(kind) or pa.types.is_duration(kind):
        return "CAST(... AS VARCHAR), or epoch(...) for seconds as a number"
    if pa.types.is_union(kind):
        return "CAST(... AS VARCHAR)"
    if pa.types.is_decimal(kind) and kind.precision > 38:
        return "CAST(... AS DECIMAL(38, 0)) or CAST(... AS BIGINT)"
    if pa.types.is_timestamp(kind) and kind.unit == "ns":
        return "CAST(... AS TIMESTAMP) (microseconds)"
    if pa.types.is_time(kind) and kind.unit == "ns":
        return "CAST(... AS TIME)"
    if pa.types.is_dictionary(kind) or pa.types.is_map(kind) and kind.key_type != pa.string():
        return "CAST(... AS VARCHAR)"
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _unstorable(kind.value_type)
    if pa.types.is_struct(kind):
        return next((cast for cast in map(_unstorable, (f.type for f in kind)) if cast), None)
    return None


def check_storable(table: TableRef, result: pa.Schema) -> None:
    """Raise IcebergWriteError naming the first column whose type Iceberg cannot hold, and the cast to write.

    INTERVAL, UNION, HUGEINT, TIMESTAMP_NS, an all-NULL column with no type; nothing is written then.
    """
    for field in result:
        cast = _unstorable(field.type)
        if cast is not None:
            raise IcebergWriteError(
                table,
                f"column {field.name} has the type {field.type}, which an Iceberg table cannot hold",
                f"write it as {cast} in the SELECT; nothing was written",
            )


def writable(result: pa.Table) -> pa.Table:
    """Return the result with the types Iceberg has no place for cast to ones it has (unsigned to signed)."""
    fields = []
    for field in result.schema:
        kind = field.type
        if pa.types.is_unsigned_integer(kind):
            kind = pa.int64() if kind.bit_width < 64 else pa.decimal128(20, 0)
        elif pa.types.is_large_string(kind):
            kind = pa.string()
        fields.append(pa.field(field.name, kind, nullable=True))
    schema = pa.schema(fields)
    return result if schema.equals(result.schema) else result.cast(schema)


_EPOCH = datetime(1970, 1, 1)
_DAYS = ((date.min - _EPOCH.date()).days, (date.max - _EPOCH.date()).days)
_SECONDS = (int((datetime.min - _EPOCH).total_seconds()), int((datetime.max - _EPOCH).total_seconds()))
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000}


def _temporal(array: pa.Array) -> Iterator[tuple[pa.Array, tuple[int, int]]]:
    """Yield the date and timestamp values within `array` (nested ones too), as integers, each with its range.

    The range a Python date or datetime holds (years 1 to 9999), which the Iceberg writer needs.
    """
    kind = array.type
    if pa.types.is_date32(kind):
        yield array.view(pa.int32()), _DAYS
    elif pa.types.is_timestamp(kind) and kind.unit in _PER_SECOND:
        scale = _PER_SECOND[kind.unit]
        yield array.view(pa.int64()), (_SECONDS[0] * scale, _SECONDS[1] * scale + scale - 1)
    elif pa.types.is_map(kind):
        yield from _temporal(array.keys)
        yield from _temporal(array.items)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        yield from _temporal(array.flatten())
    elif pa.types.is_struct(kind):
        for child in array.flatten():
            yield from _temporal(child)


def _beyond(array: pa.Array) -> bool:
    """Return whether a date or timestamp within `array` is before year 1 or after year 9999 (infinity too)."""
    for values, (low, high) in _temporal(array):
        least, most = pc.min_max(values).values()
        if least.is_valid and (least.as_py() < low or most.as_py() > high):
            return True
    return False


def _beyond_range(ref: TableRef, name: str) -> IcebergWriteError:
    return IcebergWriteError(
        ref,
        f"column {name} holds a date or timestamp at infinity or outside the years "
        "1 to 9999, which the Iceberg writer cannot store",
        f"leave those rows out, or write CASE WHEN isinf({name}) THEN NULL ELSE {name} END in the SELECT; "
        "nothing was written",
    )


def check_in_range(ref: TableRef, rows: pa.Table) -> None:
    """Raise IcebergWriteError naming the first column that holds a date or timestamp the Iceberg writer cannot store.

    At infinity (DuckDB's 'infinity'), or before year 1 or after year 9999; nothing is written then.
    """
    for name, column in zip(rows.column_names, rows.columns, strict=True):
        if any(_beyond(chunk) for chunk in column.chunks):
            raise _beyond_range(ref, name)


def check_partition_values(ref: TableRef, metadata: TableMetadata, rows: pa.Table) -> None:
    """Raise IcebergWriteError naming the first identity partition column over floats that `rows` give a NaN.

    pyiceberg's writer files rows by partition value, and a NaN equals no value, so it cannot file them; nothing is
    written then.
    """
    schema = metadata.schema()
    for spec_field in metadata.spec().fields:
        source = schema.find_field(spec_field.source_id)
        if (
            isinstance(spec_field.transform, IdentityTransform)
            and isinstance(source.field_type, FloatType | DoubleType)
            and source.name in rows.column_names
            and pc.any(pc.is_nan(rows.column(source.name))).as_py()
        ):
            raise IcebergWriteError(
                ref,
                f"column {source.name} is an identity partition and the rows give it NaN, which the Iceberg writer "
                "cannot file in a partition",
                "replace NaN in the statement (for example with NULL), or partition by another column; nothing was "
                "written",
            )


def check_required(ref: TableRef, table: Schema, rows: pa.Table) -> None:
    """Raise IcebergWriteError naming the first required (NOT NULL) column of `table` to which `rows` give a NULL.

    Nothing is written then.
    """
    for field in table.fields:
        if field.required and rows.column(field.name).null_count:
            raise IcebergWriteError(
                ref,
                f"column {field.name} is required (NOT NULL), and the SELECT gives it NULL",
                "give it a value in every row (coalesce(...)), or leave those rows out; nothing was written",
            )


def conformed(ref: TableRef, result: pa.Table, schema: Schema) -> pa.Table:
    """Return `result` in the Arrow types of `schema`, whose types DuckDB already cast it to.

    Only the representation changes (text as large_string, a UUID's 16 bytes as uuid, a time zone's name), no value.
    Raises IcebergWriteError naming the column when a value would change, and for a date or timestamp the writer cannot
    store.
    """
    target = schema_to_pyarrow(schema, include_field_ids=False)
    arrays = []
    for field, column in zip(target, result.columns, strict=True):
        try:
            arrays.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise IcebergWriteError(
                ref,
                f"column {field.name} cannot take the SELECT's {column.type} values as "
                f"{field.type} ({without_values(str(error))})",
                "cast the value in the SELECT; nothing was written",
            ) from None
    rows = pa.Table.from_arrays(arrays, schema=target)
    check_in_range(ref, rows)
    return rows


def with_retries(
    action: Callable[[], WriteResult], table: TableRef | str, attempts: int = 5, base_delay: float = 0.2
) -> WriteResult:
    """Return `action()`, retried with jittered exponential backoff on Iceberg commit conflicts.

    A conflict: another writer committed first, created the table first, or changed what an overwrite replaces. Raises
    CommitConflictError naming the table after `attempts` conflicts.
    """
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except (CommitFailedException, TableAlreadyExistsError, ValidationException):
            if attempt == attempts:
                break
            time.sleep(base_delay * 2 ** (attempt - 1) * (0.5 + random.random()))
    raise CommitConflictError(
        table,
        f"{attempts} commits in a row conflicted with concurrent writers",
        "retry the task, or stagger the tasks that write this table",
    )


def _comparable(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(kind):
        return pa.string()
    if pa.types.is_large_binary(kind):
        return pa.binary()
    return kind


def _replace_schema(table_tx: Transaction, result: pa.Schema, schema: Schema | None = None) -> None:
    """Make the table's schema `schema` (else the one of `result`, its Arrow form), by name.

    A column of another type is dropped and added again.
    """
    wanted = result.names
    current = {f.name: _comparable(f.type) for f in table_tx.table_metadata.schema().as_arrow()}
    stale = [
        name for name, kind in current.items() if name not in wanted or kind != _comparable(result.field(name).type)
    ]
    if stale:
        with table_tx.update_schema(allow_incompatible_changes=True) as update:
            for name in stale:
                update.delete_column(name)
    with table_tx.update_schema() as update:
        update.union_by_name(schema if schema is not None else result)
    with table_tx.update_schema() as update:
        update.move_first(wanted[0])
        for before, name in zip(wanted, wanted[1:], strict=False):
            update.move_after(name, before)


def _columns(table: Table) -> tuple[tuple[str, str], ...]:
    return facet_fields(table.schema())


def _prepared(
    ref: TableRef, stream: ResultStream, prepare: Callable[[pa.Table], pa.Table], metadata: TableMetadata
) -> Iterator[pa.Table]:
    """Yield the stream's rows in chunks of the table's chunk size, each made rows of the table by `prepare`.

    Raises IcebergWriteError for a NaN in an identity partition (`check_partition_values`).
    """
    for chunk in chunks(stream.batches(), chunk_bytes(metadata)):
        rows = prepare(chunk)
        check_partition_values(ref, metadata, rows)
        yield rows


def _append_streamed(
    ref: TableRef,
    transaction: Transaction,
    io: FileIO,
    stream: ResultStream,
    prepare: Callable[[pa.Table], pa.Table],
    properties: Mapping[str, str],
    written: WrittenFiles,
) -> None:
    """Writes the stream as data files of the table in `transaction` and stages one append of all of them.

    One file DuckDB writes itself where the table takes it as it is (`direct_write`), else Arrow chunks through
    pyiceberg's writer (`prepare` making each chunk rows of the table).
    """
    metadata = transaction.table_metadata
    stream, sort_order_id = sorted_stream(stream, metadata)
    with transaction.update_snapshot(snapshot_properties=dict(properties)).fast_append() as append:
        append.commit_uuid = written.write_uuid
        if not _written_by_duckdb(ref, metadata, io, stream, written):
            write_chunks(metadata, io, _prepared(ref, stream, prepare, metadata), written)
        mark_sorted(written.files, sort_order_id)
        for data_file in written.files:
            append.append_data_file(data_file)


def _written_by_duckdb(
    ref: TableRef, metadata: TableMetadata, io: FileIO, stream: ResultStream, written: WrittenFiles
) -> bool:
    """Return whether DuckDB wrote the stream's rows as a data file of the table itself (recorded in `written`).

    Raises IcebergWriteError, nothing written, for a value the table cannot take.
    """
    writer = stream.writer
    ordered = bool(sort_plan(metadata.schema(), metadata.sort_order()).order_by)
    if writer is None or not directly_writable(metadata, stream.schema.names, data_location(metadata), ordered=ordered):
        return False
    try:
        refused = write_directly(metadata, io, writer, written)
    except NotDirectlyWritable:
        return False
    if refused is None:
        return True
    raise _beyond_range(ref, refused)


def removing_on_failure(
    io: FileIO, metadata: Callable[[], TableMetadata], written: WrittenFiles, action: Callable[[], WriteResult]
) -> WriteResult:
    """Return `action()`; when it raises (or is interrupted), remove the files it wrote first.

    A commit whose outcome the catalog did not say keeps them: it may have landed.
    """
    try:
        return action()
    except CommitStateUnknownException:
        raise
    except BaseException:
        remove_written(io, metadata(), written)
        raise


def _create(
    catalog: Catalog,
    ref: TableRef,
    stream: ResultStream,
    prepare: Callable[[pa.Table], pa.Table],
    columns: Schema | pa.Schema,
    properties: Mapping[str, str],
    partition_by: Sequence[PartitionField] = (),
) -> tuple[Table, int]:
    """Create the table of `columns` holding the stream's rows, partitioned by `partition_by`.

    Returns it with the rows written: in one commit for a one-level namespace; pyiceberg stages no table in a nested
    namespace, so there the table is created, then its spec set and its rows appended (it is empty for that moment).
    """
    written = WrittenFiles(uuid.uuid4())
    if len(ref.namespace) == 1:
        creation = catalog.create_table_transaction(ref.identifier, schema=columns, properties=TABLE_PROPERTIES)
        io = load_file_io(
            {**catalog.properties, **creation.table_metadata.properties}, creation.table_metadata.location
        )

        def create() -> WriteResult:
            set_partition_spec(creation, partition_by, str(ref))
            _append_streamed(ref, creation, io, stream, prepare, properties, written)
            creation.commit_transaction()
            return WriteResult(ref, None, written.rows)

        removing_on_failure(io, lambda: creation.table_metadata, written, create)
        return catalog.load_table(ref.identifier), written.rows
    table = catalog.create_table(ref.identifier, schema=columns, properties=TABLE_PROPERTIES)

    def fill() -> WriteResult:
        with table.transaction() as transaction:
            set_partition_spec(transaction, partition_by, str(ref))
            _append_streamed(ref, transaction, table.io, stream, prepare, properties, written)
        return WriteResult(ref, None, written.rows)

    removing_on_failure(table.io, lambda: table.metadata, written, fill)
    return table, written.rows


def _written(ref: TableRef, table: Table, rows: int, *, replaced: bool = False) -> WriteResult:
    snapshot_id = _snapshot_id(table)
    return WriteResult(
        ref,
        snapshot_id,
        rows,
        replaced=replaced,
        columns=_columns(table),
        partitions=written_partitions(table, snapshot_id),
    )


def namespace_made(catalog: Catalog, namespace: tuple[str, ...]) -> None:
    """Make the namespace unless it exists, also when another writer makes it at the same moment.

    A SQL catalog looks the namespace up, then inserts its row: two tasks making one namespace at once both find none,
    and the later insert breaks the catalog's key. The namespace is there then, which is all a write needs.

    Args:
        catalog: The catalog.
        namespace: The namespace's levels.

    Raises:
        Exception: The catalog's own error, when the namespace is still not there after it.
    """
    try:
        catalog.create_namespace_if_not_exists(namespace)
    except Exception:
        if not catalog.namespace_exists(namespace):
            raise


def create_or_replace(
    catalog: Catalog,
    name: TableName,
    result: pa.Table | ResultStream,
    properties: Mapping[str, str],
    table: Table | None = None,
    *,
    replace: bool = True,
    partition_by: Sequence[PartitionField] = (),
    if_not_exists: bool = False,
    schema: Schema | None = None,
) -> WriteResult:
    """Create `ref` holding `result`, or replace its schema and rows, in one commit; return the snapshot.

    `table` is the table as already loaded, when it exists; a retried attempt loads it afresh. The result streams into
    data files chunk by chunk (`data_files`): memory holds one chunk, whatever the rows. With `replace` False (a plain
    CREATE TABLE ... AS) an existing table is replaced only when a snapshot of it carries the same WRITE_KEY (this task
    instance wrote it: a retry); otherwise raises IcebergWriteError. The table is partitioned by `partition_by` (a
    replaced table keeps its spec when none is given). Raises IcebergWriteError for a column type Iceberg cannot hold,
    PartitionSpecError for a partition column the result lacks, CommitConflictError. With `if_not_exists` (CREATE TABLE
    IF NOT EXISTS ... AS) an existing table is left as it is (`untouched`), unless this task instance created it (a
    retry, `already_written`). The table's schema is `schema` when given (the result already in its types: `conformed`),
    else the one pyiceberg reads off `result`'s Arrow types. Raises IcebergWriteError for a date or timestamp the writer
    cannot store too; a write that fails leaves no data file behind.
    """
    ref = as_table(name)
    stream = stream_of(result) if isinstance(result, pa.Table) else result
    columns: Schema | pa.Schema
    prepare: Callable[[pa.Table], pa.Table]
    if schema is None:
        check_storable(ref, stream.schema)
        columns = writable(stream.schema.empty_table()).schema

        def prepare(chunk: pa.Table) -> pa.Table:
            rows = writable(chunk)
            check_in_range(ref, rows)
            return rows
    else:
        columns = schema

        def prepare(chunk: pa.Table) -> pa.Table:
            return conformed(ref, chunk, schema)

    check_columns(
        partition_by, [f.name for f in columns.fields] if isinstance(columns, Schema) else columns.names, str(ref)
    )
    if table is None:
        namespace_made(catalog, ref.namespace)
    loaded = [table] if table is not None else []

    def attempt() -> WriteResult:
        current = loaded.pop() if loaded else None
        if current is None:
            if not catalog.table_exists(ref.identifier):
                created, rows = _create(catalog, ref, stream, prepare, columns, properties, partition_by)
                return _written(ref, created, rows)
            current = catalog.load_table(ref.identifier)
        if if_not_exists:
            return existing_target(current, ref, properties)
        if not replace and _earlier_write(current, ref, properties) is None:
            raise IcebergWriteError(
                ref,
                "the table already exists, and a plain CREATE TABLE ... AS does not replace "
                "a table this task did not write",
                "write CREATE OR REPLACE TABLE ... AS to replace it, or INSERT INTO to add rows; nothing was written",
            )
        replaced = current
        written = WrittenFiles(uuid.uuid4())

        def overwrite() -> WriteResult:
            with replaced.transaction() as transaction:
                _replace_schema(transaction, _arrow_columns(columns), schema)
                set_partition_spec(transaction, partition_by, str(ref))
                transaction.delete(delete_filter=AlwaysTrue(), snapshot_properties=dict(properties))
                _append_streamed(ref, transaction, replaced.io, stream, prepare, properties, written)
            return _written(ref, replaced, written.rows, replaced=True)

        return removing_on_failure(replaced.io, lambda: replaced.metadata, written, overwrite)

    return with_retries(attempt, ref)


def _arrow_columns(columns: Schema | pa.Schema) -> pa.Schema:
    return schema_to_pyarrow(columns, include_field_ids=False) if isinstance(columns, Schema) else columns


def existing_target(table: Table, ref: TableRef, properties: Mapping[str, str]) -> WriteResult:
    """Return what a CREATE TABLE IF NOT EXISTS ... AS does to the existing table.

    Nothing (`untouched`), or, when this task instance created it (its WRITE_KEY), that earlier write
    (`already_written`).
    """
    earlier = _earlier_write(table, ref, properties)
    if earlier is not None:
        return earlier
    return WriteResult(ref, _snapshot_id(table), 0, columns=_columns(table), untouched=True)


def earlier_write(table: Table, ref: TableRef, properties: Mapping[str, str]) -> WriteResult | None:
    """Return the write of the snapshot that carries the WRITE_KEY of `properties`, or None when there is none.

    That is this task instance's earlier commit: its rows, partitions and, for a rewrite, row counts.
    """
    return _earlier_write(table, ref, properties)


def _earlier_write(table: Table, ref: TableRef, properties: Mapping[str, str]) -> WriteResult | None:
    key = properties.get(WRITE_KEY)
    if not key:
        return None
    for snapshot in table.snapshots():
        summary = snapshot.summary
        if summary is not None and summary.get(WRITE_KEY) == key:
            rows = int(summary.get("added-records") or 0)  # a 0-row append records no count
            counts = None
            if summary.get(ROW_COUNT_KEYS["inserted"]) is not None:
                counts = RowCounts(**{name: int(summary.get(key) or 0) for name, key in ROW_COUNT_KEYS.items()})
                rows = counts.changed
            return WriteResult(
                ref,
                snapshot.snapshot_id,
                rows,
                already_written=True,
                columns=_columns(table),
                partitions=written_partitions(table, snapshot.snapshot_id),
                counts=counts,
            )
    return None


def removing_earlier_tries(
    catalog: Catalog, ref: TableRef, properties: Mapping[str, str], result: WriteResult
) -> WriteResult:
    """Remove the unreferenced files that earlier tries of the task instance left under the table's location.

    The files are removed when this is not the first try and a snapshot carrying the task instance's WRITE_KEY
    is in the table: from then on no earlier try can commit (its commit conflicts, and its next attempt finds
    that snapshot). Only a write that commits once per key (append_once, a rewrite) may call this.

    Args:
        catalog: The catalog holding the table.
        ref: The table written.
        properties: The snapshot properties of the write, with its WRITE_KEY and try number.
        result: The write's result, returned as it is.

    Returns:
        `result`.
    """
    owner = properties.get(WRITE_KEY)
    if not owner or int(properties.get(TRY_NUMBER) or 1) <= 1:
        return result
    table = catalog.load_table(ref.identifier)
    if _earlier_write(table, ref, properties) is None:
        return result
    removed = remove_orphans(table, unreferenced_files_of(table, owner))
    return replace(result, earlier_files_removed=removed) if removed else result


def aligned_rows(ref: TableRef, table: Table, columns: list[str], result: pa.Table) -> pa.Table:
    """Return `result` as rows of the table.

    Its columns matched by position to `columns`, cast to the table's types, the table's other columns null. A
    statement's INSERT hands it values DuckDB already cast to those types: the cast then changes their representation
    only (text as large_string, a UUID's bytes as uuid). Raises IcebergWriteError when a value cannot take the column's
    type, a required column gets a NULL, or a date or timestamp is beyond what the writer can store.
    """
    target = table.schema().as_arrow()
    renamed = result.rename_columns(columns)
    arrays = []
    for field in target:
        if field.name in columns:
            try:
                arrays.append(renamed.column(field.name).cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                raise IcebergWriteError(
                    ref,
                    f"column {field.name} cannot take the SELECT's "
                    f"{renamed.column(field.name).type} values as {field.type} "
                    f"({without_values(str(error))})",
                    "cast the value in the SELECT",
                ) from None
        else:
            arrays.append(pa.nulls(renamed.num_rows, type=field.type))
    rows = pa.Table.from_arrays(arrays, schema=target)
    check_required(ref, table.schema(), rows)
    check_in_range(ref, rows)
    return rows


def append_once(
    catalog: Catalog,
    name: TableName,
    columns: list[str],
    result: pa.Table | ResultStream,
    properties: Mapping[str, str],
    table: Table | None = None,
) -> WriteResult:
    """Append a result to a table in one commit, once per write key.

    The files are split by the table's partition spec and streamed chunk by chunk. When a snapshot already
    carries the same WRITE_KEY, the append writes nothing and returns that commit; a later try of the task
    instance then removes the files its earlier tries left uncommitted (`removing_earlier_tries`). A write that
    fails leaves no data file.

    Args:
        catalog: The catalog holding the table.
        name: The table appended to.
        columns: The table's columns the result's columns are matched to by position (the rest are null).
        result: The rows appended.
        properties: The snapshot properties, with the WRITE_KEY.
        table: The table as already loaded, if it is.

    Returns:
        The commit written, or the earlier one carrying the same WRITE_KEY.

    Raises:
        IcebergWriteError: A value cannot be written as the column's type.
        CommitConflictError: Concurrent writers kept the commit from going in.
    """
    ref = as_table(name)
    stream = stream_of(result) if isinstance(result, pa.Table) else result
    loaded = [table] if table is not None else []

    def attempt() -> WriteResult:
        current = loaded.pop() if loaded else catalog.load_table(ref.identifier)
        earlier = _earlier_write(current, ref, properties)
        if earlier is not None:
            return earlier
        written = WrittenFiles(write_id(properties.get(WRITE_KEY)))

        def append() -> WriteResult:
            with current.transaction() as transaction:
                _append_streamed(
                    ref,
                    transaction,
                    current.io,
                    stream,
                    lambda chunk: aligned_rows(ref, current, columns, chunk),
                    properties,
                    written,
                )
            return _written(ref, current, written.rows)

        return removing_on_failure(current.io, lambda: current.metadata, written, append)

    return removing_earlier_tries(catalog, ref, properties, with_retries(attempt, ref))


def overwrite_partitions(
    catalog: Catalog,
    name: TableName,
    columns: list[str],
    result: pa.Table | ResultStream,
    properties: Mapping[str, str],
    table: Table | None = None,
) -> WriteResult:
    """Replace, in one commit, exactly the partitions of `ref` that `result`'s rows fall in with those rows.

    `columns` are matched by position, as for append_once; the other partitions are kept. A retried or repeated write of
    the same rows leaves the same table (it replaces the partitions again). A concurrent commit that added rows to one
    of those partitions makes it start again from the new snapshot. Raises IcebergWriteError when the table is not
    partitioned or a value cannot be written, CommitConflictError; a write that fails leaves no data file.
    """
    ref = as_table(name)
    current = table if table is not None else catalog.load_table(ref.identifier)
    if current.spec().is_unpartitioned():
        raise IcebergWriteError(
            ref,
            "write_mode='overwrite_partitions' needs a partitioned table, and this one has no partition spec",
            "create it with partition_by=[...], or write_mode='append'; nothing was written",
        )
    stream = stream_of(result) if isinstance(result, pa.Table) else result
    loaded = [current]

    def attempt() -> WriteResult:
        table = loaded.pop() if loaded else catalog.load_table(ref.identifier)
        written = WrittenFiles(uuid.uuid4())

        def overwrite() -> WriteResult:
            metadata = table.metadata
            ordered, sort_order_id = sorted_stream(stream, metadata)
            write_chunks(
                metadata,
                table.io,
                _prepared(ref, ordered, lambda chunk: aligned_rows(ref, table, columns, chunk), metadata),
                written,
            )
            mark_sorted(written.files, sort_order_id)
            if written.rows == 0:
                return WriteResult(ref, _snapshot_id(table), 0, replaced=True, columns=_columns(table))
            records = {f.partition for f in written.files}
            scope = partition_scope(table.spec(), table.schema(), records)
            replaced = files_in_partitions(table, records, scope)
            commit_files(table, replaced, written.files, scope, dict(properties), written.write_uuid)
            return WriteResult(
                ref,
                _snapshot_id(table),
                written.rows,
                replaced=True,
                columns=_columns(table),
                partitions=partition_names(table.spec(), table.schema(), records),
            )

        return removing_on_failure(table.io, lambda: table.metadata, written, overwrite)

    return with_retries(attempt, ref)


def _snapshot_id(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot else None
