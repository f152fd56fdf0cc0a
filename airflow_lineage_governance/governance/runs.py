"""Runs with no COMPLETE event: the scheduler's task states held against the events that arrived."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from airflow_lineage_governance.governance import findings
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.graph.events import COMPLETE, FAIL, RunEvent

SUCCESS = "success"
FINISHED = frozenset({"success", "failed", "skipped", "upstream_failed", "removed"})


def events_of_run(events: Iterable[RunEvent], dag_id: str, run_id: str) -> list[RunEvent]:
    """Returns the task events of the DAG run `run_id` of `dag_id` (matched on the `airflow` run facet)."""
    prefix = f"{dag_id}."
    return [e for e in events if e.job_name.startswith(prefix) and e.dag_run_id == run_id]


def missing_completes(task_states: Mapping[str, str], events: Iterable[RunEvent], dag_id: str, run_id: str,
                      reason: str = "") -> list[Finding]:
    """Returns a missing_complete finding for every task that succeeded in the run with no COMPLETE event of
    its job for that run, by task id. A task that failed or was skipped never had a COMPLETE to send; a
    retried task is matched on any try's COMPLETE (only the try that succeeded sends one). The try number is
    the latest any event of the task names."""
    of_run = events_of_run(events, dag_id, run_id)
    completed = {e.job_name for e in of_run if e.event_type == COMPLETE}
    tries: dict[str, int] = {}
    for event in of_run:
        if event.try_number is not None:
            tries[event.job_name] = max(event.try_number, tries.get(event.job_name, 0))
    missing = []
    for task_id, state in sorted(task_states.items()):
        job = f"{dag_id}.{task_id}"
        if state == SUCCESS and job not in completed:
            missing.append(findings.missing_complete(job, task_id, tries.get(job), state, reason))
    return missing


def parse_failures(events: Iterable[RunEvent], dag_id: str, run_id: str) -> list[str]:
    """Returns the jobs of the run whose FAIL event carries an `extractionError` run facet (OpenLineage's
    ExtractionErrorRunFacet: their lineage could not be read), sorted."""
    return sorted({e.job_name for e in events_of_run(events, dag_id, run_id)
                   if e.event_type == FAIL and e.extraction_failed})
