"""Runtime lineage for the design diff, answered in the database.

Per job, the lineage of its latest COMPLETE at or before a time (its column edges, the tables it read and wrote, its SQL
hash, with the run as evidence), as `graph.diff.design_diff` compares it with the design.
"""

from __future__ import annotations

from typing import cast

from airflow_lineage_governance.graph.design import LineEdge, TableEdge
from airflow_lineage_governance.graph.diff import ObservedJob
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.names import names
from airflow_lineage_governance.store.node_refs import refs_by_id
from airflow_lineage_governance.store.queries import NOW, holding_join


def observed_jobs(engine: Engine, at: int | None = None) -> dict[str, ObservedJob]:
    """Return, by job name, the runtime lineage of each job's latest COMPLETE at or before `at` (None: now).

    Args:
        engine: The store's engine.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        Each job's column edges, the dataset edges from each table it read to each it wrote (those its shape
        wrote when its event named no output), the tables, its SQL hash and the run as evidence. A job name used
        in two namespaces is the first namespace's.
    """
    instant = NOW if at is None else at
    text = engine.text_order
    params = [instant, instant]
    holding = (  # each job's COMPLETE that holds at the instant
        "chosen AS (SELECT c.run_key, c.at_us, c.shape_id, j.job_id FROM jobs j "
        f"{holding_join(engine, 'c.run_key, c.at_us, c.shape_id')})"
    )
    runs = engine.query(
        "SELECT j.job_id, j.name, j.namespace, c.run_id, c.event_time, c.dag_run_id, c.try_number, c.sql_hash "
        f"FROM jobs j {holding_join(engine, 'c.run_id, c.event_time, c.dag_run_id, c.try_number, c.sql_hash')} "
        f"ORDER BY j.name{text}, j.namespace{text} DESC",
        params,
    )
    edges = engine.query(  # by id, each end named from the refs kept (`node_refs`)
        f"WITH {holding} SELECT h.job_id, e.source_column_id, CASE WHEN e.into_table THEN -e.target_id ELSE "
        "e.target_id END, e.type, e.subtype FROM chosen h JOIN shape_edges e ON e.shape_id = h.shape_id",
        params,
    )
    tables = engine.query(  # by id, named below: joined to the names, PostgreSQL's planner, guessing one row a run,
        # scanned `jobs` and `datasets` once per row; the role as text beside `shape` (an enumerated type on PostgreSQL)
        f"WITH {holding} SELECT h.job_id, CAST(r.role AS TEXT), r.dataset_id FROM chosen h JOIN run_datasets r ON "
        "r.run_key = h.run_key AND r.at_us = h.at_us UNION ALL SELECT h.job_id, 'shape', so.dataset_id FROM chosen h "
        "JOIN shape_outputs so ON so.shape_id = h.shape_id",
        params,
    )
    chosen = {name: (space, rest) for _, name, space, *rest in runs}  # the first namespace by name wins (sorted last)
    kept = {job_id: name for job_id, name, space, *_ in runs if chosen[name][0] == space}
    refs = refs_by_id(engine, {row[1] for row in edges} | {row[2] for row in edges})
    texts: dict[str, str] = {}  # one object for each distinct type and subtype
    lines: dict[str, set[LineEdge]] = {}
    for job_id, source, target, kind, subtype in edges:
        if (job := kept.get(job_id)) is not None and source in refs and target in refs:
            lines.setdefault(job, set()).add(
                LineEdge(
                    cast("ColumnRef", refs[source]),
                    refs[target],
                    texts.setdefault(kind, kind),
                    texts.setdefault(subtype, subtype),
                )
            )
    del edges
    read: dict[tuple[str, str], set[TableRef]] = {}
    table_names = names(engine).tables
    for job_id, role, table in tables:
        if (job := kept.get(job_id)) is not None:
            if table not in table_names:  # a table added since the names were read
                table_names = names(engine, again=True).tables
            read.setdefault((job, role), set()).add(table_names[table][1])
    found = {}
    for job, (_, (run_id, event_time, dag_run_id, try_number, sql_hash)) in sorted(chosen.items()):
        inputs = read.get((job, "input"), set())
        outputs = read.get((job, "output")) or read.get((job, "shape"), set())
        found[job] = ObservedJob(
            job,
            run_id,
            event_time,
            dag_run_id,
            try_number,
            frozenset(lines.get(job, ())),
            frozenset(TableEdge(i, o) for i in inputs for o in outputs),
            frozenset(inputs | outputs),
            sql_hash,
        )
    return found
