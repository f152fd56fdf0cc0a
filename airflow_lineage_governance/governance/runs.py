"""Runs with no COMPLETE event: the scheduler's task states held against the events that arrived."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from airflow_lineage_governance.governance import findings
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.graph.events import COMPLETE, FAIL, RunEvent

SUCCESS = "success"
FINISHED = frozenset({"success", "failed", "skipped", "upstream_failed", "removed"})


def events_of_run(events: Iterable[RunEvent], dag_id: str, run_id: str) -> list[RunEvent]:
    """Return the task events of the DAG run `run_id` of `dag_id` (matched on the `airflow` run facet)."""
    prefix = f"{dag_id}."
    return [e for e in events if e.job_name.startswith(prefix) and e.dag_run_id == run_id]


def map_index_of(key: str, dag_id: str, jobs: Iterable[str]) -> tuple[str, int] | None:
    """Return (task id, map index) when `key` of the scheduler's task states is one map index of a mapped task.

    The Task SDK names it `<task id>_<map index>`: `<task id>` is a job of the events and `key` is not.
    """
    known = set(jobs)
    task_id, _, index = key.rpartition("_")
    if not (task_id and index.isdigit()) or f"{dag_id}.{key}" in known or f"{dag_id}.{task_id}" not in known:
        return None
    return task_id, int(index)


def missing_completes(
    task_states: Mapping[str, str], events: Iterable[RunEvent], dag_id: str, run_id: str, reason: str = ""
) -> list[Finding]:
    """Return a missing_complete finding for every task that succeeded in the run with no COMPLETE of its job.

    A COMPLETE event of its job for that run, by task id. A task that failed or was skipped never had a COMPLETE to
    send; a retried task is matched on any try's COMPLETE (only the try that succeeded sends one). The try number is the
    latest any event of the task names.

    A mapped task's map indexes share its job: they are held against the COMPLETE events of that job in the
    run, one run id per map index, and a mapped task with fewer of them than successful map indexes gets one
    finding saying how many are missing.
    """
    of_run = events_of_run(events, dag_id, run_id)
    completed: dict[str, set[str]] = {}
    tries: dict[str, int] = {}
    for event in of_run:
        if event.event_type == COMPLETE:
            completed.setdefault(event.job_name, set()).add(event.run_id)
        if event.try_number is not None:
            tries[event.job_name] = max(event.try_number, tries.get(event.job_name, 0))
    jobs = {event.job_name for event in of_run}
    missing = []
    successful_indexes: dict[str, int] = {}
    for key, state in sorted(task_states.items()):
        mapped = map_index_of(key, dag_id, jobs)
        if mapped is not None:
            if state == SUCCESS:
                successful_indexes[mapped[0]] = successful_indexes.get(mapped[0], 0) + 1
            continue
        job = f"{dag_id}.{key}"
        if state == SUCCESS and job not in completed:
            missing.append(findings.missing_complete(job, key, tries.get(job), state, reason))
    for task_id, count in sorted(successful_indexes.items()):
        job = f"{dag_id}.{task_id}"
        short = count - len(completed.get(job, ()))
        if short > 0:
            why = f"{short} of its {count} successful map indexes have no COMPLETE event"
            missing.append(
                findings.missing_complete(job, task_id, tries.get(job), SUCCESS, f"{why}; {reason}" if reason else why)
            )
    return missing


def parse_failures(events: Iterable[RunEvent], dag_id: str, run_id: str) -> list[str]:
    """Return the jobs of the run whose FAIL event carries an `extractionError` run facet, sorted.

    OpenLineage's ExtractionErrorRunFacet: their lineage could not be read.
    """
    return sorted(
        {e.job_name for e in events_of_run(events, dag_id, run_id) if e.event_type == FAIL and e.extraction_failed}
    )
