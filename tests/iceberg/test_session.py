"""Every connection the provider opens runs under the provider's session settings, never the worker's
environment: the same statement gives the same table under any `TZ`."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergError
from airflow_lineage_governance.iceberg.read import sandboxed_connection
from airflow_lineage_governance.iceberg.session import SessionSettingError, SessionSettings
from airflow_lineage_governance.iceberg.write import create_or_replace

ROOT = Path(__file__).resolve().parents[2]
# Runs two CTAS over shop.events in a process of its own and prints each result table's rows and types.
SCRIPT = """
import json, sys
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.kinds import StatementKind
catalog = open_local_catalog(sys.argv[1])
out = {}
for target, query in (("shop.daily", "SELECT CAST(ts AS DATE) AS day, count(*) AS n FROM shop.events GROUP BY 1"),
                      ("shop.copy", "SELECT id, ts, strftime(ts, '%Y-%m-%d %H') AS hour FROM shop.events")):
    run_statement(catalog, kind=StatementKind.CREATE_TABLE_AS, target=target, query=query, sources=["shop.events"])
    table = catalog.load_table(target)
    rows = sorted(map(str, table.scan().to_arrow().to_pylist()))
    out[target] = [rows, [str(f.field_type) for f in table.schema().fields]]
print(json.dumps(out))
"""


def _run_under(tz: str, folder: Path) -> dict:
    environment = {**os.environ, "TZ": tz}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder)],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_same_statement_gives_the_same_table_under_two_worker_time_zones(tmp_path):
    results = []
    for tz in ("UTC", "America/Los_Angeles"):
        folder = tmp_path / tz.replace("/", "_")
        catalog = open_local_catalog(folder)
        utc = dt.UTC
        create_or_replace(
            catalog,
            "shop.events",
            pa.table(
                {
                    "id": pa.array([1, 2], pa.int64()),
                    "ts": pa.array(
                        [dt.datetime(2026, 1, 1, 2, tzinfo=utc), dt.datetime(2026, 1, 1, 23, tzinfo=utc)],
                        pa.timestamp("us", tz="UTC"),
                    ),
                }
            ),
            {},
        )
        results.append(_run_under(tz, folder))
    assert results[0] == results[1]
    daily_rows, daily_types = results[0]["shop.daily"]
    assert daily_rows == ["{'day': datetime.date(2026, 1, 1), 'n': 2}"] and daily_types == ["date", "long"]
    copy_rows, copy_types = results[0]["shop.copy"]
    assert copy_types == ["long", "timestamptz", "string"]
    assert [row.split("'hour': ")[1] for row in copy_rows] == ["'2026-01-01 02'}", "'2026-01-01 23'}"]


def test_the_connection_runs_under_the_settings_given():
    connection = sandboxed_connection(SessionSettings(time_zone="Asia/Tokyo", default_null_order="NULLS_FIRST"))
    assert connection.execute(
        "SELECT current_setting('TimeZone'), current_setting('default_null_order'), "
        "current_setting('parquet_can_have_nan')"
    ).fetchall() == [("Asia/Tokyo", "NULLS_FIRST", True)]
    assert connection.execute("SELECT x FROM (VALUES (1), (NULL)) t(x) ORDER BY x").fetchall() == [(None,), (1,)]


def test_a_setting_duckdb_refuses_is_one_sentence_naming_the_option():
    with pytest.raises(SessionSettingError) as raised:
        sandboxed_connection(SessionSettings(time_zone="Mars/Olympus_Mons"))
    assert isinstance(raised.value, IcebergError)
    assert str(raised.value) == (
        "[lineage_governance] duckdb_time_zone: DuckDB does not accept 'Mars/Olympus_Mons' "
        "as its TimeZone; set it to a value DuckDB accepts, or unset it for the default."
    )
