"""The name a local Iceberg catalog is opened under: the `catalog_name` setting, else the one name its catalog.db
keeps tables for; a folder keeping several catalogs and none of the setting's name is one sentence."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace


@pytest.fixture(autouse=True)
def no_catalog_name(monkeypatch, tmp_path):
    monkeypatch.delenv("AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_NAME", raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))


def _made(folder: Path, name: str, table: str) -> None:
    create_or_replace(open_local_catalog(folder, name), table, pa.table({"id": [1, 2]}), {})


def _orphans(folder: Path, table: str, capsys) -> tuple[int, str, str]:
    code = main(["iceberg", "orphans", table, "--catalog", str(folder)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_new_local_catalog_takes_the_settings_name(tmp_path, monkeypatch):
    assert open_local_catalog(tmp_path / "a").name == "default"
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_NAME", "lake")
    assert open_local_catalog(tmp_path / "b").name == "lake"


def test_a_folder_keeping_one_catalog_opens_under_its_name(tmp_path, capsys):
    _made(tmp_path / "catalog", "platform", "crm.people")
    code, out, err = _orphans(tmp_path / "catalog", "crm.people", capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1].startswith("crm.people: 0 files")


def test_a_folder_keeping_several_catalogs_needs_the_setting(tmp_path, capsys, monkeypatch):
    _made(tmp_path / "catalog", "north", "crm.people")
    _made(tmp_path / "catalog", "south", "crm.orders")
    code, out, err = _orphans(tmp_path / "catalog", "crm.people", capsys)
    assert code == 2
    assert err.strip() == (
        f"lineage-governance: {tmp_path / 'catalog'}: the local Iceberg catalog keeps the catalogs north, south "
        "and none named default; "
        "set the one to read with [lineage_governance] catalog_name in airflow.cfg or "
        "AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_NAME."
    )
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_NAME", "south")
    code, out, err = _orphans(tmp_path / "catalog", "crm.orders", capsys)
    assert (code, err) == (0, "")
