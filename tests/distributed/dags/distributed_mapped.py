"""Mapped IcebergSqlOperator tasks: `.partial(...).expand(sql=[...])` and `.expand_kwargs([...])`, each map index
its own task instance, its own write and its own lineage events."""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.sdk import DAG

from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG(
    "distributed_mapped",
    schedule=None,
    start_date=datetime(2026, 1, 1),
    catchup=False,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=1)},
):
    create = IcebergSqlOperator(
        task_id="create_tables",
        sql="CREATE OR REPLACE TABLE dist.mapped AS SELECT n AS id, 'seed' AS origin FROM dist.numbers WHERE n < 0",
    )
    by_sql = IcebergSqlOperator.partial(task_id="insert_by_sql", target="dist.mapped").expand(
        sql=[
            f"INSERT INTO dist.mapped SELECT n + {100 * k} AS id, 'sql_{k}' AS origin FROM dist.numbers WHERE n < 5"
            for k in range(3)
        ]
    )
    by_kwargs = IcebergSqlOperator.partial(task_id="insert_by_kwargs").expand_kwargs(
        [
            {
                "sql": f"INSERT INTO dist.mapped SELECT n + {1000 + 100 * k} AS id, 'kwargs_{k}' AS origin "
                "FROM dist.numbers WHERE n < 5",
                "target": "dist.mapped",
            }
            for k in range(2)
        ]
    )
    create >> [by_sql, by_kwargs]
