"""The history's indexes agree with the records they index: which shape of a job holds at a time (kept as
stretches of time, read without the records), whatever order the events arrived in, with equal times and shapes
a job went back to; and a walk over the node graph finds what a walk over the graph as of that time finds."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.graph.asof import AsOf
from airflow_lineage_governance.graph.history import LineageHistory, graph_as_of
from airflow_lineage_governance.graph.history_walk import (
    PARENT_SHIFT,
    PLACE_SHIFT,
    PLACES,
    HistoryWalker,
    Marks,
    Parents,
)
from airflow_lineage_governance.graph.impact import downstream, upstream
from airflow_lineage_governance.refs import ColumnRef
from tests.support.events import output
from tests.support.history import history_of, run

START = datetime(2026, 10, 1, 2, tzinfo=UTC)


def _random_events(seed: int) -> list[dict]:
    """Returns COMPLETEs of three jobs over days 1-9, in a shuffled order, two runs sometimes at one instant, each
    job stating one of two lineages at random (so a job goes back to a shape it stated before)."""
    rng = random.Random(seed)
    events = []
    for job in ("dag.a", "dag.b", "dag.c"):
        for number in range(rng.randrange(1, 9)):
            day = rng.randrange(1, 10)
            column = rng.choice(["crm.learners.email", "crm.learners.full_name"])
            events.append(run(job, output(f"out.{job[-1]}", {"x": [column]}), day=day, run=f"{job}-{number}"))
    rng.shuffle(events)
    return events


def _worked_out(view: AsOf) -> AsOf:
    """Returns the view with every shape's state worked out at once (as a wide walk does after 1,024 shapes)."""
    view.work_out_all()
    return view


def _hops(answer) -> dict:
    """Returns each reached column's path as (source, target, type, subtype, job) per hop (an edge of the history
    names the run that first stated its shape; the evidence names the run chosen)."""
    return {c: [e[:6] for e in answer.paths[c]] for c in answer.paths}


def _times(history: LineageHistory) -> list[datetime | None]:
    days = sorted({record.event.at for records in history.runs.values() for record in records})
    return [None, *days, *(d + timedelta(hours=1) for d in days), *(d - timedelta(seconds=1) for d in days)]


@pytest.mark.parametrize("seed", range(25))
def test_a_shape_holds_exactly_when_its_jobs_run_as_of_the_time_stated_it(tmp_path, seed):
    history = history_of(tmp_path, *_random_events(seed))[0]
    for at in _times(history):
        for job in history.runs:
            chosen = history.run_at(job, at)
            for shape in {id(r.shape): r.shape for r in history.runs[job]}.values():
                assert AsOf(history, at).holds(shape.serial) == (chosen is not None and chosen.shape is shape), (
                    job,
                    at,
                )


@pytest.mark.parametrize("seed", range(10))
def test_walks_of_the_history_find_what_walks_of_the_graph_as_of_the_time_find(tmp_path, seed):
    history = history_of(
        tmp_path, *_random_events(seed), run("dag.d", output("out.d", {"y": ["out.a.x", "out.b.x"]}), day=5, run="d5")
    )[0]
    for at in _times(history):
        graph = graph_as_of(history, at)
        for column in (ColumnRef.parse("crm.learners.email"), ColumnRef.parse("crm.learners.full_name")):
            if not graph.knows(column):
                continue
            built = downstream(graph, column)
            for view in (AsOf(history, at), _worked_out(AsOf(history, at))):
                walked = downstream(view, column)
                assert (walked.columns_reached, walked.values, walked.rows) == (
                    built.columns_reached,
                    built.values,
                    built.rows,
                )
                assert _hops(walked) == _hops(built)
                assert [walked.reached.glance(c) for c in walked.columns_reached] == [
                    (r.confidence, r.stale) for r in built.reached.values()
                ]
        back = (
            upstream(AsOf(history, at), ColumnRef.parse("out.d.y")) if graph.knows(ColumnRef.parse("out.d.y")) else None
        )
        if back is not None:
            assert back.sources == upstream(graph, ColumnRef.parse("out.d.y")).sources


@pytest.mark.parametrize("seed", range(10))
def test_a_tables_columns_by_number_are_those_its_writers_run_names(tmp_path, seed):
    history = history_of(
        tmp_path, *_random_events(seed), run("dag.e", output("out.a", {"z": ["crm.learners.email"]}), day=4, run="e4")
    )[0]
    for at in _times(history):
        view = AsOf(history, at)
        walker = HistoryWalker(view)
        for table in history.columns:
            number = history.nodes.node(table).index
            assert [walker.ref(c) for c in walker._columns_in(number)] == view.columns_of(table), (table, at)


@pytest.mark.parametrize("seed", range(10))
def test_stale_marks_agree_with_each_runs_evidence(tmp_path, seed):
    history = history_of(tmp_path, *_random_events(seed))[0]
    for at in _times(history):
        if at is None:
            continue
        lazy, bulk = AsOf(history, at, timedelta(days=2)), _worked_out(AsOf(history, at, timedelta(days=2)))
        for records in history.runs.values():
            for shape in {id(r.shape): r.shape for r in records}.values():
                state = lazy.state(shape.serial)
                assert state == bulk.state(shape.serial)
                if state:
                    assert bool((state - 1) & 1) == lazy.is_stale(lazy.run_of(shape.job)), (shape.job, at)


def test_a_walks_number_for_a_node_keeps_parent_place_and_glance_apart_however_large():
    place, parent, mark = 3_000_000, 40_000_000, 7  # a place past 2**20, a parent past 2**24
    packed = {5: parent << PARENT_SHIFT | place << PLACE_SHIFT | mark}
    assert (Parents(packed)[5], Marks(packed)[5], (packed[5] >> PLACE_SHIFT) & PLACES) == (parent, mark, place)
