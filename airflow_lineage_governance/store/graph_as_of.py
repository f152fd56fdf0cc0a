"""The lineage graph as of a time, read from the store.

The lineage each job's run then stated (its latest COMPLETE at or before the time). Only the shapes of the runs chosen
are read: one time's graph, never the whole history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

import orjson

from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.events import RunEvent, to_run_event
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.bodies import stored_body
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.ids import run_key
from airflow_lineage_governance.store.ingest import micros

NOW = 2**63 - 1
"""The instant that stands for now: only the intervals still open hold at it."""


def lineage_graph(
    engine: Engine, at: datetime | None = None, job_namespaces: Iterable[str] | None = None, *, events: bool = False
) -> LineageGraph:
    """Return the observed lineage graph as of `at`.

    Jobs are merged in the order of their first COMPLETE (a table written by two jobs is the later one's output,
    as in a graph built from events); each run's columns in the order its event named them.

    Args:
        engine: The store's engine.
        at: The time (None: each job's latest COMPLETE).
        job_namespaces: The job namespaces read (None: every one).
        events: Also read each chosen COMPLETE event whole into `graph.jobs` (its JSON, as the integrity figures read
            it).

    Returns:
        The graph: its edges (each with the run that stated it), tables' columns, the tables each job wrote, and
        the parts of the chosen runs' events of the wrong shape (`wrong_parts`).
    """
    instant = micros(at) if at is not None else NOW
    spaces = sorted(job_namespaces) if job_namespaces is not None else None
    scope = f" AND j.namespace IN ({', '.join('?' * len(spaces))})" if spaces else ""
    runs = engine.query(
        "SELECT j.name, c.run_id, c.event_time, c.shape_id, c.at_us, (SELECT MIN(f.at_us) FROM completes f WHERE "
        "f.job_id = c.job_id) AS first_us, s.wrong_parts FROM completes c JOIN jobs j ON j.job_id = c.job_id JOIN "
        "shapes s ON s.shape_id = c.shape_id WHERE c.at_us <= ? AND "
        f"(c.valid_until_us IS NULL OR c.valid_until_us > ?){scope}",
        [instant, instant, *(spaces or [])],
    )
    chosen: dict[str, tuple[str, str, int, int]] = {}
    wrong: dict[str, int] = {}
    for job, run_id, time, shape, at_us, _, wrong_parts in sorted(runs, key=lambda r: (r[5], r[0], r[4], r[1])):
        chosen[job] = (run_id, time, shape, at_us)  # the latest run of a job, should two hold at once
        wrong[job] = int(wrong_parts)
    shapes = sorted({shape for _, _, shape, _ in chosen.values()})
    columns: dict[int, list[tuple[str, str]]] = defaultdict(list)
    outputs: dict[int, list[str]] = defaultdict(list)
    edges: dict[int, list[tuple[object, ...]]] = defaultdict(list)
    for start in range(0, len(shapes), 500):
        part = shapes[start : start + 500]
        marks = ", ".join("?" * len(part))
        for shape, table, name in engine.query(
            "SELECT sc.shape_id, d.name, dc.name FROM shape_columns sc JOIN dataset_columns dc ON dc.column_id = "
            f"sc.column_id JOIN datasets d ON d.dataset_id = sc.dataset_id WHERE sc.shape_id IN ({marks}) "
            "ORDER BY sc.shape_id, sc.position",
            part,
        ):
            columns[shape].append((table, name))
        for shape, table in engine.query(
            "SELECT so.shape_id, d.name FROM shape_outputs so JOIN datasets d ON d.dataset_id = so.dataset_id "
            f"WHERE so.shape_id IN ({marks}) ORDER BY so.shape_id, d.name{engine.text_order}",
            part,
        ):
            outputs[shape].append(table)
        for shape, *edge in engine.query(
            "SELECT e.shape_id, sd.name, sc.name, td.name, tc.name, e.into_table, e.type, e.subtype, e.masking FROM "
            "shape_edges e JOIN dataset_columns sc ON sc.column_id = e.source_column_id JOIN datasets sd ON "
            "sd.dataset_id = sc.dataset_id LEFT JOIN dataset_columns tc ON NOT e.into_table AND tc.column_id = "
            "e.target_id JOIN datasets td ON td.dataset_id = CASE WHEN e.into_table THEN e.target_id ELSE "
            f"tc.dataset_id END WHERE e.shape_id IN ({marks})",
            part,
        ):
            edges[shape].append(tuple(edge))
    lineage = LineageGraph()
    lineage.at = at
    lineage.wrong_parts = sum(wrong.values())
    if events:
        lineage.jobs.update(
            chosen_events(engine, {job: (run_id, at_us) for job, (run_id, _, _, at_us) in chosen.items()})
        )
    for job, (run_id, time, shape, _) in chosen.items():
        for table_name, name in columns[shape]:
            table = lineage.table_ref(table_name)
            if table is not None:
                lineage.column_ref(table, name)
        for table_name in outputs[shape]:
            lineage.outputs[TableRef.parse(table_name)] = job
        for source_table, source, target_table, target, into, kind, subtype, masking in sorted(
            edges[shape], key=lambda e: tuple("" if v is None else str(v) for v in e)
        ):
            table = TableRef.parse(str(target_table))
            lineage.add_edge(
                Edge(
                    ColumnRef(TableRef.parse(str(source_table)), str(source)),
                    table if into else ColumnRef(table, str(target)),
                    str(kind),
                    str(subtype),
                    bool(masking),
                    job,
                    str(run_id),
                    str(time),
                )
            )
    return lineage


def chosen_events(engine: Engine, chosen: dict[str, tuple[str, int]]) -> dict[str, RunEvent]:
    """Return each job's COMPLETE event, whole, parsed from the JSON as first received.

    Args:
        engine: The store's engine.
        chosen: The run id and instant of the COMPLETE of each job, by job name.

    Returns:
        The events, by job name (a job whose event's JSON no longer parses is left out).
    """
    wanted = {(run_id, at_us): job for job, (run_id, at_us) in chosen.items()}
    runs = sorted({run_key(run_id) for run_id, _ in wanted})  # looked up by key, kept by id
    found: dict[str, RunEvent] = {}
    for start in range(0, len(runs), 500):
        part = runs[start : start + 500]
        for run_id, at_us, own, block, line in engine.query(
            "SELECT e.run_id, e.at_us, e.body, b.body, e.block_line FROM events e LEFT JOIN event_blocks b ON "
            f"b.block_id = e.block_id WHERE e.event_type = 'COMPLETE' AND e.run_key IN ({', '.join('?' * len(part))})",
            part,
        ):
            job = wanted.get((str(run_id), int(at_us)))
            if job is None:
                continue
            event = to_run_event(orjson.loads(stored_body(own, block, line)))
            if event is not None:
                found[job] = event
    return found


def stale_jobs(
    engine: Engine, at: datetime | None, before_us: int, job_namespaces: Iterable[str] | None = None
) -> list[str]:
    """Return the jobs whose run as of `at` (None: now) is older than `before_us`.

    Args:
        engine: The store's engine.
        at: The time (None: each job's latest COMPLETE).
        before_us: The instant a run must not be older than, microseconds since the epoch (UTC).
        job_namespaces: The job namespaces read (None: every one).

    Returns:
        The jobs' names, sorted.
    """
    instant = micros(at) if at is not None else NOW
    spaces = sorted(job_namespaces) if job_namespaces is not None else None
    scope = f" AND j.namespace IN ({', '.join('?' * len(spaces))})" if spaces else ""
    rows = engine.query(
        "SELECT DISTINCT j.name FROM completes c JOIN jobs j ON j.job_id = c.job_id WHERE c.at_us <= ? AND "
        f"(c.valid_until_us IS NULL OR c.valid_until_us > ?) AND c.at_us < ?{scope}",
        [instant, instant, before_us, *(spaces or [])],
    )
    return sorted(str(name) for (name,) in rows)
