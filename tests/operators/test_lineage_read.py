"""The operator reads a statement's lineage once per try, when its templates are rendered: the START event, built
in a fork of the task's process after rendering, and `execute` use that read instead of asking the catalog again."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from types import SimpleNamespace

import pyarrow as pa
import pytest
from jinja2 import Environment
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

SQL = "create table shop.big_orders as select order_id, qty * 2 as double_qty from shop.orders where qty > 1"


@pytest.fixture
def catalog(tmp_path, monkeypatch) -> Catalog:
    catalog = open_local_catalog(tmp_path)
    catalog.create_namespace("shop")
    rows = pa.table({"order_id": pa.array([1, 2], pa.int64()), "qty": pa.array([1, 5], pa.int32())})
    catalog.create_table("shop.orders", schema=rows.schema).append(rows)
    extra = {**local_catalog_properties(tmp_path), "catalog_name": "default", "lineage_namespace": "iceberg://t"}
    monkeypatch.setenv("AIRFLOW_CONN_ICEBERG_DEFAULT", json.dumps({"conn_type": "iceberg_catalog", "extra": extra}))
    return catalog


def _counting_table_loads(operator: IcebergSqlOperator) -> list[object]:
    """Record each table the operator's own catalog loads from now on (the real catalog still answers)."""
    opened = operator.hook.get_conn()
    loads: list[object] = []
    load_table = opened.load_table

    def counted(identifier):  # type: ignore[no-untyped-def]
        loads.append(identifier)
        return load_table(identifier)

    opened.load_table = counted  # type: ignore[method-assign]
    return loads


def test_start_built_in_a_fork_after_rendering_asks_the_catalog_nothing(catalog):
    operator = IcebergSqlOperator(task_id="t", sql=SQL)
    loads = _counting_table_loads(operator)
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    context = {"ti": ti, "outlet_events": defaultdict(SimpleNamespace)}

    operator.render_template_fields(context, jinja_env=Environment())
    rendered = [".".join(name) for name in loads]
    assert sorted(rendered) == ["shop.big_orders", "shop.orders"]

    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the OpenLineage listener's fork: build START, report it and what the catalog was asked
        os.close(reader)
        start = operator.get_openlineage_facets_on_start()
        report = {
            "loads": len(loads),
            "inputs": [[(f.name, f.type) for f in d.facets["schema"].fields] for d in start.inputs],
            "outputs": [[(f.name, f.type) for f in d.facets["schema"].fields] for d in start.outputs],
        }
        os.write(writer, json.dumps(report).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        report = json.loads(answer.read())
    os.waitpid(child, 0)
    assert report == {
        "loads": 2,
        "inputs": [[["order_id", "long"], ["qty", "int"]]],
        "outputs": [[["order_id", "long"], ["double_qty", "int"]]],
    }

    result = operator.execute(context)
    assert result["rows"] == 1
    complete = operator.get_openlineage_facets_on_complete(ti)
    assert [[(f.name, f.type) for f in d.facets["schema"].fields] for d in complete.outputs] == [
        [("order_id", "long"), ("double_qty", "int")]
    ]
    # execute read the source as the rendering had loaded it: the catalog was asked for it once in the try
    assert [".".join(name) for name in loads].count("shop.orders") == 1
