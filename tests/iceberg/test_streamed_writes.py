"""Writes larger than DuckDB's memory limit: the result streams into data files, DuckDB spills to the task's own
folder (removed afterwards), all files land in one snapshot, and a write that fails leaves no file behind."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.orphans import orphan_files, referenced_files
from airflow_lineage_governance.iceberg.resources import Resources
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.kinds import StatementKind

ROWS = 1_000_000
TINY = Resources(memory_limit="64MB", threads=1)


@pytest.fixture
def catalog(tmp_path: Path):
    catalog = open_local_catalog(tmp_path / "catalog")
    rows = duckdb.sql(
        f"SELECT range AS id, md5(range::VARCHAR) AS a, md5((range * 7)::VARCHAR) AS b, "
        f"DATE '2026-01-01' + (range % 30)::INTEGER AS day FROM range({ROWS})"
    ).to_arrow_table()
    create_or_replace(catalog, "src.events", rows, {})
    return catalog


@contextmanager
def watching(folder: Path) -> Iterator[set[str]]:
    """Yields the names of the files seen under `folder` (polled) while the block runs."""
    seen: set[str] = set()
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            for root, _, files in os.walk(folder):
                seen.update(os.path.join(root, name) for name in files)
            done.wait(0.005)

    watcher = threading.Thread(target=poll)
    watcher.start()
    try:
        yield seen
    finally:
        done.set()
        watcher.join()


def _data_files(catalog, name: str) -> set[str]:
    table = catalog.load_table(name)
    return {task.file.file_path for task in table.scan().plan_files()}


@pytest.mark.slow
def test_a_ctas_larger_than_the_memory_limit_spills_and_commits_one_snapshot_leaving_no_temp_files(catalog, tmp_path):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    resources = Resources(TINY.memory_limit, TINY.threads, str(spill_root))
    with watching(spill_root) as seen:
        run = run_statement(
            catalog,
            kind=StatementKind.CREATE_TABLE_AS,
            target="out.sorted",
            query="SELECT e.id, e.a, e.b, e.day FROM src.events e ORDER BY e.b",
            sources=["src.events"],
            resources=resources,
        )
    assert run.write.rows == ROWS
    assert any(name.endswith(".tmp") for name in seen), "DuckDB did not spill under a 64 MB limit"
    assert list(spill_root.iterdir()) == []
    table = catalog.load_table("out.sorted")
    assert len(table.snapshots()) == 1
    assert int(table.current_snapshot().summary["added-records"]) == ROWS
    assert len(_data_files(catalog, "out.sorted")) > 1
    rows = table.scan().to_arrow()
    connection = duckdb.connect()
    connection.register("t", rows)
    assert connection.sql("SELECT count(DISTINCT id), sum(id), count(DISTINCT b) FROM t").fetchall() == [
        (ROWS, ROWS * (ROWS - 1) // 2, ROWS)
    ]
    assert orphan_files(table, older_than=timedelta(0)) == []


def test_an_insert_failing_after_files_were_written_leaves_no_file(catalog, tmp_path):
    from airflow_lineage_governance.iceberg.partitions import parse_partition_by

    run_statement(  # partitioned: the rows go through pyiceberg's writer, file by file
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target="out.days",
        query="SELECT e.id, e.day FROM src.events e WHERE e.id < 10",
        sources=["src.events"],
        partition_by=parse_partition_by(["bucket[2](id)"], "out.days"),
    )
    table = catalog.load_table("out.days")
    with table.transaction() as transaction:
        transaction.set_properties({"write.target-file-size-bytes": str(256 * 1024)})
    before = catalog.load_table("out.days")
    data = Path(before.location().removeprefix("file://")) / "data"
    query = (
        "SELECT e.id, CASE WHEN e.id = 999999 THEN 'infinity'::DATE ELSE e.day END AS day "
        "FROM src.events e ORDER BY e.id"
    )
    with (
        watching(data) as seen,
        pytest.raises(
            IcebergWriteError,
            match=r"^out\.days: column day holds a date or "
            r"timestamp at infinity",
        ),
    ):
        run_statement(
            catalog,
            kind=StatementKind.INSERT,
            target="out.days",
            query=query,
            sources=["src.events"],
            insert_columns=["id", "day"],
            resources=TINY,
        )
    after = catalog.load_table("out.days")
    assert after.current_snapshot().snapshot_id == before.current_snapshot().snapshot_id
    written = {name for name in seen if name.endswith(".parquet")} - {
        p.removeprefix("file://") for p in _data_files(catalog, "out.days")
    }
    assert len(written) > 1, "the write failed before it wrote any file"
    assert not any(Path(name).exists() for name in written)
    assert {str(p) for p in data.rglob("*") if p.is_file()} <= referenced_files(after)


def test_an_update_failing_after_files_were_written_leaves_no_file(catalog):
    run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target="out.days",
        query="SELECT e.id, e.day FROM src.events e",
        sources=["src.events"],
    )
    table = catalog.load_table("out.days")
    with table.transaction() as transaction:
        transaction.set_properties({"write.target-file-size-bytes": str(256 * 1024)})
    before = catalog.load_table("out.days")
    data = Path(before.location().removeprefix("file://")) / "data"
    with watching(data) as seen, pytest.raises(IcebergWriteError, match=r"^out\.days: column day holds a date"):
        rewrite_statement(
            catalog,
            target="out.days",
            sources=[],
            resources=TINY,
            dml="UPDATE out.days SET day = CASE WHEN id = 999999 THEN 'infinity'::DATE ELSE day + 1 END",
        )
    after = catalog.load_table("out.days")
    assert after.current_snapshot().snapshot_id == before.current_snapshot().snapshot_id
    written = {name for name in seen if name.endswith(".parquet")} - {
        p.removeprefix("file://") for p in _data_files(catalog, "out.days")
    }
    assert len(written) > 1, "the rewrite failed before it wrote any file"
    assert not any(Path(name).exists() for name in written)


@pytest.mark.slow
def test_a_partitioned_ctas_rolls_files_and_commits_one_snapshot(catalog):
    from airflow_lineage_governance.iceberg.partitions import parse_partition_by

    run = run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target="out.parts",
        query="SELECT e.id, e.a, e.day FROM src.events e",
        sources=["src.events"],
        partition_by=parse_partition_by(["day(day)", "bucket[4](id)"], "out.parts"),
        resources=TINY,
    )
    table = catalog.load_table("out.parts")
    assert len(table.snapshots()) == 1
    assert len(run.write.partitions) == 30 * 4
    files = list(table.scan().plan_files())
    first = (date(2026, 1, 1) - date(1970, 1, 1)).days
    assert {(f.file.partition[0], f.file.partition[1]) for f in files} == {
        (day, bucket) for day in range(first, first + 30) for bucket in range(4)
    }
    assert sum(f.file.record_count for f in files) == ROWS
    assert table.scan(row_filter="day = '2026-01-05'").to_arrow().num_rows == len(range(4, ROWS, 30))


def test_a_self_join_of_a_table_read_through_the_fallback_reader_spills_and_stays_exact(catalog, tmp_path):
    from pyiceberg.table.name_mapping import create_mapping_from_schema

    from airflow_lineage_governance.iceberg.read import ARROW_READER

    table = catalog.load_table("src.events")
    with table.transaction() as transaction:  # a name mapping: DuckDB's own scan could be wrong, pyiceberg reads
        transaction.set_properties(
            {"schema.name-mapping.default": create_mapping_from_schema(table.schema()).model_dump_json()}
        )
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    with watching(spill_root) as seen:
        run = run_statement(
            catalog,
            kind=StatementKind.CREATE_TABLE_AS,
            target="out.pairs",
            query="SELECT l.id, r.b FROM src.events l JOIN src.events r ON r.id = l.id + 1 WHERE l.a <> r.a",
            sources=["src.events"],
            resources=Resources(TINY.memory_limit, TINY.threads, str(spill_root)),
        )
    assert [read.path for read in run.reads] == [ARROW_READER]
    assert run.write.rows == ROWS - 1
    assert any(name.endswith(".tmp") for name in seen), "DuckDB did not spill under a 64 MB limit"
    assert list(spill_root.iterdir()) == []
    connection = duckdb.connect()
    connection.register("t", catalog.load_table("out.pairs").scan().to_arrow())
    assert connection.sql("SELECT count(*), sum(id), bool_and(b = md5(((id + 1) * 7)::VARCHAR)) FROM t").fetchall() == [
        (ROWS - 1, (ROWS - 1) * (ROWS - 2) // 2, True)
    ]


def test_an_insert_duckdb_writes_itself_is_checked_before_any_file_reaches_the_table(catalog, tmp_path):
    run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target="out.days",
        query="SELECT e.id, e.day FROM src.events e WHERE e.id < 10",
        sources=["src.events"],
    )
    before = catalog.load_table("out.days")
    data = Path(before.location().removeprefix("file://")) / "data"
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    query = "SELECT e.id, CASE WHEN e.id = 999999 THEN 'infinity'::DATE ELSE e.day END AS day FROM src.events e"
    with (
        watching(data) as seen,
        watching(spill_root) as staged,
        pytest.raises(IcebergWriteError, match=r"^out\.days: column day holds a date or timestamp at infinity"),
    ):
        run_statement(
            catalog,
            kind=StatementKind.INSERT,
            target="out.days",
            query=query,
            sources=["src.events"],
            insert_columns=["id", "day"],
            resources=Resources(TINY.memory_limit, TINY.threads, str(spill_root)),
        )
    assert any(name.endswith(".parquet") for name in staged), "DuckDB did not write the result's files itself"
    after = catalog.load_table("out.days")
    assert after.current_snapshot().snapshot_id == before.current_snapshot().snapshot_id
    assert {name for name in seen if name.endswith(".parquet")} <= referenced_files(after)
    assert list(spill_root.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(("memory_limit", "on_disk"), [("64MB", True), ("8GB", False)])
def test_a_rewrite_large_against_the_memory_limit_holds_its_rows_in_a_database_file_it_removes(
    catalog, tmp_path, memory_limit, on_disk
):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    resources = Resources(memory_limit, 1, str(spill_root))
    dml = "UPDATE src.events SET a = upper(a) WHERE id % 10 = 0"
    expected = duckdb.connect()
    expected.register("events", catalog.load_table("src.events").scan().to_arrow())
    expected.execute("CREATE TABLE t AS SELECT * FROM events")
    expected.execute("UPDATE t SET a = upper(a) WHERE id % 10 = 0")
    with watching(spill_root) as seen:
        run = rewrite_statement(catalog, target="src.events", sources=[], resources=resources, dml=dml)
    assert run.write.counts is not None and run.write.counts.updated == ROWS // 10
    databases = {Path(name).name for name in seen if Path(name).name.startswith("rewrite-")}
    assert bool(databases) is on_disk
    assert list(spill_root.iterdir()) == []
    table = catalog.load_table("src.events")
    assert len(table.snapshots()) == 2
    expected.register("after", table.scan().to_arrow())
    assert expected.sql("SELECT * FROM after EXCEPT ALL SELECT * FROM t").fetchall() == []
    assert expected.sql("SELECT count(*) FROM after").fetchall() == [(ROWS,)]
