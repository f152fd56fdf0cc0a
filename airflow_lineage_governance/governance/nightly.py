"""The nightly governance pass: every check over the lineage received for one scheduled run, as one report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.governance.checks import run_checks
from airflow_lineage_governance.governance.integrity import DEFAULT_FRESHNESS_DAYS, integrity_figures, share
from airflow_lineage_governance.governance.nightly_lineage import NightlyLineage
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.governance.runs import SUCCESS, parse_failures
from airflow_lineage_governance.refs import TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.design import Design


def nightly_report(
    verdict: Mapping[str, Any],
    governance: NightlyLineage,
    catalog_tables: Iterable[TableRef | str],
    *,
    dag_id: str,
    run_id: str,
    logical_date: str,
    backend_problem: str | None = None,
    now: datetime | None = None,
    design: Design | None = None,
    freshness_days: int = DEFAULT_FRESHNESS_DAYS,
) -> GovernanceReport:
    """Return the report of one governance run.

    Every finding `run_checks` gives (missing COMPLETE events from the sensor's verdict, unaccounted tables, missing
    metadata with proposals, understated classes), then, with a `design` (the DAG files' designed lineage), the warnings
    where it and the target DAG's received lineage differ; and the coverage, with the integrity and freshness figures
    (`governance/integrity.py`; catalog tables with no edge in `freshness_days` days). `backend_problem` is why the
    event source could not be read (or only in part): the checks that need lineage are then one lineage_unavailable
    finding, and no design is compared. `governance` is the lineage received, as the lineage store gives it
    (`StoredLineage`). Raises ValueError when the verdict holds a finding of an unknown kind.
    """
    tables = list(catalog_tables)
    findings = run_checks(governance, tables, verdict, backend_problem)
    found = coverage(verdict, governance, backend_problem, now, tables, freshness_days)
    if design is not None and backend_problem is None:
        from airflow_lineage_governance.governance.drift import design_coverage, design_findings, nightly_diff

        target = verdict.get("target_dag_id") or ""
        diff = nightly_diff(design, governance, target)
        findings.extend(design_findings(diff, target, verdict.get("task_states") or {}))
        found.update(design_coverage(design, diff))
    return GovernanceReport(dag_id, run_id, logical_date, findings, found)


def coverage(
    verdict: Mapping[str, Any],
    governance: NightlyLineage,
    backend_problem: str | None = None,
    now: datetime | None = None,
    catalog_tables: Iterable[TableRef | str] | None = None,
    freshness_days: int = DEFAULT_FRESHNESS_DAYS,
) -> dict[str, Any]:
    """Return what the target run's lineage covered.

    Tasks scheduled, succeeded and with lineage (and that share of the succeeded), the columns its own COMPLETE events
    gave lineage for, its events and lineage parse failures; the jobs of the target DAG whose lineage was taken from an
    earlier run (with that run, its time and its age at `now`); what reading the events found (events of other job
    namespaces counted, never used); and the integrity and freshness figures of `integrity` (late events as it defines
    them, plus those the reader counted).
    """
    states = verdict.get("task_states") or {}
    succeeded = [t for t, s in states.items() if s == SUCCESS]
    missing_tasks = {m["task_id"] for m in verdict.get("missing") or []}
    target, target_run = verdict.get("target_dag_id") or "", verdict.get("target_run_id") or ""
    report = governance.report
    graph = governance.graph
    of_run = governance.run_events(target, target_run) if target else []
    prefix = f"{target}."
    this_run = {job for job, e in graph.jobs.items() if job.startswith(prefix) and e.dag_run_id == target_run}
    written = [c for table, job in graph.outputs.items() if job in this_run for c in graph.columns_of(table)]
    with_lineage = len([t for t in succeeded if t not in missing_tasks])
    moment = now or datetime.now(UTC)
    figures = integrity_figures(
        graph,
        catalog_tables,
        moment,
        governance.parse_failure_runs(target),
        governance.late_events(),
        dag_id=target,
        days=freshness_days,
    )
    found: dict[str, Any] = {
        "target_dag_id": target,
        "target_run_id": target_run,
        "tasks_scheduled": len(states),
        "tasks_succeeded": len(succeeded),
        "tasks_with_lineage": with_lineage,
        "runs_with_lineage_share": share(with_lineage, len(succeeded)),
        "columns_with_lineage": len([c for c in written if graph.in_edges(c)]),
        "parse_failures": len(parse_failures(of_run, target, target_run)),
        "events_of_target_run": len(of_run),
        "events_read": report.events,
        "events_malformed": report.malformed + report.truncated + report.wrong_shape + report.unknown_type,
        "events_duplicated": report.duplicates,
        "events_late": report.late + figures.pop("events_late"),
        "events_other_namespace": report.other_namespace,
        "lineage_backend": backend_problem or verdict.get("backend_problem") or "reachable",
        "event_source": report.source,
        **figures,
    }
    if report.wrong_parts:
        found["event_parts_wrong_shape"] = report.wrong_parts
    earlier = earlier_answers(governance, target, target_run, moment)
    if earlier:
        found["lineage_from_earlier_runs"] = earlier
    if report.problems:
        found["event_source_notes"] = "; ".join(report.problems[:3])
    return found


def earlier_answers(governance: NightlyLineage, dag_id: str, run_id: str, now: datetime) -> dict[str, str]:
    """Return, for each job of `dag_id` whose lineage in the graph comes from a run other than `run_id`, by job.

    The run it came from, that event's time and its age at `now` (`run scheduled__x, 2030-01-31T02:00:00+00:00, 1 d 2 h
    old`).
    """
    prefix = f"{dag_id}."
    found = {}
    for job, event in sorted(governance.graph.jobs.items()):
        if dag_id and job.startswith(prefix) and event.dag_run_id != run_id:
            found[job] = (
                f"run {event.dag_run_id or 'unknown'}, {event.at.isoformat()}, "
                f"{age((now - event.at).total_seconds())} old"
            )
    return found


def age(seconds: float) -> str:
    """Return a duration as a person reads it: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min" if minutes else f"{seconds} s"
