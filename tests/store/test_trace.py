"""Tracing by snapshot in the store, on both engines, against the in-memory history's traces (graph/trace.py) on
the repo's test histories: shared inputs, cycles, retries that wrote the same snapshot, runs of two outputs, inputs
with no version, sources read again and again, and a chain deeper than Python's recursion limit."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.graph.history import LineageHistory
from airflow_lineage_governance.graph.trace import Origin, trace_forward
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.errors import SnapshotNotInStoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.support.events import complete, write
from tests.support.trace import about, dataset, history_of, tangled

T = TableRef.parse


def by_name(history: LineageHistory, table: TableRef, snapshot: str) -> Origin:
    """Returns the in-memory trace back with each run's inputs taken by table name (as the store lists them)."""
    seen: set[tuple[TableRef, str]] = set()

    def origin(of: TableRef, version: str | None) -> Origin:
        run = history.writers.get((of, version)) if version is not None else None
        found = Origin(of, version, run)
        if version is None or run is None:
            return found
        if (of, version) in seen:
            found.seen_before = True
            return found
        seen.add((of, version))
        found.inputs = [origin(t, v) for t, v in sorted(run.inputs, key=lambda i: str(i[0]))]
        return found

    return origin(table, snapshot)


def one_snapshot_per_table(events: list[dict]) -> list[dict]:
    """Returns the events with each run's inputs cut to the first snapshot named per table: the store keeps one
    snapshot of each table a run read."""
    for event in events:
        names: set[str] = set()
        event["inputs"] = [d for d in event["inputs"] if not (d["name"] in names or names.add(d["name"]))]
    return events


def canonical(items: list) -> list[str]:
    return sorted(json.dumps(item.to_dict(), sort_keys=True) for item in items)


@pytest.fixture
def stored(store_location, tmp_path):
    def load(events: list[dict], batch_size: int = 500) -> LineageStore:
        store = LineageStore.open(store_location, create=True)
        store.ingest(FileEventSource(write(tmp_path / "store.jsonl", events)), batch_size=batch_size)
        return store

    return load


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_every_snapshot_traces_as_the_in_memory_history(stored, tmp_path, seed):
    events = one_snapshot_per_table(tangled(seed))
    history = history_of(tmp_path, events)
    snapshots = sorted({*history.writers, *history.readers}, key=lambda k: (str(k[0]), k[1]))
    with stored(events, batch_size=77) as store:
        marked = 0
        for table, snapshot in snapshots:
            expected, found = by_name(history, table, snapshot), store.trace_back(table, snapshot)
            assert found.lines() == expected.lines()
            assert found.to_dict() == expected.to_dict()
            marked += sum(line.endswith("(traced above)") for line in found.lines())
            forward = store.trace_forward(table, snapshot, about)
            in_memory = trace_forward(history, table, snapshot, about)
            assert canonical(forward) == canonical(in_memory)
            assert sorted(c.line() for c in forward) == sorted(c.line() for c in in_memory)
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
