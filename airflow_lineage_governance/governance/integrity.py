"""The integrity and freshness figures, for the report's coverage.

The share of runs with lineage, COMPLETE runs missing inputs, outputs or versions, catalog tables with no recent edge,
lineage parse failures, and late events.

Definitions (the report states them by its keys):
- a COMPLETE run is the latest COMPLETE of a task job (a job of the DAG checked, when one is; DAG-level events,
  which carry the `airflowDagRun` facet and never datasets, are left out);
- it misses versions when an input or output dataset of it has no `version` facet (the snapshot read or written);
- a catalog table has no recent edge when no job's latest COMPLETE at or after `now - days` reads or writes it;
- a parse failure is a run whose FAIL event carries an `extractionError` run facet (its lineage was unreadable);
- an event is late when it arrives after an event of the same run with a later event time (received out of
  order, e.g. a START after its run's COMPLETE). Duplicates (same run, type and time) are counted by the reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from airflow_lineage_governance.graph.build import LineageGraph
from airflow_lineage_governance.graph.events import FAIL, RunEvent
from airflow_lineage_governance.refs import TableRef

DEFAULT_FRESHNESS_DAYS = 7


def _of_dag(job: str, dag_id: str) -> bool:
    return not dag_id or job.startswith(f"{dag_id}.")


def _datasets(raw: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    found = raw.get(key)
    return [d for d in found if type(d) is dict and type(d.get("name")) is str] if type(found) is list else []


def _is_dag_event(raw: Mapping[str, Any]) -> bool:
    run = raw.get("run")
    facets = run.get("facets") if type(run) is dict else None
    return type(facets) is dict and "airflowDagRun" in facets


def _versioned(dataset: Mapping[str, Any]) -> bool:
    facets = dataset.get("facets")
    return type(facets) is dict and type(facets.get("version")) is dict


def complete_runs(graph: LineageGraph, dag_id: str = "") -> dict[str, list[str]]:
    """Return the task jobs whose latest COMPLETE names no input, no output, or a dataset with no version.

    Jobs of `dag_id`, or every one; each list sorted, with `checked`: every job looked at. A MERGE, UPDATE or DELETE
    reads its own target, which has no version before its first write: that input alone may go unversioned.
    """
    found: dict[str, list[str]] = {"checked": [], "missing_inputs": [], "missing_outputs": [], "missing_versions": []}
    for job, event in sorted(graph.jobs.items()):
        raw = event.raw
        if raw is None or not _of_dag(job, dag_id) or _is_dag_event(raw):
            continue
        found["checked"].append(job)
        inputs, outputs = _datasets(raw, "inputs"), _datasets(raw, "outputs")
        if not inputs:
            found["missing_inputs"].append(job)
        if not outputs:
            found["missing_outputs"].append(job)
        written = {(d.get("namespace"), d["name"]) for d in outputs}
        read = [d for d in inputs if (d.get("namespace"), d["name"]) not in written or _versioned(d)]
        if any(not _versioned(d) for d in (*read, *outputs)):
            found["missing_versions"].append(job)
    return found


def tables_without_recent_edges(
    graph: LineageGraph, catalog_tables: Iterable[TableRef | str], now: datetime, days: int = DEFAULT_FRESHNESS_DAYS
) -> list[str]:
    """Return the catalog tables that no job's latest COMPLETE at or after `now - days` reads or writes.

    Tables are refs or dotted names; sorted by name. Raises InvalidNameError for a name of no table.
    """
    since = now - timedelta(days=days)
    touched: set[TableRef] = set()
    for event in graph.jobs.values():
        if event.raw is None or event.at < since:
            continue
        for dataset in (*_datasets(event.raw, "inputs"), *_datasets(event.raw, "outputs")):
            ref = graph.table_ref(dataset["name"])
            if ref is not None:
                touched.add(ref)
    tables = {t if isinstance(t, TableRef) else TableRef.parse(t) for t in catalog_tables}
    return sorted(str(t) for t in tables if t not in touched)


def parse_failure_runs(events: Iterable[RunEvent], dag_id: str = "") -> int:
    """Return the number of runs (of `dag_id`'s jobs, or every job) whose FAIL event carries `extractionError`."""
    return len(
        {e.run_id for e in events if e.event_type == FAIL and e.extraction_failed and _of_dag(e.job_name, dag_id)}
    )


def late_events(events: Iterable[RunEvent]) -> int:
    """Return how many events arrived after an event of the same run with a later event time.

    Arrival is the order given: the order read.
    """
    latest: dict[str, datetime] = {}
    late = 0
    for event in events:
        known = latest.get(event.run_id)
        if known is not None and event.at < known:
            late += 1
        else:
            latest[event.run_id] = event.at
    return late


def share(part: int, whole: int) -> float | None:
    """Return part / whole rounded to 3 places, or None when whole is 0."""
    return round(part / whole, 3) if whole else None


def integrity(
    graph: LineageGraph,
    events: Iterable[RunEvent],
    catalog_tables: Iterable[TableRef | str] | None,
    now: datetime,
    *,
    dag_id: str = "",
    days: int = DEFAULT_FRESHNESS_DAYS,
) -> dict[str, Any]:
    """Return the integrity and freshness figures (see the module's definitions), flat, as the coverage shows them.

    COMPLETE runs checked and those missing inputs, outputs or versions (jobs of `dag_id`, or every job), catalog tables
    with no edge in `days` days (when the catalog's tables are given), parse failures in every run read, and late
    events.
    """
    events = list(events)
    return integrity_figures(
        graph, catalog_tables, now, parse_failure_runs(events, dag_id), late_events(events), dag_id=dag_id, days=days
    )


def integrity_figures(
    graph: LineageGraph,
    catalog_tables: Iterable[TableRef | str] | None,
    now: datetime,
    parse_failures: int,
    late: int,
    *,
    dag_id: str = "",
    days: int = DEFAULT_FRESHNESS_DAYS,
) -> dict[str, Any]:
    """Return the figures `integrity` gives, the parse failures and late events counted already.

    Args:
        graph: The lineage graph as of now, each job's latest COMPLETE event in `graph.jobs`.
        catalog_tables: The catalog's tables (None: no freshness figures).
        now: The time the freshness is measured at.
        parse_failures: The runs whose FAIL event carries `extractionError`.
        late: The events that arrived after an event of the same run with a later event time.
        dag_id: The DAG whose jobs are checked ("": every job).
        days: The freshness window.

    Returns:
        The figures, by the coverage's keys.
    """
    runs = complete_runs(graph, dag_id)
    found: dict[str, Any] = {
        "complete_runs_checked": len(runs["checked"]),
        "complete_runs_missing_inputs": runs["missing_inputs"],
        "complete_runs_missing_outputs": runs["missing_outputs"],
        "complete_runs_missing_versions": runs["missing_versions"],
    }
    if catalog_tables is not None:
        found["freshness_days"] = days
        found["tables_without_recent_edges"] = tables_without_recent_edges(graph, catalog_tables, now, days)
    found["parse_failures_in_events"] = parse_failures
    found["events_late"] = late
    return found
