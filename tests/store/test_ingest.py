"""Ingest on both engines: each event kept once however often and in whatever order it arrives, a crash losing no
committed batch and duplicating nothing, hostile lines counted and left out, runs' final states, and (PostgreSQL)
many writers at once."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from airflow_lineage_governance.graph.events import FileEventSource, ReadReport
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.bodies import event_bodies, event_body
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.schema import DUCKDB_ONLY
from tests.support.events import complete, event, output, write
from tests.support.trace import dataset

DAY = "2026-10-{:02d}T02:00:00Z"


def history() -> list[dict[str, Any]]:
    """Three days of two jobs: dag.a changes its lineage on day 3, a START arrives after its COMPLETE, a run fails."""
    return [
        complete(
            "dag.a",
            output("out.t", {"x": ["crm.learners.email"]}, ["crm.learners.status"]),
            run="a1",
            time=DAY.format(1),
        ),
        complete("dag.b", output("out.u", {"y": ["out.t.x"]}), run="b1", time=DAY.format(1)),
        complete(
            "dag.a",
            output("out.t", {"x": ["crm.learners.email"]}, ["crm.learners.status"]),
            run="a2",
            time=DAY.format(2),
        ),
        complete("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), run="a3", time=DAY.format(3)),
        event("START", "dag.a", run="a3", time="2026-10-03T01:59:00Z"),  # late: after its COMPLETE
        event("START", "dag.b", run="b3", time=DAY.format(3)),
        event("FAIL", "dag.b", run="b3", time="2026-10-03T02:05:00Z"),
    ]


def answers(store: LineageStore) -> dict[str, Any]:
    """Returns what a reader sees: the edges at each day and now, the runs' final states, the events' keys."""
    found: dict[str, Any] = {}
    for day in (1, 2, 3, None):
        at = datetime(2026, 10, day, 12, tzinfo=UTC) if day else None
        found[str(day)] = [
            (str(e.source), str(e.target), e.type, e.subtype, e.job, e.run_id) for e in store.edges_as_of(at)
        ]
    found["runs"] = store.engine.query("SELECT run_id, state FROM runs ORDER BY run_id")
    found["events"] = store.engine.query("SELECT run_id, event_type, at_us FROM events ORDER BY run_id, event_type")
    found["rows"] = {table: rows for table, rows in store.stats()["rows"].items() if table not in DUCKDB_ONLY}
    return found


def test_each_event_is_stored_once_however_often_it_arrives(store_location, tmp_path):
    events = history()
    rewritten = json.loads(json.dumps(events[0]))
    rewritten["eventTime"] = "2026-10-01T02:00:00.000000+00:00"  # as a backend rewrites it: the same instant
    rewritten["producer"] = "rewritten"
    path = write(tmp_path / "events.jsonl", [*events, *events, rewritten])
    with LineageStore.open(store_location, create=True) as store:
        first = store.ingest(FileEventSource(path), batch_size=3)
        assert (first.read, first.stored, first.duplicates, first.completes) == (15, 7, 8, 4)
        once = answers(store)
        again = store.ingest(FileEventSource(path))
        assert (again.stored, again.duplicates) == (0, 15)
        assert answers(store) == once
        assert once["runs"] == [
            ("a1", "COMPLETE"),
            ("a2", "COMPLETE"),
            ("a3", "COMPLETE"),
            ("b1", "COMPLETE"),
            ("b3", "FAIL"),
        ]
        assert once["1"] == [
            ("crm.learners.email", "out.t.x", "DIRECT", "IDENTITY", "dag.a", "a1"),
            ("crm.learners.status", "out.t", "INDIRECT", "FILTER", "dag.a", "a1"),
            ("out.t.x", "out.u.y", "DIRECT", "IDENTITY", "dag.b", "b1"),
        ]
        assert once["2"] == [(s, t, k, u, j, "a2" if j == "dag.a" else r) for s, t, k, u, j, r in once["1"]]
        assert (
            once["3"]
            == once["None"]
            == [
                ("crm.learners.full_name", "out.t.x", "DIRECT", "IDENTITY", "dag.a", "a3"),
                ("out.t.x", "out.u.y", "DIRECT", "IDENTITY", "dag.b", "b1"),
            ]
        )
        at_us = store.engine.query("SELECT at_us FROM events WHERE run_id = 'a1'")[0][0]
        body = event_body(store.engine, "a1", "COMPLETE", at_us)
        assert body is not None and json.loads(body) == events[0]  # the first delivery is the evidence kept


def test_events_in_any_order_give_the_same_store(engine_kind, fresh_location, tmp_path):
    events = history()
    in_order = write(tmp_path / "in-order.jsonl", events)
    backwards = write(tmp_path / "backwards.jsonl", events[::-1])
    with (
        LineageStore.open(fresh_location(), create=True) as first,
        LineageStore.open(fresh_location(), create=True) as second,
    ):
        first.ingest(FileEventSource(in_order))
        for index in range(len(events)):  # one event per batch: every step re-derives the intervals
            second.ingest(FileEventSource(write(tmp_path / f"one-{index}.jsonl", [events[::-1][index]])))
        expected = answers(first)
        assert answers(second) == expected
        third_location = fresh_location()
    with LineageStore.open(third_location, create=True) as third:
        third.ingest(FileEventSource(backwards), batch_size=2)
        assert answers(third) == expected


def test_runs_of_a_job_days_to_years_apart_stored_one_a_batch_give_the_store_of_one_batch(
    engine_kind, fresh_location, tmp_path
):
    apart = ("2022-01-01T00:00:00Z", "2022-01-01T12:00:00Z", "2022-01-06T12:00:00Z", "2022-02-15T12:00:00Z")
    times = (*apart, "2022-12-12T12:00:00Z", "2025-12-12T12:00:00Z", "2022-01-07T12:00:00Z")  # the last arrives late
    sources = ("email", "email", "full_name", "full_name", "email", "email", "status")
    events = [
        complete("dag.far", output("out.t", {"x": [f"crm.learners.{column}"]}), run=f"r{index}", time=at)
        for index, (at, column) in enumerate(zip(times, sources, strict=True))
    ]
    at_once = write(tmp_path / "at-once.jsonl", events)
    with (
        LineageStore.open(fresh_location(), create=True) as first,
        LineageStore.open(fresh_location(), create=True) as second,
    ):
        first.ingest(FileEventSource(at_once))
        for index, one in enumerate(events):  # each COMPLETE's job looked up before it: hours to years before
            second.ingest(FileEventSource(write(tmp_path / f"one-{index}.jsonl", [one])))
        days = ("2022-01-01T06:00:00Z", "2022-01-07T00:00:00Z", "2022-01-08T00:00:00Z", "2023-06-01T00:00:00Z")

        def edges(store: LineageStore) -> dict[str, list[tuple[str, str]]]:
            return {
                day: [(str(e.source), e.run_id) for e in store.edges_as_of(datetime.fromisoformat(day))] for day in days
            }

        assert (
            edges(second)
            == edges(first)
            == {
                "2022-01-01T06:00:00Z": [("crm.learners.email", "r0")],
                "2022-01-07T00:00:00Z": [("crm.learners.full_name", "r2")],
                "2022-01-08T00:00:00Z": [("crm.learners.status", "r6")],
                "2023-06-01T00:00:00Z": [("crm.learners.email", "r4")],
            }
        )
        held = "SELECT run_id, at_us, valid_until_us FROM completes ORDER BY at_us"
        assert second.engine.query(held) == first.engine.query(held)
        assert [run for run, _, until in first.engine.query(held) if until is None] == ["r5"]
        assert answers(second) == answers(first)


def test_a_table_first_named_by_a_batch_of_duplicates_is_known_to_a_later_run(engine_kind, fresh_location, tmp_path):
    first = complete("dag.b", output("out.u", {"y": ["out.t.x"]}), run="b1", time=DAY.format(1))
    redelivered = complete(  # the same run, type and instant, its lineage rewritten: the first received is kept
        "dag.b", output("out.u", {"y": ["src.a.x"]}), run="b1", time=DAY.format(1), inputs=[dataset("src.a", None)]
    )
    reader = complete(
        "dag.c", output("out.v", {"z": ["src.a.x"]}), run="c1", time=DAY.format(2), inputs=[dataset("src.a", None)]
    )
    path = write(tmp_path / "events.jsonl", [first, redelivered, reader])
    with LineageStore.open(fresh_location(), create=True) as store:
        report = store.ingest(FileEventSource(path), batch_size=1)  # the second batch stores nothing new
        assert (report.stored, report.duplicates) == (2, 1)
        observed = store.observed_jobs()
        assert {(str(e.source), str(e.target)) for e in observed["dag.c"].dataset_edges} == {("src.a", "out.v")}
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of(None, into=TableRef.parse("out.v"))] == [
            ("src.a.x", "out.v.z")
        ]


class Crashing:
    """A source that fails after yielding `limit` events, as a reader killed mid-file would."""

    def __init__(self, events: list[dict[str, Any]], limit: int) -> None:
        self.events, self.limit = events, limit
        self.description = "a crashing source"

    def raw_events(self, report: ReadReport) -> Any:
        for index, raw in enumerate(self.events):
            if index == self.limit:
                raise KeyboardInterrupt("the process was stopped")
            yield raw


def test_a_crash_mid_ingest_keeps_every_committed_batch_and_a_rerun_duplicates_nothing(store_location, tmp_path):
    events = history()
    with LineageStore.open(store_location, create=True) as store:
        with pytest.raises(KeyboardInterrupt):
            store.ingest(Crashing(events, 5), batch_size=2)
        kept = store.engine.query("SELECT run_id, event_type FROM events ORDER BY run_id, event_type")
        assert len(kept) == 4  # two batches of two were committed; the fifth event's batch was not
        rerun = store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)))
        assert (rerun.stored, rerun.duplicates) == (3, 4)
        with LineageStore.open(tmp_path / "reference.duckdb", create=True) as reference:
            reference.ingest(FileEventSource(tmp_path / "events.jsonl"))
            assert answers(store) == answers(reference)


def test_hostile_lines_are_counted_and_left_out(store_location, tmp_path):
    good = complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}))
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        b"not json\n"
        + json.dumps(good).encode()
        + b"\n"
        + b'{"eventType": "COMPLETE"}\n'
        + json.dumps({**good, "eventType": "EXPLODE"}).encode()
        + b"\n"
        + json.dumps({**good, "eventTime": "yesterday"}).encode()
        + b"\n"
        + b"[1, 2]\n"
        + json.dumps(
            {
                **good,
                "job": {"namespace": "platform", "name": "dag.z"},
                "run": {"runId": "z1"},
                "outputs": [{"name": 7}, "x", {"name": "t", "facets": []}],
            }
        ).encode()
        + b"\n"
        + b'{"eventType": "COMPL'
    )
    with LineageStore.open(store_location, create=True) as store:
        report = store.ingest(FileEventSource(path))
        assert (
            report.read,
            report.stored,
            report.malformed,
            report.truncated,
            report.wrong_shape,
            report.unknown_type,
        ) == (8, 2, 1, 1, 3, 1)
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [("crm.learners.email", "out.t.x")]


def test_an_event_holding_a_nul_character_is_left_out_with_one_sentence_on_both_engines(store_location, tmp_path):
    kept = complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="r1")
    in_name = complete("dag.b", output("out.nul\x00", {"x": ["crm.learners.email"]}), run="r2")
    in_job = {**complete("dag.c", output("out.c", {"x": ["crm.learners.email"]}), run="r3")}
    in_job["job"] = {"namespace": "platform", "name": "dag\x00c"}
    escaped = complete("dag.d", output("out.d", {"x": ["crm.learners.email"]}), run="r4")
    escaped["run"]["facets"] = {"note": {"text": "a backslash then u0000: \\u0000"}}  # no NUL in it
    path = write(tmp_path / "events.jsonl", [kept, in_name, in_job, escaped])
    with LineageStore.open(store_location, create=True) as store:
        report = store.ingest(FileEventSource(path))
        assert (report.read, report.stored, report.wrong_shape) == (4, 2, 2)
        assert (
            report.problems == ["an event holding a NUL character (\\u0000), which no name in the store can hold"] * 2
        )
        assert sorted(str(e.target) for e in store.edges_as_of()) == ["out.d.x", "out.t.x"]


def test_a_table_keeps_the_namespace_its_first_naming_gave_it_whether_read_by_parts_or_whole(store_location, tmp_path):
    twice = complete(
        "dag.a",
        output("out.t", {"x": ["crm.people.email"]}, namespace="iceberg://second"),
        run="r1",
        inputs=[
            {"namespace": "iceberg://first", "name": "out.t"},
            {"namespace": "iceberg://first", "name": "crm.people"},
        ],
    )
    escaped = complete(  # a Unicode escape: the line is parsed whole
        "dag.b",
        output("out.u", {"y": ["crm.people.email"]}, namespace="iceberg://second"),
        run="r2",
        inputs=[{"namespace": "iceberg://first", "name": "out.u"}],
    )
    escaped["producer"] = "café"  # its é written as a Unicode escape
    path = write(tmp_path / "events.jsonl", [twice, escaped])
    assert "\\u00e9" in path.read_text()
    with LineageStore.open(store_location, create=True) as store:
        assert store.ingest(FileEventSource(path)).stored == 2
        found = store.engine.query("SELECT name, namespace FROM datasets ORDER BY name")
    assert found == [("crm.people", "iceberg://first"), ("out.t", "iceberg://first"), ("out.u", "iceberg://first")]


def test_each_run_of_one_lineage_keeps_the_snapshots_it_read_the_first_of_a_table_named_twice(store_location, tmp_path):
    runs = [
        complete(
            "dag.a",
            dataset("out.t", f"t-{day}"),
            run=f"a{day}",
            time=DAY.format(day),
            inputs=[dataset("src.s", f"s-{day}"), dataset("src.s", f"later-{day}"), dataset("src.r", f"r-{day}")],
        )
        for day in (1, 2, 3)
    ]
    path = write(tmp_path / "events.jsonl", runs)
    with LineageStore.open(store_location, create=True) as store:
        assert store.ingest(FileEventSource(path), batch_size=2).stored == 3
        read = {day: store.trace_back(TableRef.parse("out.t"), f"t-{day}").run for day in (1, 2, 3)}
    for day, run in read.items():
        assert run is not None and run.run_id == f"a{day}"
        assert [(str(table), snapshot) for table, snapshot in run.inputs] == [
            ("src.r", f"r-{day}"),
            ("src.s", f"s-{day}"),
        ]


@pytest.mark.slow
def test_many_writers_at_once_store_each_event_once(fresh_location, tmp_path, engine_kind):
    # PostgreSQL: four connections write at once. DuckDB: a file has one writing process, so the four take turns.
    events = [
        complete(
            f"dag.j{job % 7}",
            output(f"out.t{job % 7}", {"x": [f"src.s{job % 5}.c"]}, [f"src.s{(job + 1) % 5}.d"]),
            run=f"r{job}",
            time=f"2026-10-{1 + job // 7:02d}T02:00:00Z",
        )
        for job in range(70)
    ]
    path = write(tmp_path / "events.jsonl", events)
    location = fresh_location()
    with LineageStore.open(location, create=True):
        pass
    errors: list[BaseException] = []
    lock = threading.Lock()

    def writer(shift: int) -> None:
        try:
            with LineageStore.open(location) as store:
                shifted = write(tmp_path / f"writer-{shift}.jsonl", events[shift:] + events[:shift])
                if engine_kind == "duckdb":
                    with lock:
                        store.ingest(FileEventSource(shifted), batch_size=9)
                else:
                    store.ingest(FileEventSource(shifted), batch_size=9)
        except BaseException as error:  # noqa: B036 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(shift,)) for shift in (0, 17, 33, 51)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with LineageStore.open(location) as store, LineageStore.open(tmp_path / "one.duckdb", create=True) as one:
        one.ingest(FileEventSource(path))
        assert answers(store) == answers(one)
        assert store.stats()["rows"]["events"] == 70


@pytest.mark.slow
def test_every_events_json_is_kept_as_received_across_blocks_and_a_partly_new_batch(
    engine_kind, fresh_location, tmp_path
):
    events = [
        complete(
            f"dag.j{n % 7}",
            output(f"out.t{n % 7}", {"x": [f"crm.s{n % 5}.c{n % 3}"]}),
            run=f"r{n}",
            time=f"2026-10-01T02:{n // 60 % 60:02d}:{n % 60:02d}Z",
        )
        for n in range(2600)
    ]
    lines = [json.dumps(e, separators=(",", ":")).encode() for e in events]
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"\n".join(lines[:1500]) + b"\n")
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"\n".join(lines) + b"\n")
    with LineageStore.open(fresh_location(), create=True) as store:
        assert store.ingest(FileEventSource(first), batch_size=1200).stored == 1500
        again = store.ingest(FileEventSource(whole), batch_size=1200)  # the second batch holds old and new events
        assert (again.stored, again.duplicates) == (1100, 1500)
        kept = store.engine.query("SELECT run_id, at_us FROM events")
        assert len(kept) == 2600
        by_run = {run: event_body(store.engine, run, "COMPLETE", at) for run, at in kept}
        assert [by_run[f"r{n}"] for n in range(2600)] == lines
        at_of = dict(kept)
        every = event_bodies(store.engine, "COMPLETE", [*kept, ("r0", at_of["r0"] + 1), ("no-such-run", 0)])
        assert len(every) == 2600
        assert [every[(f"r{n}", at_of[f"r{n}"])] for n in range(2600)] == lines
        assert store.engine.query("SELECT COUNT(*) FROM event_blocks")[0][0] < 10


def test_the_json_of_events_in_many_blocks_is_read_at_once(store_location, tmp_path):
    events = [
        complete(
            "dag.a", output("out.t", {"x": ["crm.learners.email"]}), run=f"a{n}", time=f"2026-10-01T02:00:{n:02d}Z"
        )
        for n in range(9)
    ]
    with LineageStore.open(store_location, create=True) as store:
        for n, one in enumerate(events):  # one ingest each: one block each, more than are read one look-up each
            store.ingest(FileEventSource(write(tmp_path / f"{n}.jsonl", [one])))
        assert store.engine.query("SELECT COUNT(*) FROM event_blocks")[0][0] == 9
        kept = store.engine.query("SELECT run_id, at_us FROM events")
        found = event_bodies(store.engine, "COMPLETE", [*kept, ("a0", 0)])
        assert {run: json.loads(body) for (run, _), body in found.items()} == {e["run"]["runId"]: e for e in events}
        assert event_bodies(store.engine, "START", kept) == {}


@pytest.mark.slow
def test_a_batch_of_twenty_thousand_jobs_is_stored_and_so_is_the_next_one(engine_kind, fresh_location, tmp_path):
    # a writer locks the jobs it writes; PostgreSQL keeps every lock of the server in one table of a few thousand
    # (max_locks_per_transaction x connections): a lock per job of the batch overflowed it ("out of shared memory")
    starts = [event("START", f"dag.j{n}", run=f"r{n}", time=DAY.format(1)) for n in range(20_000)]
    path = write(tmp_path / "wide.jsonl", starts)
    location = fresh_location()
    with LineageStore.open(location, create=True) as store:
        report = store.ingest(FileEventSource(path), batch_size=20_000)
        assert (report.stored, report.batches) == (20_000, 1)
        assert store.engine.query("SELECT COUNT(DISTINCT job_id) FROM runs") == [(20_000,)]
        late = complete("dag.j7", output("out.t", {"x": ["crm.learners.email"]}), run="r7", time=DAY.format(2))
        assert store.ingest(FileEventSource(write(tmp_path / "one.jsonl", [late]))).stored == 1
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [("crm.learners.email", "out.t.x")]
