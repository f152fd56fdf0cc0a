"""Twenty IcebergSqlOperator tasks at once, each a CREATE OR REPLACE TABLE ... AS over a small table (a twentieth
of `dist.numbers`' 1,000 rows) into a table of its own: no two tasks conflict, so each task's time is its own."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG

from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

TASKS = 20

with DAG("overhead_fanout", schedule=None, start_date=datetime(2026, 1, 1), catchup=False):
    for i in range(TASKS):
        IcebergSqlOperator(
            task_id=f"ctas_{i}",
            sql=f"CREATE OR REPLACE TABLE dist.part_{i} AS SELECT n, n * 2 AS doubled, n % 7 AS bucket "
            f"FROM dist.numbers WHERE n % {TASKS} = {i}",
        )
