"""Copy-on-write MERGE, UPDATE and DELETE on a real pyiceberg catalog: each leaves the table DuckDB leaves a plain
copy in, reads only the partitions its condition bounds, counts the rows it changed, commits once against the
pinned snapshot (a concurrent commit elsewhere merges, in the same partition it starts again), never twice for
one write key, and a kill at any point leaves the table old or new whole."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from airflow_lineage_governance.refs import TableRef

DAYS = 6
ROWS = 60
TARGET = TableRef.parse("shop.orders")


def _orders(rows: int = ROWS) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "day": [dt.date(2026, 1, 1 + i % DAYS) for i in range(rows)],
            "email": [f"p{i}@example.com" for i in range(rows)],
            "amount": [float(i) for i in range(rows)],
        }
    )


def _changes() -> pa.Table:
    # Rows 7 and 13 (both on day 2) change, 19 (day 2) is erased, 1000 is new; all fall on day 2.
    return pa.table(
        {
            "id": pa.array([7, 13, 19, 1000], pa.int64()),
            "day": [dt.date(2026, 1, 2)] * 4,
            "email": ["new7@example.com", None, "gone", "new@example.com"],
            "amount": [70.5, 130.5, None, 1.0],
        }
    )


@pytest.fixture
def catalog(tmp_path):
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "shop.orders", _orders(), {}, partition_by=parse_partition_by(["day"]))
    create_or_replace(catalog, "shop.changes", _changes(), {})
    create_or_replace(catalog, "shop.erasures", pa.table({"email": ["p3@example.com", "p4@example.com"]}), {})
    return catalog


def _rows(catalog, name: str = "shop.orders") -> list[dict]:
    rows = catalog.load_table(TableRef.parse(name).identifier).scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def _on_plain_copy(catalog, dml: str) -> list[dict]:
    """Returns the rows DuckDB leaves in a plain copy of the tables after running `dml`."""
    plain = duckdb.connect()
    plain.execute("CREATE SCHEMA shop")
    for name in ("orders", "changes", "erasures"):
        plain.register(f"_{name}", catalog.load_table(("shop", name)).scan().to_arrow())
        plain.execute(f"CREATE TABLE shop.{name} AS SELECT * FROM _{name}")
    plain.execute(dml)
    return plain.sql("SELECT * FROM shop.orders ORDER BY id").to_arrow_table().to_pylist()


MERGE = (
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.day = s.day "
    "WHEN MATCHED AND s.amount IS NULL THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET amount = s.amount, email = coalesce(s.email, t.email) "
    "WHEN NOT MATCHED THEN INSERT (id, day, email, amount) VALUES (s.id, s.day, s.email, s.amount)"
)

STATEMENTS = {
    "merge": (MERGE, ["shop.changes"], (1, 2, 1), 1),
    "merge by source": (
        MERGE.replace(
            "WHEN NOT MATCHED THEN",
            "WHEN NOT MATCHED BY SOURCE AND t.day = DATE '2026-01-03' THEN DELETE WHEN NOT MATCHED THEN",
        ),
        ["shop.changes"],
        (1, 2, 11),
        DAYS,
    ),
    "update": (
        "UPDATE shop.orders SET amount = amount * 2 WHERE day BETWEEN DATE '2026-01-02' AND "
        "DATE '2026-01-03' AND id < 30",
        [],
        (0, 10, 0),
        2,
    ),
    "update from": (
        "UPDATE shop.orders AS t SET email = s.email FROM shop.changes AS s "
        "WHERE t.id = s.id AND t.day = s.day AND s.email IS NOT NULL",
        ["shop.changes"],
        (0, 2, 0),
        1,
    ),
    "delete": (
        "DELETE FROM shop.orders WHERE day IN (DATE '2026-01-05', DATE '2026-01-06') AND amount > 40",
        [],
        (0, 0, 7),
        2,
    ),
    "delete using": (
        "DELETE FROM shop.orders AS t USING shop.erasures AS e WHERE t.email = e.email",
        ["shop.erasures"],
        (0, 0, 2),
        2,
    ),
    "delete subquery": (
        "DELETE FROM shop.orders WHERE email IN (SELECT email FROM shop.erasures)",
        ["shop.erasures"],
        (0, 0, 2),
        2,
    ),
}


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_each_statement_leaves_what_duckdb_leaves_on_a_plain_copy(catalog, name):
    dml, sources, (inserted, updated, deleted), files = STATEMENTS[name]
    expected = _on_plain_copy(catalog, dml)
    run = rewrite_statement(
        catalog, target="shop.orders", dml=dml, sources=sources, snapshot_properties={WRITE_KEY: name}
    )
    assert _rows(catalog) == expected
    counts = run.write.counts
    assert (counts.inserted, counts.updated, counts.deleted) == (inserted, updated, deleted)
    assert (counts.files_rewritten, counts.files_in_table) == (files, DAYS)
    assert run.write.rows == inserted + updated + deleted
    assert run.reads[0].table == TARGET and run.reads[0].reason == f"{files} of {DAYS} data files"


def test_the_bounded_merge_reads_and_rewrites_only_its_partition(catalog):
    before = catalog.load_table(TARGET.identifier)
    pinned = before.current_snapshot().snapshot_id
    untouched = {
        task.file.file_path
        for task in before.scan().plan_files()
        if before.spec().partition_to_path(task.file.partition, before.schema()) != "day=2026-01-02"
    }
    run = rewrite_statement(
        catalog, target="shop.orders", dml=MERGE, sources=["shop.changes"], snapshot_properties={WRITE_KEY: "m"}
    )
    assert run.write.partitions == ("day=2026-01-02",)
    after = {task.file.file_path for task in catalog.load_table(TARGET.identifier).scan().plan_files()}
    assert untouched <= after and len(after) == DAYS
    assert run.reads[0].snapshot_id == pinned


def test_a_retried_try_finds_its_commit_and_changes_nothing(catalog):
    first = rewrite_statement(
        catalog,
        target="shop.orders",
        dml=MERGE,
        sources=["shop.changes"],
        snapshot_properties={WRITE_KEY: "dag/task/-1/2026-01-02"},
    )
    after = _rows(catalog)
    snapshots = len(catalog.load_table(TARGET.identifier).snapshots())
    again = rewrite_statement(
        catalog,
        target="shop.orders",
        dml=MERGE,
        sources=["shop.changes"],
        snapshot_properties={WRITE_KEY: "dag/task/-1/2026-01-02"},
    )
    assert _rows(catalog) == after and len(catalog.load_table(TARGET.identifier).snapshots()) == snapshots
    assert again.write.already_written and again.write.snapshot_id == first.write.snapshot_id
    assert again.write.counts.changed == first.write.counts.changed


def test_a_statement_that_changes_nothing_commits_nothing(catalog):
    snapshots = len(catalog.load_table(TARGET.identifier).snapshots())
    run = rewrite_statement(
        catalog,
        target="shop.orders",
        dml="DELETE FROM shop.orders WHERE id < 0",
        sources=[],
        snapshot_properties={WRITE_KEY: "none"},
    )
    assert run.write.counts.changed == 0 and len(catalog.load_table(TARGET.identifier).snapshots()) == snapshots


def _update_day(day: int, key: str) -> str:
    return f"UPDATE shop.orders SET amount = amount + 1000 WHERE day = DATE '2026-01-0{day}' -- {key}"


def test_a_concurrent_commit_to_another_partition_merges_to_the_same_one_starts_again(catalog):
    # Writer A pinned the table; writer B commits first. A's commit is checked against what A pinned.
    pinned = catalog.load_table(TARGET.identifier)
    pinned_id = pinned.current_snapshot().snapshot_id
    rewrite_statement(
        catalog, target="shop.orders", dml=_update_day(1, "b"), sources=[], snapshot_properties={WRITE_KEY: "b"}
    )
    mine = rewrite_statement(
        catalog,
        target="shop.orders",
        dml=_update_day(2, "a"),
        sources=[],
        snapshot_properties={WRITE_KEY: "a"},
        loaded={TARGET: pinned},
    )
    assert mine.reads[0].snapshot_id == pinned_id  # no retry: pyiceberg found no conflict and rebased
    amounts = {r["id"]: r["amount"] for r in _rows(catalog)}
    assert amounts[0] == 1000.0 and amounts[1] == 1001.0 and amounts[2] == 2.0
    # Same partition: A's first attempt conflicts with B's commit, A reads B's snapshot and applies on top.
    pinned = catalog.load_table(TARGET.identifier)
    other = rewrite_statement(
        catalog, target="shop.orders", dml=_update_day(3, "c"), sources=[], snapshot_properties={WRITE_KEY: "c"}
    )
    mine = rewrite_statement(
        catalog,
        target="shop.orders",
        dml=_update_day(3, "d"),
        sources=[],
        snapshot_properties={WRITE_KEY: "d"},
        loaded={TARGET: pinned},
    )
    assert mine.reads[0].snapshot_id == other.write.snapshot_id  # retried from the new snapshot
    assert {r["id"]: r["amount"] for r in _rows(catalog)}[2] == 2002.0


def test_a_bound_read_in_the_session_s_time_zone_catches_the_concurrent_row_it_covers(catalog):
    from airflow_lineage_governance.iceberg.session import SessionSettings

    utc = dt.UTC
    rows = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "seen": pa.array(
                [dt.datetime(2025, 12, 31, 0, 0, tzinfo=utc), dt.datetime(2026, 1, 2, 0, 0, tzinfo=utc)],
                pa.timestamp("us", tz="UTC"),
            ),
            "note": ["old", "old"],
        }
    )
    create_or_replace(catalog, "shop.visits", rows, {})
    pinned = catalog.load_table(("shop", "visits"))
    # Another writer appends a row at 03:00 UTC: 12:00 in Tokyo, which the UPDATE below covers.
    with catalog.load_table(("shop", "visits")).transaction() as transaction:
        transaction.append(
            pa.table(
                {
                    "id": pa.array([3], pa.int64()),
                    "seen": pa.array([dt.datetime(2026, 1, 1, 3, 0, tzinfo=utc)], pa.timestamp("us", tz="UTC")),
                    "note": ["old"],
                }
            )
        )
    appended = catalog.load_table(("shop", "visits")).current_snapshot().snapshot_id
    run = rewrite_statement(
        catalog,
        target="shop.visits",
        dml="UPDATE shop.visits SET note = 'late' WHERE seen >= TIMESTAMPTZ '2026-01-01 09:00:00'",
        sources=[],
        snapshot_properties={WRITE_KEY: "tokyo"},
        loaded={TableRef.parse("shop.visits"): pinned},
        session=SessionSettings(time_zone="Asia/Tokyo"),
    )
    # The bound (from midnight UTC) covers the appended row: the UPDATE starts again from its snapshot and
    # changes it too, as DuckDB does running the append and then the UPDATE.
    assert run.reads[0].snapshot_id == appended
    assert run.write.counts.updated == 2
    notes = catalog.load_table(("shop", "visits")).scan().to_arrow().sort_by("id").column("note").to_pylist()
    assert notes == ["old", "late", "late"]


def test_duckdb_reads_no_file_but_the_pinned_snapshots(catalog):
    snapshots = len(catalog.load_table(TARGET.identifier).snapshots())
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(
            catalog,
            target="shop.orders",
            sources=[],
            snapshot_properties={WRITE_KEY: "x"},
            dml="UPDATE shop.orders SET email = (SELECT content FROM read_text('/etc/hostname'))",
        )
    assert "nothing was written" in str(raised.value) and "/etc/hostname" not in str(raised.value)
    assert len(catalog.load_table(TARGET.identifier).snapshots()) == snapshots


def test_a_failing_statement_names_no_value(catalog):
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(
            catalog,
            target="shop.orders",
            sources=[],
            snapshot_properties={WRITE_KEY: "x"},
            dml="UPDATE shop.orders SET amount = CAST(email AS DOUBLE) WHERE id = 3",
        )
    assert "p3@example.com" not in str(raised.value) and str(raised.value).startswith("shop.orders: ")


KILLED = """
import os, signal, sys
from airflow_lineage_governance.iceberg import rewrite
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import WRITE_KEY
if sys.argv[2] == "before-commit":
    rewrite.commit_files = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
print("ready", flush=True)
rewrite.rewrite_statement(open_local_catalog(sys.argv[1]), target="shop.orders", dml=sys.argv[3],
                          sources=["shop.changes"], snapshot_properties={WRITE_KEY: "killed"})
"""


def _killed_run(folder: Path, how: str, after: float | None = None) -> int:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(folder), how, MERGE], stdout=subprocess.PIPE, env=env
    )
    assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
    if after is not None:
        time.sleep(after)
        process.send_signal(signal.SIGKILL)
    return process.wait(timeout=120)


@pytest.mark.reliability
def test_a_kill_mid_merge_leaves_the_table_old_or_new_whole(catalog, tmp_path):
    old = _rows(catalog)
    new = _on_plain_copy(catalog, MERGE)
    assert _killed_run(tmp_path / "catalog", "before-commit") == -signal.SIGKILL
    assert _rows(open_local_catalog(tmp_path / "catalog")) == old
    for after in (0.1, 0.4, 0.8):
        _killed_run(tmp_path / "catalog", "any", after)
        assert _rows(open_local_catalog(tmp_path / "catalog")) in (old, new)


def _manifest_counts(table) -> list[tuple[int | None, int | None, int | None]]:
    return sorted(
        (m.added_files_count, m.existing_files_count, m.deleted_files_count)
        for m in table.current_snapshot().manifests(table.io)
    )


def test_repeated_merges_keep_the_manifest_list_from_growing(catalog):
    first = rewrite_statement(catalog, target="shop.orders", dml=MERGE, sources=["shop.changes"])
    after_first = catalog.load_table(TARGET.identifier)
    before = {s.snapshot_id: s for s in after_first.metadata.snapshots}
    for attempt in range(4):
        rewrite_statement(
            catalog,
            target="shop.orders",
            dml=MERGE.replace("THEN DELETE", f"THEN UPDATE SET amount = {attempt}"),
            sources=["shop.changes"],
        )
    table = catalog.load_table(TARGET.identifier)
    # Each MERGE rewrites the day-2 file: the list holds the untouched days' manifest, the new file's, and the
    # manifest of the files this snapshot deleted; no manifest of deleted files only is carried forward.
    assert _manifest_counts(table) == [(0, 0, 1), (0, 5, 0), (1, 0, 0)]
    assert len(table.metadata.snapshots) == len(before) + 4
    # The first MERGE's snapshot still reads its own rows, and still lists what it deleted.
    pinned = table.scan(snapshot_id=first.write.snapshot_id).to_arrow().to_pylist()
    assert sorted(r["id"] for r in pinned) == sorted(r["id"] for r in _rows_after_first(catalog))
    assert any(m.deleted_files_count for m in table.snapshot_by_id(first.write.snapshot_id).manifests(table.io))


def _rows_after_first(catalog) -> list[dict]:
    rows = [r for r in _orders().to_pylist() if r["id"] != 19]
    return [*rows, {"id": 1000}]


def test_a_merge_counts_each_action_once(catalog):
    run = rewrite_statement(catalog, target="shop.orders", dml=MERGE, sources=["shop.changes"])
    assert (run.write.counts.inserted, run.write.counts.updated, run.write.counts.deleted) == (1, 2, 1)
