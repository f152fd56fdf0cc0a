"""`lineage-governance iceberg orphans`: files under a table's location that no snapshot references, older than
the safety age, listed by default and removed with --delete; the table's own files are never touched."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace


@pytest.fixture
def table_folder(tmp_path: Path) -> Path:
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "crm.people", pa.table({"id": [1, 2, 3]}), {})
    create_or_replace(catalog, "crm.people", pa.table({"id": [4, 5]}), {})  # the first files stay referenced
    table = catalog.load_table("crm.people")
    folder = Path(table.location().removeprefix("file://"))
    old = time.time() - 4 * 24 * 3600
    for name in ("data/00000-0-killed.parquet", "metadata/refused-m0.avro"):
        (folder / name).write_bytes(b"PAR1 left by a write that never committed")
        os.utime(folder / name, (old, old))
    (folder / "data/00000-0-running.parquet").write_bytes(b"PAR1 a write still running")
    return folder


def _run(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    code = main(["iceberg", "orphans", "crm.people", "--catalog", str(tmp_path / "catalog"), *args])
    return code, capsys.readouterr().out


def _table_ids(tmp_path: Path) -> list[int]:
    table = open_local_catalog(tmp_path / "catalog").load_table("crm.people")
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_orphans_lists_old_unreferenced_files_and_removes_nothing(tmp_path, table_folder, capsys):
    before = sorted(p for p in table_folder.rglob("*") if p.is_file())
    code, out = _run(tmp_path, capsys)
    assert code == 0
    lines = out.splitlines()
    assert [line.split("  ")[0] for line in lines[:-1]] == [
        str(table_folder / "data/00000-0-killed.parquet"),
        str(table_folder / "metadata/refused-m0.avro"),
    ]
    assert lines[-1] == (
        "crm.people: 2 files (82 bytes) that no snapshot references, older than 72 hours: listed "
        "only (dry run); --delete removes them"
    )
    assert sorted(p for p in table_folder.rglob("*") if p.is_file()) == before


def test_orphans_delete_removes_only_them_and_the_table_still_reads(tmp_path, table_folder, capsys):
    code, out = _run(tmp_path, capsys, "--delete")
    assert code == 0
    assert out.splitlines()[-1].endswith("older than 72 hours: 2 removed")
    assert not (table_folder / "data/00000-0-killed.parquet").exists()
    assert not (table_folder / "metadata/refused-m0.avro").exists()
    assert (table_folder / "data/00000-0-running.parquet").exists()
    assert _table_ids(tmp_path) == [4, 5]
    code, out = _run(tmp_path, capsys, "--older-than", "0", "--json")
    listed = json.loads(out)
    assert [Path(f["path"]).name for f in listed["files"]] == ["00000-0-running.parquet"]
    assert listed["removed"] == 0
    assert _table_ids(tmp_path) == [4, 5]


def test_orphans_of_a_table_the_catalog_lacks_is_one_sentence(tmp_path, table_folder, capsys):
    code = main(["iceberg", "orphans", "crm.nobody", "--catalog", str(tmp_path / "catalog")])
    assert code == 2
    assert capsys.readouterr().err == (
        "lineage-governance: crm.nobody: the catalog has no such table; name it namespace.table.\n"
    )
