"""A MERGE, UPDATE or DELETE DuckDB cannot bind fails the task with DuckDB's sentence before anything runs: the
operator on a real local catalog, whose table keeps its snapshot and its rows."""

from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace

import pyarrow as pa
import pytest
from airflow.exceptions import AirflowFailException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

ORDERS = Schema(NestedField(1, "order_id", LongType()), NestedField(2, "note", StringType()))


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    catalog = open_local_catalog(tmp_path)
    catalog.create_namespace("shop")
    for name in ("orders", "changes"):
        table = catalog.create_table(f"shop.{name}", schema=ORDERS)
        rows = [{"order_id": 1, "note": "a"}, {"order_id": 2, "note": "b"}]
        table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    extra = {**local_catalog_properties(tmp_path), "catalog_name": "default", "lineage_namespace": "iceberg://t"}
    monkeypatch.setenv("AIRFLOW_CONN_ICEBERG_DEFAULT", json.dumps({"conn_type": "iceberg_catalog", "extra": extra}))
    return catalog


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("update shop.orders set note = 'x' where nick = 'y'", 'Referenced column "nick" not found in FROM clause!'),
        ("delete from shop.orders o where q.order_id = o.order_id", 'Referenced table "q" not found!'),
        (
            "merge into shop.orders o using shop.changes c on o.order_id = c.order_id "
            "when matched then update set note = c.nick",
            'Table "c" does not have a column named "nick"',
        ),
    ],
    ids=["update", "delete", "merge"],
)
def test_a_statement_duckdb_cannot_bind_fails_the_task_and_writes_nothing(catalog, sql, problem):
    before = catalog.load_table("shop.orders")
    operator = IcebergSqlOperator(task_id="t", sql=sql)
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    with pytest.raises(AirflowFailException) as raised:
        operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})
    assert str(raised.value).endswith(
        f"shop.orders: DuckDB cannot bind the statement (Binder Error: {problem}); fix the statement."
    )
    after = catalog.load_table("shop.orders")
    assert after.metadata.current_snapshot_id == before.metadata.current_snapshot_id
    assert after.scan().to_arrow().sort_by("order_id").to_pylist() == [
        {"order_id": 1, "note": "a"},
        {"order_id": 2, "note": "b"},
    ]
