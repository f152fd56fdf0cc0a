"""Partitioned tables.

Setting a table's partition spec, naming the partitions a snapshot wrote, and committing a file-level overwrite (the
files a write replaces out, the rewritten rows in) whose concurrency check covers exactly the rows it replaces.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    IsNull,
    LessThan,
    Or,
)
from pyiceberg.manifest import DataFile, ManifestEntryStatus, ManifestFile
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table, Transaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import update_table_metadata
from pyiceberg.typedef import Record
from pyiceberg.types import DateType

from airflow_lineage_governance.iceberg.manifests import (
    ManifestEntries,
    read_manifests_through,
    write_manifests_resolved,
)
from airflow_lineage_governance.iceberg.partitions import (
    PartitionField,
    check_columns,
    pyiceberg_transform,
    spec_entries,
)

# pyiceberg's predicates are pydantic models whose constructors mypy reads wrongly; called as documented.
_EQUAL: Any = EqualTo
_AT_LEAST: Any = GreaterThanOrEqual
_BELOW: Any = LessThan
_IS_NULL: Any = IsNull

MAX_SCOPE_PARTITIONS = 1000
"""Past this many partitions, a write's concurrency check covers the whole table instead of each partition."""


def set_partition_spec(transaction: Transaction, fields: Sequence[PartitionField], table: str) -> None:
    """Give the table in `transaction` the partition spec `fields`.

    Its current spec is kept when `fields` is empty, or already the same. Raises PartitionSpecError naming a field whose
    column the table lacks.
    """
    if not fields:
        return
    schema = transaction.table_metadata.schema()
    check_columns(fields, [f.name for f in schema.fields], table)
    current = spec_entries(transaction.table_metadata.spec(), schema)
    if tuple(fields) == current:
        return
    with transaction.update_spec() as update:
        for old in transaction.table_metadata.spec().fields:
            update.remove_field(old.name)
        for field in fields:
            update.add_field(field.column, pyiceberg_transform(field), field.name)


def partition_names(spec: PartitionSpec, schema: Schema, records: Iterable[Record]) -> tuple[str, ...]:
    """Return each partition as its path (`paid_at_day=2026-01-05/country=FR`), sorted.

    None for an unpartitioned spec.
    """
    if spec.is_unpartitioned():
        return ()
    return tuple(sorted({spec.partition_to_path(record, schema) for record in records}))


def added_files(table: Table, snapshot_id: int | None) -> list[DataFile]:
    """Return the data files snapshot `snapshot_id` of the table added (none for None)."""
    snapshot = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snapshot is None:
        return []
    found: list[DataFile] = []
    for manifest in snapshot.manifests(table.io):
        if manifest.added_snapshot_id != snapshot_id:
            continue
        found.extend(
            entry.data_file
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True)
            if entry.status == ManifestEntryStatus.ADDED and entry.snapshot_id == snapshot_id
        )
    return found


def written_partitions(table: Table, snapshot_id: int | None) -> tuple[str, ...]:
    """Return the partitions snapshot `snapshot_id` added files to, as paths; none for an unpartitioned table."""
    spec = table.spec()
    if spec.is_unpartitioned():
        return ()
    files = [f for f in added_files(table, snapshot_id) if f.spec_id == spec.spec_id]
    return partition_names(spec, table.schema(), (f.partition for f in files))


_EPOCH = dt.datetime(1970, 1, 1)


def _time_bounds(transform: str, value: int) -> tuple[dt.datetime, dt.datetime]:
    if transform == "hour":
        start = _EPOCH + dt.timedelta(hours=value)
        return start, start + dt.timedelta(hours=1)
    if transform == "day":
        start = _EPOCH + dt.timedelta(days=value)
        return start, start + dt.timedelta(days=1)
    months = value if transform == "month" else value * 12
    step = 1 if transform == "month" else 12
    start = dt.datetime(1970 + months // 12, months % 12 + 1, 1)
    end_months = months + step
    return start, dt.datetime(1970 + end_months // 12, end_months % 12 + 1, 1)


def _field_filter(field: PartitionField, source_type: Any, value: Any) -> BooleanExpression | None:
    """Return the row filter of one partition field's value, or None when no row filter expresses it."""
    if value is None:
        return _IS_NULL(field.column)  # type: ignore[no-any-return]
    if field.transform == "identity":
        return _EQUAL(field.column, value)  # type: ignore[no-any-return]
    if field.transform in ("year", "month", "day", "hour"):
        start, end = _time_bounds(field.transform, int(value))
        if isinstance(source_type, DateType):
            return And(_AT_LEAST(field.column, start.date().isoformat()), _BELOW(field.column, end.date().isoformat()))
        return And(_AT_LEAST(field.column, start.isoformat()), _BELOW(field.column, end.isoformat()))
    return None


def partition_scope(spec: PartitionSpec, schema: Schema, records: Iterable[Record]) -> BooleanExpression:
    """Return a row filter that holds exactly for the rows of the given partitions of `spec`.

    ALWAYS_TRUE when a transform has no row filter (bucket and truncate), or past MAX_SCOPE_PARTITIONS partitions;
    ALWAYS_FALSE for no partition.
    """
    unique = list(dict.fromkeys(records))
    if not unique:
        return AlwaysFalse()
    if spec.is_unpartitioned() or len(unique) > MAX_SCOPE_PARTITIONS:
        return AlwaysTrue()
    fields = spec_entries(spec, schema)
    if len(fields) != len(spec.fields):
        return AlwaysTrue()
    types = [schema.find_field(f.source_id).field_type for f in spec.fields]
    scope: BooleanExpression = AlwaysFalse()
    for record in unique:
        one: BooleanExpression = AlwaysTrue()
        for position, (field, kind) in enumerate(zip(fields, types, strict=True)):
            condition = _field_filter(field, kind, record[position])
            if condition is None:
                return AlwaysTrue()
            one = And(one, condition)
        scope = Or(scope, one)
    return scope


class MetadataReusingTransaction(Transaction):
    """A pyiceberg transaction that builds its table metadata once per change instead of once per look.

    pyiceberg 0.12 deep-copies the whole table metadata (every snapshot, schema and log entry) each time a commit
    reads `table_metadata`, about forty times per overwrite; this one copies it again only when the table or the
    transaction's updates changed. The metadata is immutable (frozen models), so the copy is shared.
    """

    @property
    def table_metadata(self) -> TableMetadata:
        """Return the table's metadata with the transaction's updates applied."""
        base, updates = self._table.metadata, self._updates
        if not updates:  # nothing to apply: the table's own metadata, which nothing changes
            return base
        built = self.__dict__.get("_built_metadata")
        if built is None or built[0] is not base or built[1] is not updates:
            built = (base, updates, update_table_metadata(base, updates))
            self.__dict__["_built_metadata"] = built
        return built[2]


def keep_live_manifests(producer: Any) -> None:
    """Make the snapshot `producer` commits list only the manifests that hold a live data file.

    Or that the commit itself wrote.

    pyiceberg 0.12 carries a manifest whose entries are all deleted forward into every later snapshot, so each
    overwrite adds one more manifest that every later scan and commit opens for nothing; Iceberg's Java
    implementation keeps such a manifest only in the snapshot that deleted its files, as this does.

    Args:
        producer: the pyiceberg snapshot producer of the commit (its `overwrite()` or `fast_append()`), before it
            commits.
    """
    own = producer.snapshot_id
    carried = producer._process_manifests

    def live(manifests: list[ManifestFile]) -> list[ManifestFile]:
        kept: list[ManifestFile] = carried(
            [
                manifest
                for manifest in manifests
                if manifest.added_snapshot_id == own or manifest.has_added_files() or manifest.has_existing_files()
            ]
        )
        return kept

    producer._process_manifests = live


def commit_files(
    table: Table,
    replaced: Iterable[DataFile],
    added: Sequence[DataFile],
    scope: BooleanExpression,
    properties: dict[str, str],
    commit_uuid: uuid.UUID,
    entries: ManifestEntries | None = None,
) -> Table:
    """Commit one OVERWRITE snapshot to `table` that removes `replaced` and adds `added`, and return the table.

    `table` is as loaded at the snapshot the write read. pyiceberg checks the commit against the snapshot read: a
    concurrent commit that added rows matching `scope` (serializable isolation), or removed a replaced file, raises
    ValidationException (the caller retries from the new snapshot); a concurrent commit elsewhere is merged (pyiceberg
    rebases and retries the commit itself). With `entries` (the manifests the write's read opened), the commit opens
    only the manifests that read did not.
    """
    with MetadataReusingTransaction(table) as transaction:
        with transaction.update_snapshot(snapshot_properties=properties).overwrite() as overwrite:
            overwrite.commit_uuid = commit_uuid
            keep_live_manifests(overwrite)
            write_manifests_resolved(overwrite)
            if entries is not None:
                read_manifests_through(overwrite, entries)
            if scope != AlwaysFalse():
                overwrite.delete_by_predicate(scope, case_sensitive=False)
            for data_file in replaced:
                overwrite.delete_data_file(data_file)
            for data_file in added:
                overwrite.append_data_file(data_file)
    return table


def files_in_partitions(table: Table, records: set[Record], scope: BooleanExpression) -> list[DataFile]:
    """Return the current snapshot's data files that lie in one of the partitions `records` of the current spec.

    `scope` is their row filter, to prune the scan; files of an older spec are not matched.
    """
    spec_id = table.spec().spec_id
    snapshot = table.current_snapshot()
    if snapshot is None or not records:
        return []
    return [
        task.file
        for task in table.scan(snapshot_id=snapshot.snapshot_id, row_filter=scope).plan_files()
        if task.file.spec_id == spec_id and task.file.partition in records
    ]
