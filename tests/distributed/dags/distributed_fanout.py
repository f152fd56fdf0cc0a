"""Twenty IcebergSqlOperator tasks writing one partitioned table at once on two Celery workers: fourteen INSERTs
over four partitions (several INSERTs into each) and six MERGEs, three into one partition (rewriting the same
file) and three into partitions of their own."""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.sdk import DAG

from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

INSERTS = 14
MERGED = {
    "merge_0": (0, 3),
    "merge_1": (4, 6),
    "merge_2": (7, 9),  # partition 0, one data file
    "merge_3": (30, 39),
    "merge_4": (40, 49),
    "merge_5": (50, 59),
}  # partitions 3, 4, 5

with DAG(
    "distributed_fanout",
    schedule=None,
    start_date=datetime(2026, 1, 1),
    catchup=False,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=1)},
):
    seed = IcebergSqlOperator(
        task_id="seed",
        partition_by=["part"],
        sql="CREATE OR REPLACE TABLE dist.fanout AS SELECT n AS id, n // 10 AS part, 0 AS value "
        "FROM dist.numbers WHERE n < 60",
    )
    writers = [
        IcebergSqlOperator(
            task_id=f"insert_{i}",
            sql=f"INSERT INTO dist.fanout SELECT 1000 + {i * 10} + n AS id, {10 + i % 4} AS part, "
            f"{i} AS value FROM dist.numbers WHERE n < 10",
        )
        for i in range(INSERTS)
    ]
    writers += [
        IcebergSqlOperator(
            task_id=task_id,
            sql=f"MERGE INTO dist.fanout t USING (SELECT n AS id FROM dist.numbers "
            f"WHERE n BETWEEN {low} AND {high}) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET value = t.value + 1",
        )
        for task_id, (low, high) in MERGED.items()
    ]
    seed >> writers
