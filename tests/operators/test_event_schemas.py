"""START names each output with the fields and types COMPLETE gives it, or names no output: the operator's own
OpenLineage methods on a real local catalog (the whole-DAG tests run them through Airflow's listener)."""

from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, IntegerType, LongType, NestedField, StringType, StructType

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

ORDERS = Schema(
    NestedField(1, "order_id", LongType()),
    NestedField(2, "qty", IntegerType()),
    NestedField(3, "amount", DecimalType(10, 2)),
    NestedField(4, "note", StringType()),
    NestedField(5, "address", StructType(NestedField(6, "city", StringType()))),
)


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    catalog = open_local_catalog(tmp_path)
    catalog.create_namespace("shop")
    table = catalog.create_table("shop.orders", schema=ORDERS)
    table.append(
        pa.Table.from_pylist(
            [{"order_id": 1, "qty": 2, "amount": None, "note": "a", "address": {"city": "Lyon"}}],
            schema=table.schema().as_arrow(),
        )
    )
    extra = {**local_catalog_properties(tmp_path), "catalog_name": "default", "lineage_namespace": "iceberg://t"}
    monkeypatch.setenv("AIRFLOW_CONN_ICEBERG_DEFAULT", json.dumps({"conn_type": "iceberg_catalog", "extra": extra}))
    return catalog


def fields(lineage) -> list[list[tuple[str, str | None]]]:
    return [[(f.name, f.type) for f in dataset.facets["schema"].fields] for dataset in lineage.outputs]


def input_fields(lineage) -> list[list[tuple[str, str | None]]]:
    return [[(f.name, f.type) for f in dataset.facets["schema"].fields] for dataset in lineage.inputs]


def run(sql: str):
    """Returns the START and COMPLETE lineage of the statement, run as a task does (START read in a fork)."""
    start = IcebergSqlOperator(task_id="t", sql=sql).get_openlineage_facets_on_start()
    operator = IcebergSqlOperator(task_id="t", sql=sql)
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})
    return start, operator.get_openlineage_facets_on_complete(ti)


ORDER_FIELDS = [
    ("order_id", "long"),
    ("qty", "int"),
    ("amount", "decimal(10, 2)"),
    ("note", "string"),
    ("address", "struct<city: string>"),
]


def test_a_new_table_is_named_with_the_types_duckdb_binds(catalog):
    start, complete = run(
        "create table shop.totals as select note, sum(amount) as total, count(*) as n, "
        "max(qty) + 1 as most, address.city as city from shop.orders group by note, address.city"
    )
    assert (
        fields(start)
        == fields(complete)
        == [[("note", "string"), ("total", "decimal(38, 2)"), ("n", "long"), ("most", "int"), ("city", "string")]]
    )
    assert input_fields(start) == input_fields(complete) == [ORDER_FIELDS]


def test_an_insert_names_every_column_of_the_target_with_the_catalog_types(catalog):
    start, complete = run("insert into shop.orders (order_id, note) select order_id + 10, note from shop.orders")
    assert fields(start) == fields(complete) == [ORDER_FIELDS]


def test_a_replace_that_changes_the_types_is_named_by_complete_only(catalog):
    run("create table shop.copy as select order_id, qty from shop.orders")
    same, complete = run("create or replace table shop.copy as select order_id, qty from shop.orders")
    assert fields(same) == fields(complete) == [[("order_id", "long"), ("qty", "int")]]
    changed, complete = run("create or replace table shop.copy as select order_id, qty * 1.5 as qty from shop.orders")
    assert changed.outputs == []
    assert fields(complete) == [[("order_id", "long"), ("qty", "decimal(12, 1)")]]


def test_a_type_no_iceberg_type_holds_names_no_output(catalog):
    operator = IcebergSqlOperator(
        task_id="t", sql="create table shop.spans as select interval 1 day as span from shop.orders"
    )
    start = operator.get_openlineage_facets_on_start()
    assert start.outputs == [] and input_fields(start) == [ORDER_FIELDS]


def test_start_names_the_new_table_from_the_lineages_binding_without_a_connection_of_its_own(catalog, monkeypatch):
    """START takes the output's types from the binding the lineage read made: no other DuckDB connection opens."""
    import airflow_lineage_governance.iceberg.read as read
    import airflow_lineage_governance.iceberg.result_schema as result_schema

    def refused(*args, **kwargs):
        raise AssertionError("START opened a DuckDB connection of its own")

    monkeypatch.setattr(read, "sandboxed_connection", refused)
    monkeypatch.setattr(result_schema, "sandboxed_connection", refused)
    start = IcebergSqlOperator(
        task_id="t",
        sql="create table shop.parts as select a.order_id, a.amount * b.qty as "
        "total, [a.note] as notes, b.address from shop.orders a, shop.orders b "
        "where a.order_id = b.order_id",
    ).get_openlineage_facets_on_start()
    assert fields(start) == [
        [
            ("order_id", "long"),
            ("total", "decimal(18, 2)"),
            ("notes", "list<string>"),
            ("address", "struct<city: string>"),
        ]
    ]


def test_the_facet_methods_start_opening_no_duckdb_connection_for_a_statement_they_do_not_run(catalog, monkeypatch):
    """START and FAIL read the lineage in a fork of the task's process, which never runs the statement: no DuckDB
    connection starts opening there. execute() starts opening the one it runs the statement on."""
    import airflow_lineage_governance.iceberg.read as read

    opened: list[str] = []
    monkeypatch.setattr(read, "prepare_sandboxed_connection", lambda: opened.append("opening"))
    sql = "create table shop.notes as select order_id, note from shop.orders"
    start = IcebergSqlOperator(task_id="t", sql=sql).get_openlineage_facets_on_start()
    failed = IcebergSqlOperator(task_id="t", sql=sql).get_openlineage_facets_on_failure(None)
    assert fields(start) == fields(failed) == [[("order_id", "long"), ("note", "string")]]
    assert opened == []
    operator = IcebergSqlOperator(task_id="t", sql=sql)
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    assert operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})["rows"] == 1
    assert opened == ["opening"]
    assert fields(operator.get_openlineage_facets_on_complete(ti)) == fields(start)
    assert opened == ["opening"]


FORK_PROBE = """
import json, sys
import jinja2
if "--listener" in sys.argv:  # a task with OpenLineage on has loaded the provider's listener before rendering
    import airflow.providers.openlineage.plugins.listener
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator
operator = IcebergSqlOperator(task_id="t", sql="create table shop.notes as select order_id, note from shop.orders")
operator.render_template_fields({}, jinja2.Environment())
before = set(sys.modules)
start = operator.get_openlineage_facets_on_start()
used = ("pyarrow", "pyiceberg.table", "openlineage.client.facet_v2", "sqlalchemy.orm",
        "airflow_lineage_governance.lineage.datasets", "airflow_lineage_governance.iceberg.result_schema")
imported = [m for m in used if m in sys.modules and m not in before]
print(json.dumps({"outputs": [d.name for d in start.outputs], "imported": imported}))
"""


def test_the_start_fork_inherits_the_modules_the_facets_use_from_rendering(catalog, tmp_path):
    """Rendering the template, before the listener forks for START, imports what the facet methods use: the fork,
    which the task waits for, does not import it again (a fresh interpreter stands for the task's process)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow"), "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-c", FORK_PROBE, "--listener"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"outputs": ["shop.notes"], "imported": []}


def test_rendering_imports_no_openlineage_client_when_openlineage_is_off(catalog, tmp_path):
    """Without the OpenLineage listener nothing calls the facet methods: rendering leaves the client unimported
    (the START facets, called anyway, import it themselves and still name the output)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow"), "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-c", FORK_PROBE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["outputs"] == ["shop.notes"]
    assert "openlineage.client.facet_v2" in answer["imported"]


ONE_READ_PROBE = """
import json, os, sys
from collections import defaultdict
from types import SimpleNamespace
import jinja2
import airflow_lineage_governance.iceberg.catalog as catalog
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

loads = []
load_tables = catalog.load_tables
catalog.load_tables = lambda *args: loads.append(os.getpid()) or load_tables(*args)
operator = IcebergSqlOperator(task_id="t", sql="create table shop.notes as select order_id, note from shop.orders")
operator.render_template_fields({}, jinja2.Environment())
reader, writer = os.pipe()
child = os.fork()
if child == 0:  # as the OpenLineage listener builds START: in a fork, which the task waits for
    start = operator.get_openlineage_facets_on_start()
    fields = [[(f.name, f.type) for f in d.facets["schema"].fields] for d in start.outputs]
    os.write(writer, json.dumps({"fields": fields, "loads": loads.count(os.getpid())}).encode())
    os._exit(0)
os.close(writer)
os.waitpid(child, 0)
forked = json.loads(os.read(reader, 65536))
ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
rows = operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})["rows"]
print(json.dumps({"start": forked, "rows": rows, "loads": len(loads)}))
"""


def test_a_try_reads_its_lineage_once_when_the_template_is_rendered(catalog, tmp_path):
    """Rendering reads the lineage before the listener forks for START: the fork builds START from that read and
    execute() runs on it, so the catalog's tables are loaded once per try (a fresh interpreter stands for the task's
    process, a fork for the listener's)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow"), "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-c", ONE_READ_PROBE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "start": {"fields": [[["order_id", "long"], ["note", "string"]]], "loads": 0},
        "rows": 1,
        "loads": 1,
    }


def test_a_read_that_failed_on_the_catalog_when_rendering_is_made_again_by_execute(catalog, monkeypatch):
    """A catalog that does not answer while the template renders fails nothing there: execute() reads again."""
    import jinja2

    import airflow_lineage_governance.iceberg.catalog as catalog_module

    load_tables = catalog_module.load_tables
    calls: list[str] = []

    def unanswered_once(*args):
        calls.append("load")
        if len(calls) == 1:
            raise OSError("the catalog did not answer")
        return load_tables(*args)

    monkeypatch.setattr(catalog_module, "load_tables", unanswered_once)
    operator = IcebergSqlOperator(task_id="t", sql="create table shop.notes as select order_id, note from shop.orders")
    operator.render_template_fields({}, jinja2.Environment())
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    assert operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})["rows"] == 1
    assert calls == ["load", "load"]
    assert fields(operator.get_openlineage_facets_on_complete(ti)) == [[("order_id", "long"), ("note", "string")]]
