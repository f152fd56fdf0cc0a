"""Tracing by snapshot without recursion, with the collector paused and origins made when read, gives exactly what
the recursive trace gave: the same runs, the same order of inputs, the same `seen_before` marks, the same
contaminated outputs in the same order; on lineage with shared inputs, cycles, retries that wrote the same
snapshot, runs of two outputs, inputs with no version, and sources read again and again."""

from __future__ import annotations

import gc
from collections import deque
from dataclasses import FrozenInstanceError

import pytest

from airflow_lineage_governance.graph.history import LineageHistory
from airflow_lineage_governance.graph.trace import Contaminated, Origin, trace_back, trace_forward
from airflow_lineage_governance.refs import TableRef
from tests.support.events import complete
from tests.support.trace import about, dataset, history_of, tangled


def recursive_back(history: LineageHistory, table: TableRef, snapshot: str) -> Origin:
    """Returns the origin as the recursive trace made it (the reference)."""
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
        found.inputs = [origin(t, v) for t, v in run.inputs]
        return found

    return origin(table, snapshot)


def queued_forward(history: LineageHistory, table: TableRef, snapshot: str, about) -> list[Contaminated]:
    """Returns the contaminated outputs as the first breadth-first trace listed them (the reference)."""
    found: list[Contaminated] = []
    seen = {(table, snapshot)}
    queue = deque([(table, snapshot)])
    while queue:
        read = queue.popleft()
        for run in history.readers.get(read, ()):
            for out_table, version in run.outputs:
                owner, tier = about(out_table)
                found.append(Contaminated(run, read, out_table, version, owner, tier))
                if version is not None and (out_table, version) not in seen:
                    seen.add((out_table, version))
                    queue.append((out_table, version))
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_snapshot_traces_back_and_forward_as_the_recursive_trace_did(tmp_path, seed):
    history = history_of(tmp_path, tangled(seed))
    snapshots = sorted({*history.writers, *history.readers}, key=lambda k: (str(k[0]), k[1]))
    assert any(o.seen_before for k in snapshots for o in recursive_back(history, *k).inputs)  # shared and cycles
    for table, snapshot in snapshots:
        expected, origin = recursive_back(history, table, snapshot), trace_back(history, table, snapshot)
        assert origin.lines() == expected.lines()
        assert origin.to_dict() == expected.to_dict()
        assert origin == expected
        forward = trace_forward(history, table, snapshot, about)
        assert forward == queued_forward(history, table, snapshot, about)
        assert [c.line() for c in forward] == [c.line() for c in queued_forward(history, table, snapshot, about)]


def test_origins_made_when_read_are_origins_as_made_by_hand(tmp_path):
    history = history_of(tmp_path, tangled(4))
    table, snapshot = max(history.writers, key=lambda k: len(recursive_back(history, *k).lines()))
    origin = trace_back(history, table, snapshot)
    assert repr(origin) == repr(recursive_back(history, table, snapshot))
    first = origin.inputs[0]
    assert first.inputs is first.inputs  # made once
    first.inputs = []
    assert first.inputs == [] and origin != recursive_back(history, table, snapshot)
    assert Origin(table, snapshot).inputs == [] and Origin(table, snapshot) == Origin(table, snapshot)
    with pytest.raises(TypeError):
        hash(origin)


def test_contaminated_outputs_are_frozen_and_equal_to_those_made_by_hand(tmp_path):
    history = history_of(tmp_path, tangled(5))
    table, snapshot = max(history.readers, key=lambda k: len(trace_forward(history, *k)))
    for found in trace_forward(history, table, snapshot, about):
        made = Contaminated(found.run, found.read, found.table, found.snapshot, found.owner, found.tier)
        assert found == made and hash(found) == hash(made) and repr(found) == repr(made)
        with pytest.raises(FrozenInstanceError):
            found.tier = 0  # type: ignore[misc]


def test_a_chain_deeper_than_the_recursion_limit_traces(tmp_path):
    events = [
        complete(
            f"dag.j{i}",
            dataset(f"out.t{i}", f"v{i}"),
            run=f"r{i}",
            time="2026-10-01T02:00:00Z",
            inputs=[dataset(f"out.t{i - 1}" if i else "src.s", f"v{i - 1}" if i else "s")],
        )
        for i in range(2000)
    ]
    history = history_of(tmp_path, events)
    origin = trace_back(history, TableRef.parse("out.t1999"), "v1999")
    lines = origin.lines()
    assert len(lines) == 2001 and lines[-1] == "  " * 2000 + "src.s@s: a source (no run in the lineage wrote it)"
    assert origin.to_dict()["inputs"][0]["written_by"]["run_id"] == "r1998"  # type: ignore[index]
    depth = 0
    while origin.inputs:
        (origin,) = origin.inputs
        depth += 1
    assert depth == 2000 and origin.table == TableRef.parse("src.s") and origin.run is None
    assert len(trace_forward(history, TableRef.parse("src.s"), "s")) == 2000


def test_the_collector_is_running_again_after_a_trace(tmp_path):
    history = history_of(tmp_path, tangled(6))
    table, snapshot = next(iter(history.writers))
    assert gc.isenabled()
    trace_back(history, table, snapshot)
    trace_forward(history, table, snapshot)
    assert gc.isenabled()
