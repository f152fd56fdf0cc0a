"""The store's queries on both engines against the networkx reference (store/reference.py) and the answers written
out, on the repo's test histories: a job whose lineage changed, late events, and a generated history of the scale
benchmark's shape."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.graph.build import event_graph
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store import queries
from airflow_lineage_governance.store.errors import ColumnNotInStoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.queries import StoredEdge
from airflow_lineage_governance.store.reference import ReferenceHistory
from benchmarks import history_scale
from tests.support.events import output, source, write
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


def named(reference: ReferenceHistory) -> set[ColumnRef]:
    """Returns every column a COMPLETE of the history names (its lineage, or its datasets' schemas)."""
    return {
        ColumnRef(table, name)
        for events in reference.runs.values()
        for event in events
        for table, names in event_graph(event).table_columns.items()
        for name in names
    }


def assert_same_answers(
    store: LineageStore, reference: ReferenceHistory, columns: list[ColumnRef], times: list[datetime | None]
) -> int:
    """Asserts that the store's impact and as-of edges equal the reference's; returns how many were compared."""
    compared = 0
    known = named(reference)
    for at in times:
        expected_edges = {edge[:4] for edge in reference.edges_as_of(at)}
        assert {(e.source, e.target, e.type, e.subtype) for e in store.edges_as_of(at)} == expected_edges
        for table in {column.table for column in columns}:  # the edges into one table: its rows, or its columns
            assert {(e.source, e.target, e.type, e.subtype) for e in store.edges_as_of(at, into=table)} == {
                edge
                for edge in expected_edges
                if (edge[1] if isinstance(edge[1], TableRef) else edge[1].table) == table
            }
        for column in columns:
            if column not in known:
                with pytest.raises(ColumnNotInStoreError, match=f"^{column}: no event in the lineage store"):
                    store.impact(column, at)
                continue
            found = store.impact(column, at)
            reached, values, rows = reference.impact(column, at)
            assert set(found.columns_reached) == reached, (column, at)
            assert set(found.values) == values, (column, at)
            assert set(found.rows) == rows, (column, at)
            assert found.reaches_itself == (column in reached)
            compared += 1
    return compared


def test_impact_and_edges_as_of_equal_the_reference(store_location, tmp_path):
    events = changed_history()
    reference = ReferenceHistory(events)
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
        assert assert_same_answers(store, reference, columns, [*times, None]) > 60
        cycle = store.impact(C("out.v.w"))
        assert cycle.reaches_itself and cycle.columns_reached == [C("out.v.w")]
        assert [str(t) for t in store.impact(C("out.u.y")).rows] == ["out.v"]
        assert {str(c) for c in store.impact(C("out.u.y")).columns_reached} == {"out.v.k", "out.v.w"}
        day_2 = datetime(2026, 10, 2, 12, tzinfo=UTC)
        assert [str(c) for c in store.impact(C("crm.learners.email"), day_2).columns_reached] == ["out.t.x"]
        assert store.impact(C("crm.learners.email")).columns_reached == []  # only superseded runs state its edge
        assert {(str(e.source), str(e.target), e.run_id) for e in store.edges_as_of(day_2) if e.job == "dag.a"} == {
            ("crm.learners.email", "out.t.x", "r2"),
            ("crm.learners.status", "out.t", "r2"),
        }
        assert store.edges_as_of(datetime(2026, 9, 30, tzinfo=UTC)) == []


def as_of_order(edge: StoredEdge) -> tuple[object, ...]:
    """Returns the sort key of an edge as of a time: source, target (a table after its columns), type, subtype, job."""
    rows = isinstance(edge.target, TableRef)
    table = edge.target if isinstance(edge.target, TableRef) else edge.target.table
    field = "" if isinstance(edge.target, TableRef) else edge.target.field
    return (str(edge.source.table), edge.source.field, str(table), rows, field, edge.type, edge.subtype, edge.job)


def test_every_edge_as_of_a_time_holds_what_the_store_gained_since_it_was_last_asked(store_location, tmp_path):
    first = [
        run("dag.a", output("out.t", {"x": ["crm.learners.email"]}), day=1, run="r1"),
        run("dag.b", output("out.u", {"y": ["out.t.x"]}), day=2, run="b2"),
    ]
    kind = [run("dag.b", output("out.u", {"y": ["out.t.x"]}, ["out.t.x"]), day=3, run="b3")]  # a kind, nothing else
    later = [  # a new job, new tables and columns
        run(
            "dag.c", output("out.w", {"a": ["out.u.y", "crm.learners.email"]}, ["crm.learners.status"]), day=3, run="c3"
        ),
        run("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=4, run="r4"),
    ]
    unnamed = [  # kinds OpenLineage does not name: a subtype left out, one of the sender's own
        run(
            "dag.d",
            output(
                "out.v",
                {"z": [source("crm.learners.email", "DIRECT", "")]},
                [source("crm.learners.email", "INDIRECT", "PARTITION", masking=True)],
            ),
            day=5,
            run="d5",
        )
    ]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "first.jsonl", first)))
        assert [(str(e.source), str(e.target), e.run_id) for e in store.edges_as_of()] == [
            ("crm.learners.email", "out.t.x", "r1"),
            ("out.t.x", "out.u.y", "b2"),
        ]
        store.ingest(FileEventSource(write(tmp_path / "kind.jsonl", kind)))
        assert [(str(e.source), str(e.target), e.type, e.run_id) for e in store.edges_as_of()] == [
            ("crm.learners.email", "out.t.x", "DIRECT", "r1"),
            ("out.t.x", "out.u.y", "DIRECT", "b3"),
            ("out.t.x", "out.u", "INDIRECT", "b3"),
        ]
        store.ingest(FileEventSource(write(tmp_path / "later.jsonl", later)))
        edges = store.edges_as_of()  # new nodes and a new job, of kinds OpenLineage names
        assert {(e.source, e.target, e.type, e.subtype, e.job) for e in edges} == ReferenceHistory(
            [*first, *kind, *later]
        ).edges_as_of(None)
        assert edges == sorted(edges, key=as_of_order) and {e.run_id for e in edges} == {"b3", "c3", "r4"}
        store.ingest(FileEventSource(write(tmp_path / "unnamed.jsonl", unnamed)))
        day_5 = store.edges_as_of(datetime(2026, 10, 5, 12, tzinfo=UTC))
        assert [(str(e.source), str(e.target), e.type, e.subtype, e.masking) for e in day_5 if e.job == "dag.d"] == [
            ("crm.learners.email", "out.v.z", "DIRECT", "", False),
            ("crm.learners.email", "out.v", "INDIRECT", "PARTITION", True),
        ]
        reference = ReferenceHistory([*first, *kind, *later, *unnamed])
        for at in [datetime(2026, 10, day, 12, tzinfo=UTC) for day in (1, 2, 3, 4, 5)] + [None]:
            edges = store.edges_as_of(at)
            assert {(e.source, e.target, e.type, e.subtype, e.job) for e in edges} == reference.edges_as_of(at)
            assert edges == sorted(edges, key=as_of_order)
        assert [(str(e.source), str(e.target), e.type, e.subtype, e.run_id) for e in store.edges_as_of()] == [
            ("crm.learners.email", "out.v.z", "DIRECT", "", "d5"),
            ("crm.learners.email", "out.v", "INDIRECT", "PARTITION", "d5"),
            ("crm.learners.email", "out.w.a", "DIRECT", "IDENTITY", "c3"),
            ("crm.learners.full_name", "out.t.x", "DIRECT", "IDENTITY", "r4"),
            ("crm.learners.status", "out.w", "INDIRECT", "FILTER", "c3"),
            ("out.t.x", "out.u.y", "DIRECT", "IDENTITY", "b3"),
            ("out.t.x", "out.u", "INDIRECT", "FILTER", "b3"),
            ("out.u.y", "out.w.a", "DIRECT", "IDENTITY", "c3"),
        ]
        own = [run("dag.d", output("out.v", {"z": [source("crm.learners.email", "DIRECT", "OWN")]}), day=6, run="d6")]
        store.ingest(FileEventSource(write(tmp_path / "own.jsonl", own)))  # a new kind alone: no new node or job
        assert [
            (str(e.source), str(e.target), e.subtype, e.run_id) for e in store.edges_as_of() if e.job == "dag.d"
        ] == [("crm.learners.email", "out.v.z", "OWN", "d6")]


@pytest.mark.slow
def test_impact_equals_the_reference_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    events = [history_scale.event(job, day, jobs) for day in range(20) for job in range(jobs)]
    random.Random(5).shuffle(events)
    reference = ReferenceHistory(events)
    rng = random.Random(7)
    columns = [ColumnRef(TableRef(("out",), f"t{rng.randrange(jobs)}"), f"c{rng.randrange(4)}") for _ in range(12)]
    columns += [ColumnRef(TableRef(("src",), f"s{rng.randrange(200)}"), "c0") for _ in range(4)]
    times = [history_scale.START + timedelta(days=rng.uniform(0, 21)) for _ in range(5)]
    with LineageStore.open(store_location, create=True) as store:
        report = store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=300)
        assert report.stored == 2000
        assert assert_same_answers(store, reference, columns, [*times, None]) > 40


@pytest.mark.slow
def test_every_walk_in_one_recursive_query_equals_the_reference(store_location, tmp_path, monkeypatch):
    jobs = 100
    events = [history_scale.event(job, day, jobs, changes=True) for day in range(20) for job in range(jobs)]
    events += changed_history()
    random.Random(3).shuffle(events)
    reference = ReferenceHistory(events)
    rng = random.Random(9)
    columns = [ColumnRef(TableRef(("out",), f"t{rng.randrange(jobs)}"), f"c{rng.randrange(5)}") for _ in range(12)]
    columns += [ColumnRef(TableRef(("src",), f"s{rng.randrange(200)}"), f"c{rng.randrange(4)}") for _ in range(4)]
    columns += [C("out.v.w"), C("out.u.y"), C("crm.learners.email"), C("crm.learners.nothing")]
    times = [history_scale.START + timedelta(days=rng.uniform(0, 21)) for _ in range(4)]
    times += [datetime(2026, 10, day, 12, tzinfo=UTC) for day in (2, 3)]
    monkeypatch.setattr(
        queries, "WIDE", {"duckdb": -1, "postgres": -1}
    )  # every walk goes on in the database from its first level
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=500)
        assert assert_same_answers(store, reference, columns, [*times, None]) > 80
        cycle = store.impact(C("out.v.w"))
        assert cycle.reaches_itself and cycle.columns_reached == [C("out.v.w")] and cycle.values == [C("out.v.w")]
        known = named(reference)
        wide = max((store.impact(c, times[0]) for c in columns if c in known), key=lambda a: len(a.columns_reached))
        assert len(wide.columns_reached) > 10 and wide.rows and wide.values
        assert wide.columns_reached == sorted(wide.columns_reached, key=str)
        assert wide.values == sorted(wide.values, key=str) and wide.rows == sorted(wide.rows, key=str)


def test_every_edge_as_of_a_time_takes_the_run_that_holds_of_two_completes_at_one_instant(store_location, tmp_path):
    def twice(job: str, runs: tuple[str, str], day: int) -> list[dict]:  # two runs, one instant, in arrival order
        return [run(job, output(f"out.{job[-1]}", {"x": [f"crm.learners.{r}"]}), day=day, run=r) for r in runs]

    events = [*twice("dag.a", ("a1", "a2"), 1), *twice("dag.b", ("b2", "b1"), 1), *twice("dag.a", ("a4", "a3"), 2)]
    reference = ReferenceHistory(events)
    with LineageStore.open(store_location, create=True) as store:
        for number, event in enumerate(events):  # each event a batch of its own: the order the store gets them in
            store.ingest(FileEventSource(write(tmp_path / f"{number}.jsonl", [event])))
        for at in (datetime(2026, 10, 1, 12, tzinfo=UTC), None):
            edges = store.edges_as_of(at)
            assert {(e.source, e.target, e.type, e.subtype, e.job) for e in edges} == reference.edges_as_of(at)
            assert [(str(e.source), str(e.target), e.run_id) for e in edges] == [
                ("crm.learners.a2" if at else "crm.learners.a4", "out.a.x", "a2" if at else "a4"),
                ("crm.learners.b2", "out.b.x", "b2"),
            ]
            observed = store.observed_jobs(at)  # the design diff's runtime lineage takes the same runs
            assert {job: (o.run_id, sorted(str(e.source) for e in o.edges)) for job, o in observed.items()} == {
                "dag.a": ("a2", ["crm.learners.a2"]) if at else ("a4", ["crm.learners.a4"]),
                "dag.b": ("b2", ["crm.learners.b2"]),
            }


def test_every_edge_as_of_a_time_from_a_duckdb_reader_that_opened_its_file_again(tmp_path):
    """A DuckDB reader gives its memory back by opening its file again (`release_memory`); the nodes' places it kept
    in a temporary table go with the connection, and are made again for the next question."""
    location = tmp_path / "store.duckdb"
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", changed_history())))
    day_one = datetime(2026, 10, 1, 12, tzinfo=UTC)  # dag.a's first run alone holds: one edge
    with LineageStore.open(location, read_only=True) as reader:
        first = reader.edges_as_of(day_one)
        assert [(str(e.source), str(e.target), e.type, e.job, e.run_id) for e in first] == [
            ("crm.learners.email", "out.t.x", "DIRECT", "dag.a", "r1")
        ]
        assert reader.engine.release_memory()
        assert reader.edges_as_of(day_one) == first
        assert [(str(e.source), str(e.target), e.run_id) for e in reader.edges_as_of(None)] == [
            ("crm.learners.full_name", "out.t.x", "r3"),
            ("out.t.x", "out.u.y", "b3"),
            ("out.u.y", "out.v", "c2"),
            ("out.u.z", "out.v.w", "c2"),
            ("out.v.w", "out.v.w", "c2"),
        ]


def test_every_edge_as_of_a_time_leaves_out_the_edges_of_a_job_with_no_run_then(tmp_path):
    """An edge is given with the run that stated it: one whose job has no COMPLETE holding at the time (its COMPLETE
    deleted from the store by hand here) is left out, the other jobs' edges kept."""
    location = tmp_path / "store.duckdb"
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", changed_history())))
        store.engine.execute("DELETE FROM completes WHERE run_id = 'b3'")  # DuckDB keeps the COMPLETEs apart
        assert [(str(e.source), str(e.target), e.job, e.run_id) for e in store.edges_as_of(None)] == [
            ("crm.learners.full_name", "out.t.x", "dag.a", "r3"),
            ("out.u.y", "out.v", "dag.c", "c2"),
            ("out.u.z", "out.v.w", "dag.c", "c2"),
            ("out.v.w", "out.v.w", "dag.c", "c2"),
        ]


@pytest.mark.parametrize("one_number", [True, False], ids=["places as one number", "places sorted by keys"])
def test_every_edge_as_of_a_time_lists_one_source_and_target_by_type_subtype_then_job(
    store_location, tmp_path, monkeypatch, one_number
):
    if not one_number:
        monkeypatch.setattr(queries, "ONE_NUMBER_BITS", 0)
    email = "crm.learners.email"
    history = [
        run("dag.a", output("out.t", {"x": [source(email, "DIRECT", "TRANSFORMATION")]}), day=1, run="a1"),
        run("dag.b", output("out.t", {"x": [source(email), source(email, "INDIRECT", "FILTER")]}), day=1, run="b1"),
        run("dag.c", output("out.t", {"x": [source(email, "DIRECT", "TRANSFORMATION")]}, [email]), day=1, run="c1"),
    ]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "history.jsonl", history)))
        assert [(str(e.source), str(e.target), e.type, e.subtype, e.job) for e in store.edges_as_of()] == [
            (email, "out.t.x", "DIRECT", "IDENTITY", "dag.b"),
            (email, "out.t.x", "DIRECT", "TRANSFORMATION", "dag.a"),
            (email, "out.t.x", "DIRECT", "TRANSFORMATION", "dag.c"),
            (email, "out.t.x", "INDIRECT", "FILTER", "dag.b"),
            (email, "out.t", "INDIRECT", "FILTER", "dag.c"),  # the nodes' places: every column before the tables
        ]
