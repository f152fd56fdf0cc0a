"""One INSERT per DAG whose worker the fault tests kill mid-write: before the commit, or after it and before the
COMPLETE event. Retried on the other worker."""

from __future__ import annotations

from datetime import datetime, timedelta

import fault_points  # noqa: F401  # holds the commit where a test armed it
from airflow.sdk import DAG

from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

for point in ("before_commit", "after_commit"):
    with DAG(
        f"distributed_fault_{point}",
        schedule=None,
        start_date=datetime(2026, 1, 1),
        catchup=False,
        default_args={"retries": 2, "retry_delay": timedelta(seconds=1)},
    ):
        IcebergSqlOperator(
            task_id="insert_rows",
            sql=f"INSERT INTO dist.fault_{point} SELECT n AS id, n % 5 AS part, n * 2 AS value "
            "FROM dist.numbers WHERE n < 100",
        )
