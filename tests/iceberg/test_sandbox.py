"""DuckDB itself refuses what the lineage check would refuse: a statement's SELECT handed straight to
run_statement (the lineage check bypassed) reads no file but the pinned snapshots' data files, no URL, and
installs or loads no extension."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.read import (
    expose_tables,
    lock_down,
    prepare_sandboxed_connection,
    sandboxed_connection,
)
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.kinds import StatementKind

pytestmark = pytest.mark.reliability

HOSTILE = [
    "select * from read_text('/etc/hostname')",
    "select s.id, f.content from crm.people s cross join lateral read_text('/etc/hostname') f",
    "select * from read_csv('/etc/passwd')",
    "select * from read_parquet('{other}')",
    "select * from read_text('http://127.0.0.1:9/x')",
    "select * from read_json('https://example.com/x.json')",
    "select * from glob('/etc/*')",
    "select * from sqlite_scan('/tmp/x.db', 't')",
]
STATEMENTS = [
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "ATTACH '/tmp/x.db' AS x",
    "COPY (select 1) TO '/tmp/leak.csv'",
    "SET lock_configuration = false",
]


@pytest.fixture
def catalog(tmp_path):
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "crm.people", pa.table({"id": [1, 2], "email": ["ada@example.com", "b@x.org"]}), {})
    create_or_replace(catalog, "crm.other", pa.table({"id": [3]}), {})
    return catalog


def _other_file(catalog) -> str:
    task = next(iter(catalog.load_table("crm.other").scan().plan_files()))
    return task.file.file_path.removeprefix("file://")


@pytest.mark.parametrize("query", HOSTILE)
def test_duckdb_refuses_a_hostile_select_and_nothing_is_written(catalog, query):
    query = query.format(other=_other_file(catalog))
    with pytest.raises(IcebergWriteError) as raised:
        run_statement(
            catalog, kind=StatementKind.CREATE_TABLE_AS, target="out.leak", query=query, sources=["crm.people"]
        )
    message = str(raised.value)
    assert message.startswith("out.leak: DuckDB could not run the statement's SELECT")
    assert "nothing was written" in message
    assert "/etc/" not in message and "example.com" not in message
    assert not catalog.table_exists("out.leak")


@pytest.mark.parametrize("prepared", [False, True], ids=["opened when asked", "opened ahead"])
@pytest.mark.parametrize("statement", STATEMENTS)
def test_the_locked_connection_refuses_files_extensions_and_configuration(catalog, statement, prepared):
    if prepared:
        prepare_sandboxed_connection()
    connection = sandboxed_connection()
    lock_down(connection, expose_tables(connection, catalog, ["crm.people"]))
    with pytest.raises(Exception) as raised:  # noqa: PT011 - DuckDB's own error classes differ by statement
        connection.execute(statement)
    assert "disabled" in str(raised.value) or "locked" in str(raised.value)


def test_the_pinned_tables_still_read(catalog):
    run = run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target="out.copy",
        query="select p.id from crm.people p",
        sources=["crm.people"],
    )
    assert run.write.rows == 2
    assert sorted(catalog.load_table("out.copy").scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_a_connection_opened_ahead_is_handed_out_once():
    prepare_sandboxed_connection()
    prepare_sandboxed_connection()  # one is already on its way: no second one
    first, second = sandboxed_connection(), sandboxed_connection()
    assert first is not second
    first.execute("CREATE TABLE mine AS SELECT 1 AS x")
    assert second.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'mine'").fetchone() == (0,)
    for connection in (first, second):
        assert connection.execute(
            "SELECT current_setting('autoload_known_extensions'), current_setting('TimeZone')"
        ).fetchone() == (False, "UTC")
