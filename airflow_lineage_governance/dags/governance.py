"""The nightly governance DAG, as a factory: waits for a target DAG's run of the same logical date and its
lineage, runs every check, writes governance-report.json and .md, and fails on error findings."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_lineage_governance.sensors.lineage_complete import (
    LineageCompleteSensor,
    default_event_source,
    default_job_namespace,
)


def report_folder() -> Path:
    """Returns $LINEAGE_GOVERNANCE_REPORT_DIR, else $AIRFLOW_HOME/governance-reports."""
    configured = os.environ.get("LINEAGE_GOVERNANCE_REPORT_DIR")
    return Path(configured) if configured else Path(os.environ.get("AIRFLOW_HOME", ".")) / "governance-reports"


def governance_dag(dag_id: str, target_dag_id: str, *, schedule: Any, start_date: datetime,
                   events: str | None = None, wait_seconds: float | None = None,
                   poke_seconds: float | None = None, iceberg_conn_id: str = "iceberg_default",
                   **dag_kwargs: Any) -> DAG:
    """Returns the governance DAG for `target_dag_id`; give it the target's schedule so logical dates match.
    The wait defaults to $LINEAGE_GOVERNANCE_WAIT_SECONDS (600) and the poke interval to
    $LINEAGE_GOVERNANCE_POKE_SECONDS (30)."""
    wait_seconds = wait_seconds or float(os.environ.get("LINEAGE_GOVERNANCE_WAIT_SECONDS", "600"))
    poke_seconds = poke_seconds or float(os.environ.get("LINEAGE_GOVERNANCE_POKE_SECONDS", "30"))
    with DAG(dag_id=dag_id, schedule=schedule, start_date=start_date, catchup=False, **dag_kwargs) as dag:
        wait = LineageCompleteSensor(task_id="wait_for_lineage", target_dag_id=target_dag_id, events=events,
                                     timeout=wait_seconds, poke_interval=poke_seconds)

        @task
        def run_checks(verdict: dict[str, Any], **context: Any) -> dict[str, Any]:
            """Runs every check over the received lineage; returns the report as data."""
            from airflow_lineage_governance.governance.nightly import nightly_report
            from airflow_lineage_governance.governance.session import Governance
            from airflow_lineage_governance.hooks.iceberg import IcebergHook
            from airflow_lineage_governance.iceberg.catalog import table_names

            governance, problem = Governance.load_tolerant(verdict.get("events") or default_event_source(),
                                                           job_namespaces=verdict.get("job_namespace")
                                                           or default_job_namespace())
            report = nightly_report(verdict, governance, table_names(IcebergHook(iceberg_conn_id).get_conn()),
                                    dag_id=context["dag"].dag_id, run_id=context["run_id"],
                                    logical_date=context["logical_date"].isoformat(), backend_problem=problem)
            return report.to_dict()

        @task
        def write_report(report: dict[str, Any]) -> str:
            """Writes the report, shows it in the task log, and fails the run on error findings."""
            from airflow_lineage_governance.governance.report import GovernanceReport, markdown

            governance_report = GovernanceReport.from_dict(report)
            json_path, md_path = governance_report.write(report_folder())
            print(markdown(governance_report))
            print(f"Report written to {json_path} and {md_path}")
            if governance_report.errors:
                raise AirflowFailException(f"{len(governance_report.errors)} governance error findings; "
                                           f"see {md_path}")
            return str(json_path)

        write_report(run_checks(wait.output))  # type: ignore[arg-type]  # XComArgs, resolved when the tasks run
    return dag
