"""The nightly governance DAG over distributed_mapped, reading the events both workers sent through Marquez."""

from __future__ import annotations

from datetime import datetime

from airflow_lineage_governance.dags.governance import governance_dag

dag = governance_dag("distributed_governance", "distributed_mapped", schedule=None, start_date=datetime(2026, 1, 1))
