"""What the governance checks ask of the history, answered in the database.

The tables the jobs' runs wrote as of a time (a catalog table none wrote and no metadata declares a source is
unaccounted for), and the events of one DAG run (held against the scheduler's task states for the runs with no COMPLETE
and the runs whose lineage could not be read).

A time is an instant in microseconds since the epoch, or None for now (each job's latest COMPLETE).
"""

from __future__ import annotations

import orjson

from airflow_lineage_governance.graph.events import RunEvent, to_run_event
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.bodies import read_blocks, stored_body
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.queries import NOW, holding_join


def written_tables(engine: Engine, at: int | None = None) -> dict[TableRef, str]:
    """Return each table written by a job's run at `at` (None: now), with the first such job by name.

    Args:
        engine: The store's engine.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        The job writing each table, by table name.
    """
    instant = NOW if at is None else at
    text = engine.text_order
    rows = engine.query(
        f"SELECT d.name, min(j.name{text}) FROM jobs j {holding_join(engine, 'c.shape_id')} JOIN shape_outputs so "
        "ON so.shape_id = c.shape_id JOIN datasets d ON d.dataset_id = so.dataset_id GROUP BY d.name ORDER BY "
        f"d.name{text}",
        [instant, instant],
    )
    return {TableRef.parse(name): job for name, job in rows}


def unaccounted_tables(
    engine: Engine, catalog_tables: list[TableRef], sources: set[TableRef], at: int | None = None
) -> list[TableRef]:
    """Return the catalog tables that are neither a declared source nor written by a job's run at `at`, by name.

    Args:
        engine: The store's engine.
        catalog_tables: The tables of the catalog.
        sources: The tables the metadata declares sources.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        The tables no lineage accounts for, sorted by name.
    """
    written = written_tables(engine, at)
    return sorted({t for t in catalog_tables if t not in sources and t not in written}, key=str)


def run_events(engine: Engine, dag_id: str, run_id: str) -> list[RunEvent]:
    """Return the task events of the DAG run `run_id` of `dag_id` (matched on the `airflow` run facet), in time order.

    Args:
        engine: The store's engine.
        dag_id: The DAG.
        run_id: The DAG run's id.

    Returns:
        The events of the run's tasks (jobs named `dag_id.task_id`), each parsed from the JSON as first received,
        without the JSON (`raw` is None: the checks read none of it, and it is most of each event's memory).
    """
    prefix = f"{dag_id}."
    rows = engine.query(
        "SELECT e.body, e.block_id, e.block_line FROM events e JOIN jobs j ON j.job_id = e.job_id "
        "WHERE e.dag_run_id = ? AND substr(j.name, 1, ?) = ?",
        [run_id, len(prefix), prefix],
    )
    # the blocks by their ids afterwards: joined, DuckDB hashed every block (the store's JSON) past a memory limit
    blocks = dict(read_blocks(engine, sorted({block for _, block, _ in rows if block is not None})))
    found = []
    for own, block, line in rows:
        event = to_run_event(orjson.loads(stored_body(own, blocks.get(block), line)))
        if event is not None:
            event.raw = None
            found.append(event)
    return sorted(found, key=lambda e: e.order)


def _scope(job_namespaces: list[str] | None) -> tuple[str, list[str]]:
    """Return the condition on `j.namespace` keeping the job namespaces (none: every one), and its parameters."""
    if not job_namespaces:
        return "", []
    return f" AND j.namespace IN ({', '.join('?' * len(job_namespaces))})", list(job_namespaces)


def late_events(engine: Engine, job_namespaces: list[str] | None = None) -> int:
    """Return how many events were stored after an event of the same run with a later event time.

    Stored after: in a later ingest (the transport stores each event as it is emitted, so its order is the order of
    arrival; the events of one sync or import keep no order among them).

    Args:
        engine: The store's engine.
        job_namespaces: The job namespaces counted (None: every one).

    Returns:
        The number of late events.
    """
    where, params = _scope(job_namespaces)
    rows = engine.query(
        "SELECT count(*) FROM events e JOIN jobs j ON j.job_id = e.job_id WHERE EXISTS (SELECT 1 FROM events o "
        f"WHERE o.run_key = e.run_key AND o.run_id = e.run_id AND o.at_us > e.at_us AND o.ingested_at_us < "
        f"e.ingested_at_us){where}",
        params,
    )
    return int(rows[0][0])


def parse_failure_runs(engine: Engine, dag_id: str = "", job_namespaces: list[str] | None = None) -> int:
    """Return how many runs (of `dag_id`'s jobs, or every job) have a FAIL event carrying `extractionError`.

    OpenLineage's ExtractionErrorRunFacet: their lineage could not be read.

    Args:
        engine: The store's engine.
        dag_id: The DAG whose jobs (`dag_id.task_id`) are counted ("": every job).
        job_namespaces: The job namespaces counted (None: every one).

    Returns:
        The number of runs.
    """
    where, params = _scope(job_namespaces)
    prefix = f"{dag_id}." if dag_id else ""
    rows = engine.query(
        "SELECT e.run_id, e.body, b.body, e.block_line FROM events e JOIN jobs j ON j.job_id = e.job_id "
        "LEFT JOIN event_blocks b ON b.block_id = e.block_id WHERE e.event_type = 'FAIL' AND substr(j.name, 1, ?) = ?"
        f"{where}",
        [len(prefix), prefix, *params],
    )
    failed = set()
    for run_id, own, block, line in rows:
        body = stored_body(own, block, line)
        if b"extractionError" not in body and b"\\u" not in body:  # none (not even escaped): no need to parse it
            continue
        event = to_run_event(orjson.loads(body))
        if event is not None and event.extraction_failed:
            failed.add(str(run_id))
    return len(failed)


def event_counts(engine: Engine, job_namespaces: list[str] | None = None) -> tuple[int, int]:
    """Return how many events the store holds of the job namespaces, and how many of every other namespace.

    Args:
        engine: The store's engine.
        job_namespaces: The job namespaces (None: every one, and none other).

    Returns:
        The two counts.
    """
    rows = engine.query("SELECT j.namespace, count(*) FROM events e JOIN jobs j ON j.job_id = e.job_id GROUP BY 1")
    kept = {str(namespace): int(count) for namespace, count in rows}
    ours = sum(n for space, n in kept.items() if not job_namespaces or space in job_namespaces)
    return ours, sum(kept.values()) - ours
