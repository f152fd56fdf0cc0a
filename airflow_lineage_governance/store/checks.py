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
from airflow_lineage_governance.store.bodies import stored_body
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.queries import NOW


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
        f"SELECT d.name, min(j.name{text}) FROM completes c JOIN shape_outputs so ON so.shape_id = c.shape_id "
        "JOIN datasets d ON d.dataset_id = so.dataset_id JOIN jobs j ON j.job_id = c.job_id WHERE c.at_us <= ? AND "
        f"(c.valid_until_us IS NULL OR c.valid_until_us > ?) GROUP BY d.name ORDER BY d.name{text}",
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
        The events of the run's tasks (jobs named `dag_id.task_id`), each parsed from the JSON as first received.
    """
    prefix = f"{dag_id}."
    rows = engine.query(
        "SELECT e.body, b.body, e.block_line FROM events e JOIN jobs j ON j.job_id = e.job_id "
        "LEFT JOIN event_blocks b ON b.block_id = e.block_id WHERE e.dag_run_id = ? AND "
        "substr(j.name, 1, ?) = ?",
        [run_id, len(prefix), prefix],
    )
    found = []
    for own, block, line in rows:
        event = to_run_event(orjson.loads(stored_body(own, block, line)))
        if event is not None:
            found.append(event)
    return sorted(found, key=lambda e: e.order)
