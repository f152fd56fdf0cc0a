"""Property: on random small histories (late, duplicate and out-of-order deliveries, failed runs, lineage that
changes), both engines' answers equal the networkx reference (airflow_lineage_governance/store/reference.py): the
edges as of every time, each run's final state, the impact of every column, the tables written and each job's runtime
lineage (the design diff's input), and the trace of every snapshot back and forward."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store import provenance
from airflow_lineage_governance.store.errors import ColumnNotInStoreError, SnapshotNotInStoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory
from tests.support.events import NS

TABLES = ("src.a", "src.b", "out.t0", "out.t1", "out.t2")
FIELDS = ("c0", "c1", "c2")
JOBS = 3
KINDS = (("DIRECT", "IDENTITY"), ("DIRECT", "AGGREGATION"), ("INDIRECT", "FILTER"), ("INDIRECT", "JOIN"))
TIMES = [datetime(2026, 10, day, 2, minute, tzinfo=UTC) for day in (1, 2, 3) for minute in (0, 30)]
ASKED = [None, datetime(2026, 9, 30, tzinfo=UTC), *TIMES, datetime(2026, 10, 2, 2, 15, tzinfo=UTC)]

source_field = st.tuples(st.sampled_from(TABLES), st.sampled_from(FIELDS), st.sampled_from(KINDS))
lineage = st.tuples(
    st.dictionaries(st.sampled_from(FIELDS), st.lists(source_field, min_size=1, max_size=2), max_size=3),
    st.lists(source_field, max_size=2),  # the inputs that shape every row
    st.lists(st.sampled_from(FIELDS), max_size=3, unique=True),
)  # the schema's fields
run_event = st.tuples(
    st.integers(0, JOBS - 1),
    st.integers(0, 3),
    st.sampled_from(["START", "COMPLETE", "FAIL"]),
    st.integers(0, len(TIMES) - 1),
    lineage,
    st.booleans(),
)


def field_entry(table: str, column: str, kind: tuple[str, str]) -> dict[str, Any]:
    return {
        "namespace": NS,
        "name": table,
        "field": column,
        "transformations": [{"type": kind[0], "subtype": kind[1], "masking": False}],
    }


def to_raw(job: int, run: int, kind: str, time: int, stated: Any, written_as_offset: bool) -> dict[str, Any]:
    fields, rows, schema = stated
    at = TIMES[time]
    text = at.isoformat() if written_as_offset else at.strftime("%Y-%m-%dT%H:%M:%SZ")
    outputs = (
        [
            {
                "namespace": NS,
                "name": f"out.t{job}",
                "facets": {
                    "schema": {"fields": [{"name": name, "type": "long"} for name in schema]},
                    "columnLineage": {
                        "fields": {
                            name: {"inputFields": [field_entry(*s) for s in sources]}
                            for name, sources in fields.items()
                        },
                        "dataset": [field_entry(*s) for s in rows],
                    },
                },
            }
        ]
        if kind == "COMPLETE"
        else []
    )
    return {
        "eventType": kind,
        "eventTime": text,
        "producer": "tests",
        "run": {"runId": f"j{job}-r{run}"},
        "job": {"namespace": "platform", "name": f"dag.j{job}"},
        "inputs": [],
        "outputs": outputs,
    }


histories = st.lists(run_event, min_size=1, max_size=10).flatmap(
    lambda events: st.tuples(
        st.just(events),
        st.permutations(range(len(events))),
        st.lists(st.integers(0, len(events) - 1), max_size=4),
        st.integers(1, 4),
    )
)


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(history=histories)
def test_the_store_answers_as_the_networkx_reference(history, fresh_location, tmp_path_factory, engine_kind):
    events, order, repeated, batch_size = history
    raws = [to_raw(*e) for e in events]
    delivered = [raws[i] for i in order] + [raws[i] for i in repeated]  # out of order, some twice
    folder = tmp_path_factory.mktemp("deliveries")
    path = folder / "events.jsonl"
    path.write_text("".join(json.dumps(raw) + "\n" for raw in delivered))
    reference = ReferenceHistory(delivered)
    with LineageStore.open(fresh_location(), create=True) as store:
        store.ingest(FileEventSource(path), batch_size=batch_size)
        assert dict(store.engine.query("SELECT run_id, state FROM runs")) == reference.final_states()
        for at in ASKED:
            assert {
                (e.source, e.target, e.type, e.subtype, e.job) for e in store.edges_as_of(at)
            } == reference.edges_as_of(at)
            for name in TABLES:  # the edges into one table: its rows, or its columns
                table = TableRef.parse(name)
                assert {(e.source, e.target, e.type, e.subtype, e.job) for e in store.edges_as_of(at, into=table)} == {
                    edge
                    for edge in reference.edges_as_of(at)
                    if (edge[1] if isinstance(edge[1], TableRef) else edge[1].table) == table
                }
            assert store.written_tables(at) == reference.written_tables(at)
            assert {
                job: (
                    {(e.source, e.target, e.type, e.subtype) for e in seen.edges},
                    {(e.source, e.target) for e in seen.dataset_edges},
                    seen.run_id,
                )
                for job, seen in store.observed_jobs(at).items()
            } == reference.observed(at)
            for table in TABLES:
                for name in FIELDS:
                    column = ColumnRef(TableRef.parse(table), name)
                    reached, values, rows = reference.impact(column, at)
                    try:
                        found = store.impact(column, at)
                    except ColumnNotInStoreError:
                        assert (reached, values, rows) == (set(), set(), set())
                        continue
                    assert (set(found.columns_reached), set(found.values), set(found.rows)) == (reached, values, rows)
                    walker = provenance.StoreWalker(store.engine, at)
                    answer = provenance.impact(walker, column)
                    assert (set(answer.columns_reached), set(answer.values), set(answer.rows)) == (
                        reached,
                        values,
                        rows,
                    )
                    assert answer.reaches_itself == (column in reached)
                    sources = provenance.provenance(walker, column)
                    assert set(sources.sources) == reference.upstream(column, at)
                    assert sources.reaches_itself == (column in sources.sources)


SNAPSHOT_TABLES = ("src.a", "src.b", "out.t0", "out.t1", "out.t2")
VERSIONS = ("v0", "v1", "v2")
read_snapshot = st.tuples(st.sampled_from(SNAPSHOT_TABLES), st.sampled_from((*VERSIONS, None)))
traced_run = st.tuples(
    st.integers(0, JOBS - 1),
    st.integers(0, 3),
    st.sampled_from(["START", "COMPLETE", "FAIL"]),
    st.integers(0, len(TIMES) - 1),
    st.lists(read_snapshot, max_size=3),
    st.lists(st.tuples(st.integers(0, JOBS - 1), st.sampled_from((*VERSIONS, None))), min_size=1, max_size=2),
)


def traced_raw(job: int, run: int, kind: str, time: int, reads: Any, writes: Any) -> dict[str, Any]:
    def dataset(table: str, version: str | None) -> dict[str, Any]:
        return {
            "namespace": NS,
            "name": table,
            "facets": {"version": {"datasetVersion": version}} if version is not None else {},
        }

    return {
        "eventType": kind,
        "eventTime": TIMES[time].strftime("%Y-%m-%dT%H:%M:%SZ"),
        "producer": "tests",
        "run": {"runId": f"j{job}-r{run}"},
        "job": {"namespace": "platform", "name": f"dag.j{job}"},
        "inputs": [dataset(*r) for r in reads],
        "outputs": [dataset(f"out.t{t}", v) for t, v in writes],
    }


traced_histories = st.lists(traced_run, min_size=1, max_size=10).flatmap(
    lambda events: st.tuples(
        st.just(events),
        st.permutations(range(len(events))),
        st.lists(st.integers(0, len(events) - 1), max_size=4),
        st.integers(1, 4),
    )
)


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(history=traced_histories)
def test_the_store_traces_snapshots_as_the_networkx_reference(history, fresh_location, tmp_path_factory, engine_kind):
    events, order, repeated, batch_size = history
    raws = [traced_raw(*e) for e in events]
    delivered = [raws[i] for i in order] + [raws[i] for i in repeated]  # out of order, some twice
    path = tmp_path_factory.mktemp("deliveries") / "events.jsonl"
    path.write_text("".join(json.dumps(raw) + "\n" for raw in delivered))
    reference = ReferenceHistory(delivered)
    with LineageStore.open(fresh_location(), create=True) as store:
        store.ingest(FileEventSource(path), batch_size=batch_size)
        for at in ASKED:
            assert {
                job: ({(e.source, e.target) for e in seen.dataset_edges}, seen.run_id)
                for job, seen in store.observed_jobs(at).items()
            } == {job: (tables, run) for job, (_, tables, run) in reference.observed(at).items()}
        for name in SNAPSHOT_TABLES:
            for version in VERSIONS:
                table = TableRef.parse(name)
                expected = reference.traced_back(table, version)
                try:
                    origin = store.trace_back(table, version)
                except SnapshotNotInStoreError:
                    assert expected == {(table, version, None)}
                    assert reference.traced_forward(table, version) == []
                    continue
                met, stack = set(), [origin]
                while stack:
                    node = stack.pop()
                    stack.extend(node.inputs)
                    if node.snapshot is not None:
                        met.add((node.table, node.snapshot, node.run.run_id if node.run is not None else None))
                assert met == expected
                assert sorted(
                    ((c.run.run_id, c.read, c.table, c.snapshot) for c in store.trace_forward(table, version)), key=str
                ) == reference.traced_forward(table, version)
