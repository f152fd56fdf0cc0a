"""Tracing by snapshot in the store, on both engines, against traces made by hand over the networkx reference's
runs on the repo's test histories: shared inputs, cycles, retries that wrote the same snapshot, runs of two outputs,
inputs with no version, sources read again and again, and a chain deeper than Python's recursion limit."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.errors import SnapshotNotInStoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory, versions
from airflow_lineage_governance.store.trace import StoredOrigin
from tests.support.events import complete, write
from tests.support.trace import about, dataset, tangled

T = TableRef.parse


def by_hand(reference: ReferenceHistory, table: TableRef, snapshot: str) -> tuple:
    """Returns the trace back made by hand: (table, snapshot, its writer's run id, seen before, the inputs' traces),
    depth first, each run's inputs by table name, a snapshot met again marked and not followed."""
    writers = reference.writers()
    seen: set[tuple[TableRef, str]] = set()

    def origin(of: TableRef, version: str | None) -> tuple:
        run = writers.get((of, version)) if version is not None else None
        if version is None or run is None:
            return (of, version, None, False, [])
        if (of, version) in seen:
            return (of, version, run.run_id, True, [])
        seen.add((of, version))
        inputs = sorted(versions(run.raw, "inputs"), key=lambda i: str(i[0]))
        return (of, version, run.run_id, False, [origin(t, v) for t, v in inputs])

    return origin(table, snapshot)


def as_tuples(found: StoredOrigin) -> tuple:
    run = found.run.run_id if found.run is not None else None
    return (found.table, found.snapshot, run, found.seen_before, [as_tuples(o) for o in found.inputs])


def one_snapshot_per_table(events: list[dict]) -> list[dict]:
    """Returns the events with each run's inputs cut to the first snapshot named per table: the store keeps one
    snapshot of each table a run read."""
    for event in events:
        names: set[str] = set()
        event["inputs"] = [d for d in event["inputs"] if not (d["name"] in names or names.add(d["name"]))]
    return events


@pytest.fixture
def stored(store_location, tmp_path):
    def load(events: list[dict], batch_size: int = 500) -> LineageStore:
        store = LineageStore.open(store_location, create=True)
        store.ingest(FileEventSource(write(tmp_path / "store.jsonl", events)), batch_size=batch_size)
        return store

    return load


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_every_snapshot_traces_as_traced_by_hand(stored, seed):
    events = one_snapshot_per_table(tangled(seed))
    reference = ReferenceHistory(events)
    snapshots = sorted(
        {
            known
            for runs in reference.runs.values()
            for run in runs
            for role in ("inputs", "outputs")
            for known in versions(run.raw, role)
            if known[1] is not None
        },
        key=lambda k: (str(k[0]), k[1]),
    )
    with stored(events, batch_size=77) as store:
        marked = 0
        for table, snapshot in snapshots:
            found = store.trace_back(table, snapshot)
            assert as_tuples(found) == by_hand(reference, table, snapshot)
            assert json.loads(json.dumps(found.to_dict()))["table"] == str(table)
            marked += sum(line.endswith("(traced above)") for line in found.lines())
            forward = store.trace_forward(table, snapshot, about)
            assert sorted(((c.run.run_id, c.read, c.table, c.snapshot) for c in forward), key=str) == (
                reference.traced_forward(table, snapshot)
            )
            assert all((c.owner, c.tier) == about(c.table) for c in forward)
        assert marked > 0  # shared inputs and cycles were met


def test_forward_lists_nearest_first(stored):
    events = [
        complete(
            "dag.a", dataset("out.a", "a1"), run="a", time="2026-10-01T02:00:00Z", inputs=[dataset("src.s", "s1")]
        ),
        complete(
            "dag.b", dataset("out.b", "b1"), run="b", time="2026-10-01T03:00:00Z", inputs=[dataset("out.a", "a1")]
        ),
        complete(
            "dag.c",
            dataset("out.c", "c1"),
            dataset("out.d", None),
            run="c",
            time="2026-10-01T01:00:00Z",
            inputs=[dataset("src.s", "s1"), dataset("out.b", "b1")],
        ),
    ]
    with stored(events) as store:
        forward = store.trace_forward(T("src.s"), "s1", lambda t: (f"team-{t.name}", 2))
        assert [(str(c.table), c.snapshot, c.run.run_id, f"{c.read[0]}@{c.read[1]}") for c in forward] == [
            ("out.c", "c1", "c", "src.s@s1"),
            ("out.d", None, "c", "src.s@s1"),
            ("out.a", "a1", "a", "src.s@s1"),
            ("out.b", "b1", "b", "out.a@a1"),
            ("out.c", "c1", "c", "out.b@b1"),
            ("out.d", None, "c", "out.b@b1"),
        ]
        assert forward[0].line() == (
            "out.c@c1 (owner team-c, tier 2) <- dag.c run c at 2026-10-01T01:00:00Z, read src.s@s1"
        )


def test_a_retry_that_wrote_the_same_snapshot_is_its_writer_whatever_the_order_received(stored):
    first = complete(
        "dag.a", dataset("out.a", "a1"), run="try1", time="2026-10-01T02:00:00Z", inputs=[dataset("src.s", "s1")]
    )
    second = complete(
        "dag.a", dataset("out.a", "a1"), run="try2", time="2026-10-01T03:00:00Z", inputs=[dataset("src.s", "s2")]
    )
    with stored([second, first]) as store:
        origin = store.trace_back(T("out.a"), "a1")
        assert origin.run is not None and origin.run.run_id == "try2"
        assert [(str(o.table), o.snapshot, o.run) for o in origin.inputs] == [("src.s", "s2", None)]


def test_runs_at_one_instant_are_laid_out_by_run_id_whatever_the_order_received(stored):
    at = "2026-10-01T02:00:00Z"
    readers = [
        complete(f"dag.{run}", dataset(f"out.{run}", f"{run}1"), run=run, time=at, inputs=[dataset("src.s", "s1")])
        for run in ("rb", "rd", "ra", "rc")
    ]
    writers = [
        complete("dag.w", dataset("out.w", "w1"), run=run, time=at, inputs=[dataset("src.s", f"s-{run}")])
        for run in ("wz", "wa", "wm")
    ]
    with stored([*readers, *writers]) as store:
        forward = store.trace_forward(T("src.s"), "s1")
        assert [(c.run.run_id, str(c.table)) for c in forward] == [
            ("ra", "out.ra"),
            ("rb", "out.rb"),
            ("rc", "out.rc"),
            ("rd", "out.rd"),
        ]
        origin = store.trace_back(T("out.w"), "w1")  # of the writers at one instant, the last by run id
        assert origin.run is not None and origin.run.run_id == "wz"
        assert [(str(o.table), o.snapshot) for o in origin.inputs] == [("src.s", "s-wz")]


def test_a_snapshot_no_complete_named_is_refused_in_one_sentence(stored):
    events = [complete("dag.a", dataset("out.a", "a1"), run="a", inputs=[dataset("src.s", "s1")])]
    with stored(events) as store:
        with pytest.raises(
            SnapshotNotInStoreError,
            match=r"^out\.a@nope: no received COMPLETE event wrote or read "
            r"this snapshot; check the snapshot id",
        ):
            store.trace_back(T("out.a"), "nope")
        with pytest.raises(SnapshotNotInStoreError, match=r"^out\.a@nope: "):
            store.trace_forward(T("out.a"), "nope")
        assert store.trace_back(T("src.s"), "s1").lines() == ["src.s@s1: a source (no run in the lineage wrote it)"]


@pytest.mark.slow
def test_a_chain_deeper_than_the_recursion_limit_traces(stored):
    events = [
        complete(
            f"dag.j{i}",
            dataset(f"out.t{i}", f"v{i}"),
            run=f"r{i}",
            time="2026-10-01T02:00:00Z",
            inputs=[dataset(f"out.t{i - 1}" if i else "src.s", f"v{i - 1}" if i else "s")],
        )
        for i in range(1200)
    ]
    with stored(events) as store:
        lines = store.trace_back(T("out.t1199"), "v1199").lines()
        assert len(lines) == 1201 and lines[-1] == "  " * 1200 + "src.s@s: a source (no run in the lineage wrote it)"
        assert len(store.trace_forward(T("src.s"), "s")) == 1200


def test_a_trace_through_runs_months_apart_meets_every_run(stored):
    days = ["2026-07-01", "2026-07-01", "2026-08-15", "2026-10-01", "2026-10-01"]
    events = [
        complete(
            f"dag.j{i}",
            dataset(f"out.t{i}", f"v{i}"),
            run=f"r{i}",
            time=f"{day}T02:0{i}:00Z",
            inputs=[dataset(f"out.t{i - 1}" if i else "src.s", f"v{i - 1}" if i else "s")],
        )
        for i, day in enumerate(days)
    ]
    with stored(events) as store:
        assert store.trace_back(T("out.t4"), "v4").lines() == [
            "  " * i + f"out.t{4 - i}@v{4 - i} <- dag.j{4 - i} run r{4 - i} try ? at {days[4 - i]}T02:0{4 - i}:00Z, "
            "SQL unknown"
            for i in range(5)
        ] + ["  " * 5 + "src.s@s: a source (no run in the lineage wrote it)"]
        forward = store.trace_forward(T("src.s"), "s")
        assert [(str(c.table), c.snapshot, c.run.run_id) for c in forward] == [
            (f"out.t{i}", f"v{i}", f"r{i}") for i in range(5)
        ]


def test_a_trace_meets_writers_a_day_away_from_every_run_it_met_and_readers_a_month_later(stored):
    # x1 (10-10 00:00) read a1 (10-09 02:24), which read b1 (10-08 16:48: more than a day before x1, a1's read of it
    # within one), which read c1 (10-07 12:00); x1 also read d1, written a month before and read by nothing else
    runs = [
        ("d", "out.d", "d1", "2026-09-10T00:00:00Z", [("src.r", "r1")]),
        ("c", "out.c", "c1", "2026-10-07T12:00:00Z", [("src.s", "s1")]),
        ("b", "out.b", "b1", "2026-10-08T16:48:00Z", [("out.c", "c1")]),
        ("a", "out.a", "a1", "2026-10-09T02:24:00Z", [("out.b", "b1")]),
        ("x", "out.x", "x1", "2026-10-10T00:00:00Z", [("out.a", "a1"), ("out.d", "d1")]),
    ]
    events = [
        complete(f"dag.{run}", dataset(table, version), run=run, time=time, inputs=[dataset(*i) for i in inputs])
        for run, table, version, time, inputs in runs
    ]
    with stored(events) as store:
        assert [line.split(" try ")[0] for line in store.trace_back(T("out.x"), "x1").lines()] == [
            "out.x@x1 <- dag.x run x",
            "  out.a@a1 <- dag.a run a",
            "    out.b@b1 <- dag.b run b",
            "      out.c@c1 <- dag.c run c",
            "        src.s@s1: a source (no run in the lineage wrote it)",
            "  out.d@d1 <- dag.d run d",
            "    src.r@r1: a source (no run in the lineage wrote it)",
        ]
        assert [(str(c.table), c.run.run_id) for c in store.trace_forward(T("src.s"), "s1")] == [
            ("out.c", "c"),
            ("out.b", "b"),
            ("out.a", "a"),
            ("out.x", "x"),
        ]
        assert [(str(c.table), c.run.run_id) for c in store.trace_forward(T("src.r"), "r1")] == [
            ("out.d", "d"),
            ("out.x", "x"),
        ]
        if store.engine.dialect == "duckdb":  # c1's and d1's rows lie more than a day apart
            assert store.engine.query("SELECT COUNT(*) FROM snapshot_spans WHERE far_apart") == [(2,)]


def test_a_store_grown_after_a_trace_traces_its_new_tables_and_jobs_as_traced_by_hand(stored, tmp_path):
    first = one_snapshot_per_table(tangled(3))
    later = [
        complete(
            f"dag.late{i}",
            dataset(f"late.t{i}", f"late{i}"),
            run=f"late{i}",
            time=f"2026-10-06T0{i}:00:00Z",
            inputs=[dataset("out.t1", "t1-5"), *([dataset(f"late.t{i - 1}", f"late{i - 1}")] if i else [])],
        )
        for i in range(3)
    ]
    reference = ReferenceHistory(first + later)
    with stored(first) as store:
        before = store.trace_forward(T("out.t1"), "t1-5", about)  # the store's names read: none of the later ones
        assert all(c.table.namespace != ("late",) for c in before)
        store.ingest(FileEventSource(write(tmp_path / "later.jsonl", later)))
        for table, snapshot in [(T("out.t1"), "t1-5"), (T("late.t0"), "late0"), (T("late.t2"), "late2")]:
            assert as_tuples(store.trace_back(table, snapshot)) == by_hand(reference, table, snapshot)
            forward = store.trace_forward(table, snapshot, about)
            assert sorted(((c.run.run_id, c.read, c.table, c.snapshot) for c in forward), key=str) == (
                reference.traced_forward(table, snapshot)
            )
        assert [str(c.table) for c in store.trace_forward(T("late.t0"), "late0")] == ["late.t1", "late.t2"]
        assert store.trace_back(T("late.t2"), "late2").lines()[0] == (
            "late.t2@late2 <- dag.late2 run late2 try ? at 2026-10-06T02:00:00Z, SQL unknown"
        )
