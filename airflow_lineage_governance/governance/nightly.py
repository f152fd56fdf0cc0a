"""The nightly governance pass: every check over the lineage received for one scheduled run, as one report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from airflow_lineage_governance.governance.checks import missing_metadata, unaccounted
from airflow_lineage_governance.governance.classify import understated
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.governance.runs import SUCCESS, parse_failures
from airflow_lineage_governance.governance.session import Governance


def nightly_report(verdict: Mapping[str, Any], governance: Governance, catalog_tables: Iterable[str], *,
                   dag_id: str, run_id: str, logical_date: str, backend_problem: str | None = None) -> GovernanceReport:
    """Returns the report of one governance run: missing COMPLETE events (from the sensor's verdict),
    unaccounted tables, missing metadata with proposals, understated classes, and coverage."""
    findings: list[dict[str, Any]] = []
    if not verdict.get("finished"):
        findings.append({"kind": "target_run_unfinished", "dag_id": verdict.get("target_dag_id"),
                         "run_id": verdict.get("target_run_id"), "reason": verdict.get("backend_problem")})
    findings.extend(verdict.get("missing") or [])
    findings.extend(f.to_dict() for f in unaccounted(catalog_tables, governance.metadata, governance.graph))
    findings.extend(f.to_dict() for f in missing_metadata(governance.graph, governance.metadata,
                                                          governance.proposals))
    findings.extend(f.to_dict() for f in understated(governance.proposals, governance.rules))
    states = verdict.get("task_states") or {}
    succeeded = [t for t, s in states.items() if s == SUCCESS]
    missing_jobs = {m["task_id"] for m in verdict.get("missing") or []}
    target, target_run = verdict.get("target_dag_id") or "", verdict.get("target_run_id") or ""
    report = governance.report
    written = [c for table in governance.graph.outputs for c in governance.graph.columns_of(table)]
    coverage = {
        "target_dag_id": target,
        "target_run_id": target_run,
        "tasks_scheduled": len(states),
        "tasks_succeeded": len(succeeded),
        "tasks_with_lineage": len([t for t in succeeded if t not in missing_jobs]),
        "columns_with_lineage": len([c for c in written if governance.graph.in_edges(c)]),
        "parse_failures": len(parse_failures(governance.events, target, target_run)),
        "events_read": report.events,
        "events_malformed": report.malformed + report.truncated + report.wrong_shape + report.unknown_type,
        "events_duplicated": report.duplicates,
        "events_late": report.late,
        "lineage_backend": backend_problem or verdict.get("backend_problem") or "reachable",
        "event_source": report.source,
    }
    if report.problems:
        coverage["event_source_notes"] = "; ".join(report.problems[:3])
    return GovernanceReport(dag_id, run_id, logical_date, findings, coverage)
