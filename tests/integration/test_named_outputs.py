"""Outputs DuckDB names itself, through real Airflow (`airflow dags test`), DuckDB and a pyiceberg catalog: the
written Iceberg table's columns are the lineage's, an unaliased expression named by DuckDB's rendering of it and a
duplicate renamed `x_1`, as DuckDB's own CREATE TABLE ... AS names them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.refs import TableRef

pytestmark = pytest.mark.integration

NAMED_DAG = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("operator_named", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="expressions", sql="""
        create or replace table n.expressions as
        select s.id, s.id, upper(s.name), count(*) over (partition by s.name), s.id + 1 as "Next Id"
        from n.src s""")
    IcebergSqlOperator(task_id="joined", sql="""
        create or replace table n.joined as
        select * from n.src a join n.src b on a.id = b.id""")
'''


def test_written_columns_are_the_lineages_and_duckdbs(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    create_or_replace(catalog, TableRef(("n",), "src"), pa.table({"id": [1, 2], "name": ["x", "y"]}), {})
    sandbox.write_dag("operator_named", NAMED_DAG)

    run = sandbox.dags_test("operator_named")

    assert run.returncode == 0, run.log[-3000:]
    expected = {
        "expressions": ["id", "id_1", 'upper(s."name")', 'count() OVER (PARTITION BY s."name")', "Next Id"],
        "joined": ["id", "name", "id_1", "name_1"],
    }
    for task, names in expected.items():
        written = catalog.load_table(("n", task)).schema()
        assert [field.name for field in written.fields] == names
        output = run.task_events(task, "COMPLETE")[0]["outputs"][0]
        assert sorted(output["facets"]["columnLineage"]["fields"]) == sorted(names)
