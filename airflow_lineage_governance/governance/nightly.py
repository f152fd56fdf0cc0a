"""The nightly governance pass: every check over the lineage received for one scheduled run, as one report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from airflow_lineage_governance.governance.checks import run_checks
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.governance.runs import SUCCESS, parse_failures
from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.refs import TableRef


def nightly_report(verdict: Mapping[str, Any], governance: Governance, catalog_tables: Iterable[TableRef | str], *,
                   dag_id: str, run_id: str, logical_date: str, backend_problem: str | None = None) -> GovernanceReport:
    """Returns the report of one governance run: every finding `run_checks` gives (missing COMPLETE events
    from the sensor's verdict, unaccounted tables, missing metadata with proposals, understated classes) and
    the coverage. Raises ValueError when the verdict holds a finding of an unknown kind."""
    findings = run_checks(governance, catalog_tables, verdict)
    return GovernanceReport(dag_id, run_id, logical_date, findings, coverage(verdict, governance, backend_problem))


def coverage(verdict: Mapping[str, Any], governance: Governance, backend_problem: str | None = None) -> dict[str, Any]:
    """Returns what the run's lineage covered: tasks scheduled, succeeded and with lineage, written columns
    with lineage, lineage parse failures, and what reading the events found."""
    states = verdict.get("task_states") or {}
    succeeded = [t for t, s in states.items() if s == SUCCESS]
    missing_tasks = {m["task_id"] for m in verdict.get("missing") or []}
    target, target_run = verdict.get("target_dag_id") or "", verdict.get("target_run_id") or ""
    report = governance.report
    graph = governance.graph
    written = [c for table in graph.outputs for c in graph.columns_of(table)]
    found: dict[str, Any] = {
        "target_dag_id": target,
        "target_run_id": target_run,
        "tasks_scheduled": len(states),
        "tasks_succeeded": len(succeeded),
        "tasks_with_lineage": len([t for t in succeeded if t not in missing_tasks]),
        "columns_with_lineage": len([c for c in written if graph.in_edges(c)]),
        "parse_failures": len(parse_failures(governance.events, target, target_run)),
        "events_read": report.events,
        "events_malformed": report.malformed + report.truncated + report.wrong_shape + report.unknown_type,
        "events_duplicated": report.duplicates,
        "events_late": report.late,
        "lineage_backend": backend_problem or verdict.get("backend_problem") or "reachable",
        "event_source": report.source,
    }
    if report.problems:
        found["event_source_notes"] = "; ".join(report.problems[:3])
    return found
