"""Lookups by name in the store, each one query.

A task's COMPLETE event in one DAG run, the jobs whose runs write some tables now (with each run's event), and the
columns the lineage names now.

"Now" is each job's latest COMPLETE, as the other queries read it; the job namespaces read are a list, or None for
every one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from airflow_lineage_governance.graph.events import COMPLETE, RunEvent, to_run_event
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.bodies import event_bodies, stored_body
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.ingest import dataset_id
from airflow_lineage_governance.store.queries import NOW

BATCH = 500
"""How many tables one query asks the writers of."""


@dataclass(frozen=True)
class Writer:
    """A job whose run writes a table now: its name and that run's COMPLETE event (None when its JSON is not kept)."""

    job: str
    event: dict[str, Any] | None


def _scope(job_namespaces: Sequence[str] | None) -> tuple[str, list[object]]:
    if job_namespaces is None:
        return "", []
    return f" AND j.namespace IN ({', '.join('?' * len(job_namespaces))})", list(job_namespaces)


def task_complete(
    engine: Engine, job: str, dag_run_id: str, job_namespaces: Sequence[str] | None = None
) -> dict[str, Any] | None:
    """Return the latest COMPLETE event of the job in one DAG run, as first received, or None when it sent none.

    Args:
        engine: The store's engine.
        job: The job's name (`<dag_id>.<task_id>` for an Airflow task).
        dag_run_id: The DAG run's id (the `airflow` run facet's).
        job_namespaces: The job namespaces read (None: every one).

    Returns:
        The event's JSON, parsed; the latest by event time (then run id) when the task ran more than once.
    """
    if not job_namespaces and job_namespaces is not None:
        return None
    scope, scoped = _scope(job_namespaces)
    rows = engine.query(
        "SELECT e.body, b.body, e.block_line FROM events e JOIN jobs j ON j.job_id = e.job_id "
        "LEFT JOIN event_blocks b ON b.block_id = e.block_id WHERE e.dag_run_id = ? AND e.event_type = ? "
        f"AND j.name = ?{scope}",
        [dag_run_id, COMPLETE, job, *scoped],
    )
    latest: RunEvent | None = None
    for own, block, line in rows:
        event = to_run_event(orjson.loads(stored_body(own, block, line)))
        if event is not None and (latest is None or event.order >= latest.order):
            latest = event
    return latest.raw if latest is not None else None


def writers(
    engine: Engine, tables: Sequence[TableRef], job_namespaces: Sequence[str] | None = None
) -> dict[TableRef, list[Writer]]:
    """Return the jobs whose latest COMPLETE wrote each table, by job name, with that COMPLETE's event.

    Args:
        engine: The store's engine.
        tables: The tables asked about.
        job_namespaces: The job namespaces read (None: every one).

    Returns:
        Each table some job writes now, with its writers; a table no job writes (a source) is left out.
    """
    if not tables or (not job_namespaces and job_namespaces is not None):
        return {}
    scope, scoped = _scope(job_namespaces)
    by_id = {dataset_id(t): t for t in tables}
    ids = list(by_id)
    runs: dict[TableRef, dict[str, tuple[str, int]]] = {}
    for start in range(0, len(ids), BATCH):
        part = ids[start : start + BATCH]
        for table_id, job, run_id, at_us in engine.query(
            "SELECT so.dataset_id, j.name, c.run_id, c.at_us FROM completes c "
            "JOIN shape_outputs so ON so.shape_id = c.shape_id JOIN jobs j ON j.job_id = c.job_id "
            "WHERE c.at_us <= ? AND (c.valid_until_us IS NULL OR c.valid_until_us > ?) "
            f"AND so.dataset_id IN ({', '.join('?' * len(part))}){scope}",
            [NOW, NOW, *part, *scoped],
        ):
            known = runs.setdefault(by_id[table_id], {})
            if job not in known or (at_us, run_id) > known[job][::-1]:
                known[job] = (run_id, at_us)
    bodies = event_bodies(engine, COMPLETE, {key for known in runs.values() for key in known.values()})
    events: dict[tuple[str, int], dict[str, Any] | None] = {}
    found: dict[TableRef, list[Writer]] = {}
    for table in sorted(runs, key=str):
        found[table] = []
        for job in sorted(runs[table]):
            key = runs[table][job]
            if key not in events:
                body = bodies.get(key)
                parsed = orjson.loads(body) if body is not None else None
                events[key] = parsed if type(parsed) is dict else None
            found[table].append(Writer(job, events[key]))
    return found


def column_names(engine: Engine, job_namespaces: Sequence[str] | None = None, limit: int | None = None) -> list[str]:
    """Return the dotted names of the columns the jobs' latest COMPLETEs name, sorted (the first `limit`).

    Args:
        engine: The store's engine.
        job_namespaces: The job namespaces read (None: every one).
        limit: The most names returned (None: every one).

    Returns:
        `namespace.table.column` names, in code point order.
    """
    if not job_namespaces and job_namespaces is not None:
        return []
    scope, scoped = _scope(job_namespaces)
    text = engine.text_order
    rows = engine.query(
        f"SELECT DISTINCT (d.name || '.' || dc.name){text} AS named FROM completes c "
        "JOIN jobs j ON j.job_id = c.job_id JOIN shape_columns sc ON sc.shape_id = c.shape_id "
        "JOIN dataset_columns dc ON dc.column_id = sc.column_id JOIN datasets d ON d.dataset_id = dc.dataset_id "
        f"WHERE c.at_us <= ? AND (c.valid_until_us IS NULL OR c.valid_until_us > ?){scope} "
        "ORDER BY named" + (" LIMIT ?" if limit is not None else ""),
        [NOW, NOW, *scoped, *([limit] if limit is not None else [])],
    )
    return [str(name) for (name,) in rows]
