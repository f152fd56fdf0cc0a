"""MERGE, UPDATE, DELETE, partitioned CTAS, partition overwrite and CREATE TABLE IF NOT EXISTS through real
Airflow (`airflow dags test`), DuckDB and a pyiceberg catalog: each leaves the table DuckDB leaves a plain copy in,
a retried MERGE changes nothing, and the events carry the target as input and output, the lineage, the row
counts, and validate against the OpenLineage schemas."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace
from tests.support.openlineage_spec import conformance

pytestmark = pytest.mark.integration

STATEMENTS = {
    "ctas": "create or replace table shop.orders as select id, paid_at, email, amount from shop.raw_orders",
    "merge": """merge into shop.orders as t using shop.changes as s on t.id = s.id and t.paid_at = s.paid_at
        when matched and s.amount is null then delete
        when matched then update set amount = s.amount
        when not matched then insert (id, paid_at, email, amount) values (s.id, s.paid_at, s.email, s.amount)""",
    "update": """update shop.orders set amount = amount * 2
        where paid_at >= timestamp '2026-01-03 00:00:00' and paid_at < timestamp '2026-01-04 00:00:00'""",
    "erase": "delete from shop.orders where email in (select e.email from shop.erasures e)",
    "erase_returning": "delete from shop.orders where id in (11, 12) returning id, email, amount",
    "overwrite_day": "insert into shop.orders select id, paid_at, email, amount from shop.day_two",
    "if_not_exists": "create table if not exists shop.orders as select id, paid_at, email, amount from shop.changes",
    "if_not_exists_new": "create table if not exists shop.fresh as select o.id from shop.raw_orders o",
}

DAG = """
from datetime import datetime, timedelta
import json
from airflow.sdk import DAG, chain, task
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

STATEMENTS = {statements!r}


class FailsAfterCommit(IcebergSqlOperator):
    def execute(self, context):
        result = super().execute(context)
        if context["ti"].try_number == 1:
            raise RuntimeError("the worker lost its connection after the commit")
        return result


with DAG("dml", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    chain(
        IcebergSqlOperator(task_id="ctas", sql=STATEMENTS["ctas"], partition_by=["day(paid_at)"]),
        FailsAfterCommit(task_id="merge", sql=STATEMENTS["merge"], retries=1, retry_delay=timedelta(0)),
        IcebergSqlOperator(task_id="update", sql=STATEMENTS["update"]),
        IcebergSqlOperator(task_id="erase", sql=STATEMENTS["erase"]),
        returning := IcebergSqlOperator(task_id="erase_returning", sql=STATEMENTS["erase_returning"]),
        IcebergSqlOperator(task_id="overwrite_day", sql=STATEMENTS["overwrite_day"],
                           write_mode="overwrite_partitions"),
        IcebergSqlOperator(task_id="if_not_exists", sql=STATEMENTS["if_not_exists"]),
        IcebergSqlOperator(task_id="if_not_exists_new", sql=STATEMENTS["if_not_exists_new"]),
    )

    @task
    def show(result):
        print("XCOM " + json.dumps(result))

    show(returning.output)
"""


def _at(day: int, hour: int = 12) -> dt.datetime:
    return dt.datetime(2026, 1, day, hour)


def _tables() -> dict[str, pa.Table]:
    ids = list(range(40))
    raw = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "paid_at": [_at(1 + i % 5, i % 24) for i in ids],
            "email": [f"p{i}@example.com" for i in ids],
            "amount": [float(i) for i in ids],
        }
    )
    changes = pa.table(
        {
            "id": pa.array([5, 10, 15, 99], pa.int64()),
            "paid_at": [_at(1, 5), _at(1, 10), _at(1, 15), _at(1, 1)],
            "email": ["x", "y", "z", "new@example.com"],
            "amount": [50.5, None, 150.5, 9.0],
        }
    )
    erasures = pa.table({"email": ["p3@example.com", "p8@example.com"]})
    day_two = pa.table(
        {
            "id": pa.array([200, 201], pa.int64()),
            "paid_at": [_at(2, 1), _at(2, 2)],
            "email": ["a@example.com", "b@example.com"],
            "amount": [2.0, 3.0],
        }
    )
    return {"raw_orders": raw, "changes": changes, "erasures": erasures, "day_two": day_two}


def _plain_copy_after() -> list[dict]:
    """Returns shop.orders as DuckDB leaves it after the same statements on plain tables."""
    plain = duckdb.connect()
    plain.execute("CREATE SCHEMA shop")
    for name, table in _tables().items():
        plain.register(f"_{name}", table)
        plain.execute(f"CREATE TABLE shop.{name} AS SELECT * FROM _{name}")
    for task in ("ctas", "merge", "update", "erase", "erase_returning"):
        plain.execute(STATEMENTS[task])
    plain.execute("DELETE FROM shop.orders WHERE paid_at::DATE = DATE '2026-01-02'")
    plain.execute(STATEMENTS["overwrite_day"])
    return plain.sql("SELECT * FROM shop.orders ORDER BY id").to_arrow_table().to_pylist()


def _fields(output: dict) -> dict[str, set[tuple[str, str, str, str]]]:
    lineage = output["facets"]["columnLineage"]["fields"]
    return {
        column: {
            (f["name"], f["field"], t["type"], t["subtype"]) for f in entry["inputFields"] for t in f["transformations"]
        }
        for column, entry in lineage.items()
    }


def test_dml_through_airflow(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    for name, table in _tables().items():
        create_or_replace(catalog, f"shop.{name}", table, {})
    sandbox.write_dag("dml", DAG.format(statements=STATEMENTS))

    run = sandbox.dags_test("dml")

    assert run.returncode == 0, run.log[-4000:]
    orders = catalog.load_table(("shop", "orders"))
    assert [str(f.transform) for f in orders.spec().fields] == ["day"]
    assert sorted(orders.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == _plain_copy_after()
    assert catalog.load_table(("shop", "fresh")).scan().to_arrow().num_rows == 40

    # The retried MERGE found its own commit: one MERGE snapshot, and the log says so.
    merges = [s for s in orders.snapshots() if (s.summary or {}).get("airflow.task_id") == "merge"]
    assert len(merges) == 1 and "already wrote snapshot" in run.log
    assert "partitions written: paid_at_day=2026-01-01" in run.log

    found = conformance(run.events)
    assert found.errors == [] and found.validated["rowChanges"].endswith("RowChangesOutputDatasetFacet")

    start = run.task_events("update", "START")[0]
    complete = run.task_events("update", "COMPLETE")[0]
    assert [i["name"] for i in start["inputs"]] == ["shop.orders"]
    read = complete["inputs"][0]
    written = complete["outputs"][0]
    assert read["name"] == written["name"] == "shop.orders"
    assert int(read["facets"]["version"]["datasetVersion"]) != int(written["facets"]["version"]["datasetVersion"])
    assert written["outputFacets"]["rowChanges"]["updated"] == 8
    assert written["outputFacets"]["rowChanges"]["filesRewritten"] == 1
    assert written["outputFacets"]["outputStatistics"]["rowCount"] == 8
    assert ("shop.orders", "amount", "DIRECT", "TRANSFORMATION") in _fields(written)["amount"]

    merge = [e for e in run.task_events("merge", "COMPLETE")][-1]["outputs"][0]
    assert {i["name"] for i in run.task_events("merge", "COMPLETE")[-1]["inputs"]} == {"shop.orders", "shop.changes"}
    assert ("shop.changes", "amount", "DIRECT", "IDENTITY") in _fields(merge)["amount"]
    assert (
        merge["outputFacets"]["rowChanges"]["inserted"],
        merge["outputFacets"]["rowChanges"]["updated"],
        merge["outputFacets"]["rowChanges"]["deleted"],
    ) == (1, 2, 1)

    erase = run.task_events("erase", "COMPLETE")[0]["outputs"][0]
    dataset = {(d["name"], d["field"]) for d in erase["facets"]["columnLineage"]["dataset"]}
    assert ("shop.orders", "email") in dataset and ("shop.erasures", "email") in dataset
    assert erase["outputFacets"]["rowChanges"]["deleted"] == 2

    # RETURNING: the rows go to XCom as DuckDB renders them; the lineage is the DELETE's.
    xcom = json.loads(run.log.split("XCOM ", 1)[1].splitlines()[0])
    assert (xcom["deleted"], xcom["returning"]["columns"]) == (2, ["id", "email", "amount"])
    assert sorted(xcom["returning"]["rows"]) == [[11, "p11@example.com", 11.0], [12, "p12@example.com", 24.0]]
    returned = run.task_events("erase_returning", "COMPLETE")[0]["outputs"][0]
    assert returned["outputFacets"]["rowChanges"]["deleted"] == 2
    assert ("shop.orders", "id", "INDIRECT", "FILTER") in {
        (d["name"], d["field"], t["type"], t["subtype"])
        for d in returned["facets"]["columnLineage"]["dataset"]
        for t in d["transformations"]
    }
    assert all("p11@example.com" not in line for line in run.log.splitlines() if "XCOM" not in line)

    # IF NOT EXISTS on an existing table: nothing written, no column lineage reached it.
    untouched = run.task_events("if_not_exists", "COMPLETE")[0]
    assert all("columnLineage" not in o["facets"] for o in untouched["outputs"])
    assert "CREATE TABLE IF NOT EXISTS left it as it is" in run.log
    fresh = run.task_events("if_not_exists_new", "COMPLETE")[0]["outputs"][0]
    assert set(fresh["facets"]["columnLineage"]["fields"]) == {"id"}
