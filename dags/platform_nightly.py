"""The learning platform's nightly pipelines: one IcebergSqlOperator per SQL file in dags/sql/, plus the
marketing team's export, a plain Python task that sends no lineage of its own.

Daily revenue replaces its day's partition (a re-run or backfill of a day replaces that day); the learner
dimension is upserted from the day's events with a MERGE, then the CRM's erasure requests are deleted from it."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from airflow.sdk import DAG, task

from airflow_lineage_governance.hooks.iceberg import IcebergHook
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator
from learning_platform.export import export_campaign_list

SQL = Path(__file__).parent / "sql"
OPTIONS = {"daily_revenue": {"write_mode": "overwrite_partitions"}}
"""The IcebergSqlOperator arguments of a pipeline beyond its SQL file."""

with DAG(
    dag_id="platform_nightly",
    schedule="0 2 * * *",
    start_date=datetime(2026, 9, 1),
    catchup=False,
    template_searchpath=[str(SQL)],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=5)},
    tags=["platform", "lineage"],
    doc_md=__doc__,
) as dag:
    pipelines = {
        path.stem: IcebergSqlOperator(task_id=path.stem, sql=path.name, **OPTIONS.get(path.stem, {}))
        for path in sorted(SQL.glob("*.sql"))
    }

    # The export overwrites marketing.campaign_list whole, with no retry on a commit conflict: one run at a time.
    @task(task_id="marketing_export", max_active_tis_per_dag=1)
    def marketing_export() -> int:
        """Copies marketing.audience into marketing.campaign_list for the email tool."""
        return export_campaign_list(IcebergHook().get_conn())

    pipelines["marketing_audience"] >> marketing_export()
    pipelines["learner_dim"] >> pipelines["learner_erasure"]
