"""A MERGE on a real catalog (SQL and REST) opens each manifest of its target once, for its read and its commit,
and its commit still refuses to delete a file the table no longer holds and still starts again after a
conflicting concurrent commit."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.exceptions import ValidationException
from pyiceberg.expressions import AlwaysFalse
from pyiceberg.manifest import DataFile, ManifestFile, write_manifest

from airflow_lineage_governance.iceberg import manifests
from airflow_lineage_governance.iceberg.manifests import (
    ManifestEntries,
    ResolvedAvroFile,
    ResolvedManifestOutput,
    live_entries,
    manifest_list,
)
from airflow_lineage_governance.iceberg.partitioned import commit_files
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from airflow_lineage_governance.refs import TableRef

TARGET = TableRef.parse("shop.orders")
MERGE = (
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.day = s.day "
    "WHEN MATCHED THEN UPDATE SET amount = s.amount "
    "WHEN NOT MATCHED THEN INSERT (id, day, amount) VALUES (s.id, s.day, s.amount)"
)


def _orders(first: int, days: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + 4 * days), pa.int64()),
            "day": [dt.date(2026, 1, 1 + i % days) for i in range(4 * days)],
            "amount": [float(i) for i in range(4 * days)],
        }
    )


@pytest.fixture
def orders(catalog):
    """shop.orders partitioned by day, its files listed in three manifests (three commits), and its changes."""
    create_or_replace(catalog, "shop.orders", _orders(0, 3), {}, partition_by=parse_partition_by(["day"]))
    for first in (100, 200):
        catalog.load_table(TARGET.identifier).append(_orders(first, 3))
    changes = pa.table(
        {"id": pa.array([1, 101, 999], pa.int64()), "day": [dt.date(2026, 1, 2)] * 3, "amount": [-1.0, -2.0, -3.0]}
    )
    create_or_replace(catalog, "shop.changes", changes, {})
    return catalog


def _rows(catalog) -> list[dict]:
    rows = catalog.load_table(TARGET.identifier).scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda row: row["id"])


def _on_plain_copy(catalog, dml: str) -> list[dict]:
    plain = duckdb.connect()
    plain.execute("CREATE SCHEMA shop")
    for name in ("orders", "changes"):
        plain.register(f"_{name}", catalog.load_table(("shop", name)).scan().to_arrow())
        plain.execute(f"CREATE TABLE shop.{name} AS SELECT * FROM _{name}")
    plain.execute(dml)
    return plain.sql("SELECT * FROM shop.orders ORDER BY id").to_arrow_table().to_pylist()


@pytest.fixture
def opened(monkeypatch) -> Counter[str]:
    """Counts each manifest opened, by path, by pyiceberg or by `manifests.live_entries` (the reads go on as before)."""
    counts: Counter[str] = Counter()
    fetch = ManifestFile.fetch_manifest_entry
    live = manifests.live_entries

    def counted(self: ManifestFile, io, discard_deleted: bool = True):
        counts[self.manifest_path] += 1
        return fetch(self, io, discard_deleted)

    def counted_live(manifest: ManifestFile, io):
        counts[manifest.manifest_path] += 1
        return live(manifest, io)

    monkeypatch.setattr(ManifestFile, "fetch_manifest_entry", counted)
    monkeypatch.setattr(manifests, "live_entries", counted_live)
    return counts


def test_a_merge_opens_each_manifest_of_its_target_once(orders, opened):
    expected = _on_plain_copy(orders, MERGE)
    table = orders.load_table(TARGET.identifier)
    manifests = {m.manifest_path for m in table.current_snapshot().manifests(table.io)}
    assert len(manifests) == 3
    opened.clear()
    run = rewrite_statement(orders, target="shop.orders", dml=MERGE, sources=["shop.changes"])
    assert {path: opened[path] for path in manifests} == dict.fromkeys(manifests, 1)
    assert _rows(orders) == expected
    assert (run.write.counts.inserted, run.write.counts.updated) == (1, 2)


def test_a_commit_does_not_delete_a_file_the_table_does_not_hold(orders):
    table = orders.load_table(TARGET.identifier)
    before = _rows(orders)
    entries = ManifestEntries()
    tasks = entries.scan_tasks(table.current_snapshot(), table.io)
    assert tasks is not None
    held = tasks[0].file
    gone = DataFile.from_args(
        content=held.content,
        file_path=held.file_path.replace(".parquet", "-gone.parquet"),
        file_format=held.file_format,
        partition=held.partition,
        record_count=held.record_count,
        file_size_in_bytes=held.file_size_in_bytes,
    )
    gone.spec_id = held.spec_id
    with pytest.raises(ValidationException, match="Missing required files to delete"):
        commit_files(table, [gone], [], AlwaysFalse(), {}, uuid.uuid4(), entries)
    assert _rows(orders) == before
    assert orders.load_table(TARGET.identifier).current_snapshot() == table.current_snapshot()


def test_a_concurrent_delete_of_a_file_the_merge_reads_makes_it_start_again(orders):
    pinned = orders.load_table(TARGET.identifier)
    erased = rewrite_statement(
        orders,
        target="shop.orders",
        dml="DELETE FROM shop.orders WHERE day = DATE '2026-01-02'",
        sources=[],
        snapshot_properties={WRITE_KEY: "erase"},
    )
    expected = _on_plain_copy(orders, MERGE)
    run = rewrite_statement(orders, target="shop.orders", dml=MERGE, sources=["shop.changes"], loaded={TARGET: pinned})
    assert run.reads[0].snapshot_id == erased.write.snapshot_id  # the pinned snapshot's commit was refused
    assert _rows(orders) == expected
    assert (run.write.counts.inserted, run.write.counts.updated) == (3, 0)


def test_manifests_read_with_resolved_readers_equal_pyiceberg_reading_them(catalog):
    """Two specs (a partitioned and an unpartitioned table) and a table whose spec changed: every manifest list and
    manifest reads as pyiceberg reads it, whichever was read first, and each file schema is resolved once."""
    create_or_replace(catalog, "shop.orders", _orders(0, 3), {}, partition_by=parse_partition_by(["day"]))
    create_or_replace(catalog, "shop.flat", _orders(0, 2), {})
    create_or_replace(catalog, "shop.evolving", _orders(0, 2), {})
    with catalog.load_table(("shop", "evolving")).update_spec() as spec:
        spec.add_identity("day")
    catalog.load_table(("shop", "evolving")).append(_orders(50, 2))
    ResolvedAvroFile._resolved.clear()
    for _ in range(2):
        for name in ("orders", "flat", "evolving"):
            table = catalog.load_table(("shop", name))
            snapshot = table.current_snapshot()
            assert manifest_list(snapshot, table.io) == tuple(snapshot.manifests(table.io))
            for manifest in manifest_list(snapshot, table.io):
                ours, theirs = live_entries(manifest, table.io), manifest.fetch_manifest_entry(table.io)
                assert [(e.status, e.snapshot_id, e.sequence_number, e.data_file) for e in ours] == [
                    (e.status, e.snapshot_id, e.sequence_number, e.data_file) for e in theirs
                ]
                assert [e.data_file.partition for e in ours] == [e.data_file.partition for e in theirs]
    kinds = sorted(kind for _, kind in ResolvedAvroFile._resolved)
    assert kinds.count("manifest list") == 1
    assert kinds.count("manifest") == 2  # by day and unpartitioned: the evolved table's two specs are those


def test_manifests_written_with_resolved_writers_are_the_files_pyiceberg_writes(catalog, tmp_path):
    """Each entry of a partitioned and an unpartitioned table's manifests, written again by pyiceberg and through
    `ResolvedManifestOutput`: the two files hold the same bytes but for their random sync marker, and each partition
    type is resolved once."""
    create_or_replace(catalog, "shop.orders", _orders(0, 3), {}, partition_by=parse_partition_by(["day"]))
    create_or_replace(catalog, "shop.flat", _orders(0, 2), {})
    ResolvedManifestOutput._resolved.clear()
    for attempt in range(2):
        for name in ("orders", "flat"):
            table = catalog.load_table(("shop", name))
            found = [e for m in manifest_list(table.current_snapshot(), table.io) for e in live_entries(m, table.io)]
            written = []
            for how in ("pyiceberg", "resolved"):
                path = str(tmp_path / f"{name}-{attempt}-{how}.avro")
                manifest = write_manifest(
                    format_version=table.metadata.format_version,
                    spec=table.spec(),
                    schema=table.schema(),
                    output_file=table.io.new_output(path),
                    snapshot_id=7,
                    avro_compression="deflate",
                )
                if how == "resolved":
                    manifest.new_writer = lambda manifest=manifest: ResolvedManifestOutput(manifest)
                with manifest as writer:
                    for entry in found:
                        writer.add_entry(entry)
                written.append((open(path, "rb").read(), writer.to_manifest_file()))
            (theirs, their_file), (ours, our_file) = written
            assert len(ours) == len(theirs) > 1000 and ours != theirs
            assert ours.replace(ours[-16:], theirs[-16:]) == theirs  # the sync marker ends each file
            assert [(e.status, e.data_file) for e in live_entries(our_file, table.io)] == [
                (e.status, e.data_file) for e in found
            ]
    assert len(ResolvedManifestOutput._resolved) == 2  # by day and unpartitioned, at format version 2
