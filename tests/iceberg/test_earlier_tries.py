"""A try killed before its commit leaves its data files under the table's location; the task instance's next try
removes them once its own commit is in the table, and nothing another write made."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.data_files import WrittenFiles, listed_files, write_chunks, write_id
from airflow_lineage_governance.iceberg.orphans import orphan_files
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import TRY_NUMBER, WRITE_KEY, append_once, create_or_replace
from airflow_lineage_governance.refs import TableRef

KEY = "dag/insert_rows/-1/2026-04-01T00:00:00+00:00"
ROWS = pa.table({"id": pa.array(range(100), pa.int64()), "value": pa.array(range(100), pa.int64())})


def _try(number: int, key: str = KEY) -> dict[str, str]:
    return {WRITE_KEY: key, TRY_NUMBER: str(number)}


def _killed_before_commit(table: Table, key: str = KEY) -> WrittenFiles:
    """Writes the rows' data files as a try of `key` does before its commit, and commits nothing (the try's
    process is killed there)."""
    written = WrittenFiles(write_id(key))
    write_chunks(table.metadata, table.io, [ROWS], written)
    return written


def _data_files(table: Table) -> dict[str, int]:
    """Returns each Parquet file under the table's location with its row count."""
    return {
        info.path: pq.ParquetFile(info.path).metadata.num_rows
        for info in listed_files(table.location())
        if info.base_name.endswith(".parquet")
    }


def _unreferenced(catalog: Catalog, name: str) -> list[str]:
    """Returns the data files under the table's location that no snapshot references."""
    table = catalog.load_table(name)
    return [o.path for o in orphan_files(table, older_than=timedelta(0)) if o.path.endswith(".parquet")]


def test_the_next_try_removes_what_a_killed_try_wrote_and_lands_the_rows_once(catalog):
    create_or_replace(catalog, "a.killed_try", ROWS.slice(0, 0), {})
    killed = _killed_before_commit(catalog.load_table("a.killed_try"))
    assert sum(_data_files(catalog.load_table("a.killed_try")).values()) == 100  # written, never committed

    result = append_once(catalog, "a.killed_try", ["id", "value"], ROWS, _try(2))

    assert result.earlier_files_removed == len(killed.files) > 0
    table = catalog.load_table("a.killed_try")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == list(range(100))
    assert sum(_data_files(table).values()) == 100  # the committed try's files only
    assert _unreferenced(catalog, "a.killed_try") == []


def test_a_first_try_and_another_task_instance_leave_a_killed_try_alone(catalog):
    create_or_replace(catalog, "a.other_writes", ROWS.slice(0, 0), {})
    killed = _killed_before_commit(catalog.load_table("a.other_writes"))
    other = append_once(
        catalog, "a.other_writes", ["id", "value"], ROWS, _try(2, "dag/other_task/-1/2026-04-01T00:00:00+00:00")
    )
    first = append_once(
        catalog, "a.other_writes", ["id", "value"], ROWS, {WRITE_KEY: "dag/third/-1/x", TRY_NUMBER: "1"}
    )

    assert other.earlier_files_removed == first.earlier_files_removed == 0
    left = _unreferenced(catalog, "a.other_writes")
    assert sorted(left) == sorted(f.file_path.removeprefix("file://").removeprefix("file:") for f in killed.files)


def test_a_retried_rewrite_removes_its_killed_try_but_not_when_it_committed_nothing(catalog):
    create_or_replace(catalog, "a.killed_rewrite", ROWS, {})
    target = TableRef.parse("a.killed_rewrite")
    killed = _killed_before_commit(catalog.load_table("a.killed_rewrite"))
    unchanged = rewrite_statement(
        catalog,
        target=target,
        dml="UPDATE a.killed_rewrite SET value = 0 WHERE id < 0",
        sources=[],
        snapshot_properties=_try(2),
    )
    # no row changed, so no snapshot carries the key: the killed try could still commit, and its files stay
    assert unchanged.write.earlier_files_removed == 0 and len(_unreferenced(catalog, "a.killed_rewrite")) == len(
        killed.files
    )

    updated = rewrite_statement(
        catalog,
        target=target,
        dml="UPDATE a.killed_rewrite SET value = -1 WHERE id < 10",
        sources=[],
        snapshot_properties=_try(3),
    )
    assert updated.write.earlier_files_removed == len(killed.files)
    assert _unreferenced(catalog, "a.killed_rewrite") == []
    values = catalog.load_table("a.killed_rewrite").scan().to_arrow().column("value").to_pylist()
    assert sorted(values)[:10] == [-1] * 10 and len(values) == 100
