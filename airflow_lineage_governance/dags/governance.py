"""The nightly governance DAG, as a factory.

Waits for a target DAG's run of the same logical date and its lineage, brings the event source's new events into the
lineage store, runs every check over the store, writes the run's own governance-report.json and .md and records the run
and its findings in the store, shows the findings in the task log, and fails on error findings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from airflow.sdk import DAG, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_lineage_governance import settings
from airflow_lineage_governance.sensors.lineage_complete import (
    LineageCompleteSensor,
    default_event_source,
    default_job_namespace,
)

log = logging.getLogger(__name__)


def governance_dag(
    dag_id: str,
    target_dag_id: str,
    *,
    schedule: Any,
    start_date: datetime,
    events: str | None = None,
    wait_seconds: float | None = None,
    poke_seconds: float | None = None,
    iceberg_conn_id: str = "iceberg_default",
    store: str | None = None,
    **dag_kwargs: Any,
) -> DAG:
    """Return the governance DAG for `target_dag_id`; give it the target's schedule so logical dates match.

    The wait and the poke interval default to `[lineage_governance] wait_seconds` (600) and `poke_seconds` (30). The
    lineage store (`store`: a DuckDB file or a postgresql:// URL) defaults to `settings.governance_store()`: the
    `[lineage_governance] store_conn_id` connection's database, else the `store` DuckDB file, a relative path taken in
    the report folder. Raises MissingSettingError when either setting is not a number.
    """
    wait_seconds = wait_seconds or settings.seconds("wait_seconds")
    poke_seconds = poke_seconds or settings.seconds("poke_seconds")
    with DAG(dag_id=dag_id, schedule=schedule, start_date=start_date, catchup=False, **dag_kwargs) as dag:
        wait = LineageCompleteSensor(
            task_id="wait_for_lineage",
            target_dag_id=target_dag_id,
            events=events,
            timeout=wait_seconds,
            poke_interval=poke_seconds,
        )

        @task
        def run_checks(verdict: dict[str, Any], **context: Any) -> dict[str, Any]:
            """Bring the event source's new events into the lineage store, run every check over it; return the report.

            The report as data. Only the events after the watermark the store keeps (less an overlap) are asked of a
            Marquez source. When the source cannot be read, the checks that need lineage are one lineage_unavailable
            finding and the coverage tells what the store held already.
            """
            from airflow_lineage_governance.governance.nightly import nightly_report
            from airflow_lineage_governance.hooks.iceberg import IcebergHook
            from airflow_lineage_governance.iceberg.catalog import table_names

            catalog = IcebergHook(iceberg_conn_id).get_conn()
            tables, design = table_names(catalog), configured_design(catalog, context)
            with stored_lineage(store or settings.governance_store(), verdict) as (lineage, problem):
                report = nightly_report(
                    verdict,
                    lineage,
                    tables,
                    dag_id=context["dag"].dag_id,
                    run_id=context["run_id"],
                    logical_date=context["logical_date"].isoformat(),
                    backend_problem=problem,
                    design=design,
                    freshness_days=settings.whole_days("freshness_days"),
                )
            return report.to_dict()

        @task
        def write_report(report: dict[str, Any], **context: Any) -> dict[str, Any]:
            """Write the run's report into its own folder and its run and findings into the lineage store.

            Then log each finding, and fail the run on error findings. The store keeps one record per DAG run: a run
            cleared and run again replaces it. Each finding is logged on one line; the report's paths and counts are
            pushed (XCom `report`, and the return value).
            """
            from airflow_lineage_governance.governance.recorded_runs import record_report
            from airflow_lineage_governance.governance.report import GovernanceReport

            governance_report = GovernanceReport.from_dict(report)
            folder = settings.run_report_folder(context["dag"].dag_id, context["run_id"])
            json_path, md_path = governance_report.write(folder)
            recorded = record_report(store or settings.governance_store(), governance_report, datetime.now(UTC))
            log.info("Findings recorded in the lineage store %s", recorded)
            summary = report_summary(governance_report, json_path, md_path)
            log_report(governance_report, summary)
            context["ti"].xcom_push(key="report", value=summary)  # also there when the run fails
            if governance_report.errors:
                raise AirflowFailException(f"{summary['errors']} governance error findings; see {md_path}")
            return summary

        write_report(run_checks(wait.output))  # type: ignore[arg-type]  # XComArgs, resolved when the tasks run
    return dag


@contextmanager
def stored_lineage(location: str, verdict: dict[str, Any]) -> Iterator[tuple[Any, str | None]]:
    """Sync the verdict's event source (else the configured one) into the store at `location`, and give the store.

    The store as the nightly report reads it (`StoredLineage`, the job namespace the verdict names), and why the source
    could not be read (None when it was). The store is created when missing; what the sync read is logged.
    """
    from airflow_lineage_governance.governance.config import load_metadata, load_rules
    from airflow_lineage_governance.governance.store_session import StoredGovernance
    from airflow_lineage_governance.graph.errors import EventSourceError
    from airflow_lineage_governance.store.sync import open_waiting, sync

    source = verdict.get("events") or default_event_source()
    synced, problem = None, None
    if source is None:
        problem = "no event source is configured"
    else:
        try:
            synced = sync(location, source, create=True)
            log.info("Synced into the lineage store %s: %s", synced.store, synced.line())
        except EventSourceError as error:
            problem = str(error)
            log.warning("The lineage store keeps what it held: %s", problem)
    rules = load_rules()
    metadata = load_metadata(None, rules)
    namespace = verdict.get("job_namespace") or default_job_namespace()
    with StoredGovernance(rules, metadata, open_waiting(location, create=True), [namespace]) as governance:
        yield governance.nightly(synced.source if synced is not None else str(source), synced), problem


def configured_design(catalog: Any, context: Any) -> Any:
    """Return the design lineage of `[lineage_governance] design_dags_folder` for the run's logical date.

    It is read against `catalog`; None when no design folder is set (the nightly then compares no design).
    """
    folder = settings.setting("design_dags_folder")
    if not folder:
        return None
    from airflow_lineage_governance.design.dagbag import catalog_design

    return catalog_design(folder, catalog, context["logical_date"])


def report_summary(report: Any, json_path: Any, md_path: Any) -> dict[str, Any]:
    """Return what the report task hands on (XCom): the report's two paths and its counts."""
    return {
        "report": str(json_path),
        "markdown": str(md_path),
        "findings": len(report.findings),
        "errors": len(report.errors),
        "warnings": len(report.findings) - len(report.errors),
    }


def log_report(report: Any, summary: dict[str, Any]) -> None:
    """Log the report through the task's logger.

    Each finding on one line (errors at ERROR, warnings at WARNING), then the counts, the coverage and the report's
    paths.
    """
    from airflow_lineage_governance.kinds import Severity

    for finding in report.findings:
        level = logging.ERROR if finding.severity is Severity.ERROR else logging.WARNING
        log.log(level, "%s", finding.line())
    log.info(
        "Governance of %s: %d errors, %d warnings",
        report.coverage.get("target_run_id") or report.run_id,
        summary["errors"],
        summary["warnings"],
    )
    from airflow_lineage_governance.governance.report import coverage_lines

    for line in coverage_lines(report.coverage):
        log.info("Coverage %s", line)
    log.info("Report written to %s and %s", summary["report"], summary["markdown"])
