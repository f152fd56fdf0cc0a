"""The store's queries on both engines against the in-memory history's answers (graph/impact.py, graph/history.py)
on the repo's test histories: a job whose lineage changed, late events, and a generated history of the scale
benchmark's shape."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.graph.asof import AsOf
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import FileEventSource, read_events
from airflow_lineage_governance.graph.history import LineageHistory, graph_as_of
from airflow_lineage_governance.graph.impact import downstream
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.errors import ColumnNotInStoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from benchmarks import history_scale
from tests.support.events import NS, output, write
from tests.support.history import run

C = ColumnRef.parse


def changed_history() -> list[dict]:
    """dag.a read crm.learners.email on days 1 and 2, then crm.learners.full_name from day 3 (sent first); dag.b reads
    its output; dag.c shapes out.v's rows by out.u.y and reads its own output (a cycle)."""
    return [
        run(
            "dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=3, run="r3", reads=[("crm.learners", "s3")]
        ),
        run("dag.a", output("out.t", {"x": ["crm.learners.email"]}), day=1, run="r1", reads=[("crm.learners", "s1")]),
        run("dag.a", output("out.t", {"x": ["crm.learners.email"]}, ["crm.learners.status"]), day=2, run="r2"),
        run("dag.b", output("out.u", {"y": ["out.t.x"]}, schema=["y", "z"]), day=3, run="b3"),
        run("dag.c", output("out.v", {"w": ["out.v.w", "out.u.z"]}, ["out.u.y"], schema=["w", "k"]), day=2, run="c2"),
    ]


def in_memory(tmp_path, events: list[dict]) -> LineageHistory:
    history = LineageHistory(NS)
    read_events(FileEventSource(write(tmp_path / "in-memory.jsonl", events)), on_complete=history.add)
    return history


def assert_same_answers(
    store: LineageStore, history: LineageHistory, columns: list[ColumnRef], times: list[datetime | None]
) -> int:
    """Asserts that the store's impact and as-of edges equal the in-memory ones; returns how many were compared."""
    compared = 0
    for at in times:
        expected_edges = {(e.source, e.target, str(e.type), str(e.subtype)) for e in graph_as_of(history, at).edges()}
        assert {(e.source, e.target, e.type, e.subtype) for e in store.edges_as_of(at)} == expected_edges
        for table in {column.table for column in columns}:  # the edges into one table: its rows, or its columns
            assert {(e.source, e.target, e.type, e.subtype) for e in store.edges_as_of(at, into=table)} == {
                edge
                for edge in expected_edges
                if (edge[1] if isinstance(edge[1], TableRef) else edge[1].table) == table
            }
        for column in columns:
            try:
                expected = downstream(AsOf(history, at), column)
            except ColumnNotInLineageError:
                with pytest.raises(ColumnNotInStoreError, match=f"^{column}: no event in the lineage store"):
                    store.impact(column, at)
                continue
            found = store.impact(column, at)
            assert set(found.columns_reached) == set(expected.columns_reached), (column, at)
            assert set(found.values) == set(expected.values), (column, at)
            assert set(found.rows) == set(expected.rows), (column, at)
            assert found.reaches_itself == expected.reaches_itself
            compared += 1
    return compared


def test_impact_and_edges_as_of_equal_the_in_memory_history(store_location, tmp_path):
    events = changed_history()
    history = in_memory(tmp_path, events)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=2)
        columns = [
            C(name)
            for name in (
                "crm.learners.email",
                "crm.learners.full_name",
                "crm.learners.status",
                "out.t.x",
                "out.u.y",
                "out.u.z",
                "out.v.w",
                "crm.learners.nothing",
            )
        ]
        times = [datetime(2026, 10, day, hour, tzinfo=UTC) for day in (1, 2, 3, 4) for hour in (1, 2, 3)]
        assert assert_same_answers(store, history, columns, [*times, None]) > 60
        cycle = store.impact(C("out.v.w"))
        assert cycle.reaches_itself and cycle.columns_reached == [C("out.v.w")]
        assert [str(t) for t in store.impact(C("out.u.y")).rows] == ["out.v"]
        assert {str(c) for c in store.impact(C("out.u.y")).columns_reached} == {"out.v.k", "out.v.w"}


@pytest.mark.slow
def test_impact_equals_the_in_memory_history_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    events = [history_scale.event(job, day, jobs) for day in range(20) for job in range(jobs)]
    random.Random(5).shuffle(events)
    history = LineageHistory(history_scale.NS)
    read_events(FileEventSource(write(tmp_path / "in-memory.jsonl", events)), on_complete=history.add)
    rng = random.Random(7)
    columns = [ColumnRef(TableRef(("out",), f"t{rng.randrange(jobs)}"), f"c{rng.randrange(4)}") for _ in range(12)]
    columns += [ColumnRef(TableRef(("src",), f"s{rng.randrange(200)}"), "c0") for _ in range(4)]
    times = [history_scale.START + timedelta(days=rng.uniform(0, 21)) for _ in range(5)]
    with LineageStore.open(store_location, create=True) as store:
        report = store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=300)
        assert report.stored == 2000
        assert assert_same_answers(store, history, columns, [*times, None]) > 40
