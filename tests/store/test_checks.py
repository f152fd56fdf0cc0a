"""What the governance checks ask of the store, on both engines, against the networkx reference and the answers
the checks give over the events read, on the repo's test histories: the tables written as of a time (unaccounted
tables), and the events of one DAG run (runs with no COMPLETE, runs whose lineage could not be read)."""

from __future__ import annotations

import copy

from airflow_lineage_governance.governance.runs import missing_completes, parse_failures
from airflow_lineage_governance.graph.events import FileEventSource, to_run_event
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.checks import unaccounted_tables
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory
from tests.store.test_diff import TIMES
from tests.store.test_queries import changed_history
from tests.support.events import complete, event, extraction_error, output, write
from tests.support.runs import EVENTS

T = TableRef.parse


def test_the_tables_written_as_of_a_time_equal_the_references(store_location, tmp_path):
    events = changed_history()
    reference = ReferenceHistory(events)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=2)
        for at in TIMES:
            assert store.written_tables(at) == reference.written_tables(at)
        assert {str(t): j for t, j in store.written_tables().items()} == {
            "out.t": "dag.a",
            "out.u": "dag.b",
            "out.v": "dag.c",
        }
        assert store.written_tables(TIMES[1]) == {}  # before any run
        catalog = [T("crm.learners"), T("out.t"), T("out.u"), T("out.v"), T("stray.table")]
        assert unaccounted_tables(store.engine, catalog, {T("crm.learners")}) == [T("stray.table")]
        assert unaccounted_tables(store.engine, catalog, set(), at=1) == catalog  # before any run


def test_the_events_of_a_dag_run_give_the_in_memory_missing_completes_and_parse_failures(store_location, tmp_path):
    raws = copy.deepcopy([e.raw for e in EVENTS])
    for raw in raws:  # each try is a run of its own (the test events give both tries one run id)
        raw["run"]["runId"] += f"-try{raw['run']['facets']['airflow']['taskInstance']['try_number']}"
    received = [to_run_event(raw) for raw in raws]
    raws.append(event("COMPLETE", "pxgood", dag_run="run-1"))  # another DAG whose id only looks alike
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", raws)))
        states = {"good": "success", "flaky": "success", "broken": "failed", "skipped": "skipped", "gone": "success"}
        for run in ("run-1", "run-0", "run-9"):
            of_run = store.run_events("p", run)
            assert [f.to_dict() for f in missing_completes(states, of_run, "p", run, "the wait ended")] == [
                f.to_dict() for f in missing_completes(states, received, "p", run, "the wait ended")
            ]
            assert parse_failures(of_run, "p", run) == parse_failures(received, "p", run)
        assert {e.job_name for e in store.run_events("p", "run-1")} == {"p.good", "p.flaky", "p.broken", "p.crashed"}
        assert [e.job_name for e in store.run_events("p", "run-1") if e.raw is not None] == []  # no JSON held
        assert store.run_events("p_", "run-1") == []  # no wildcard in a DAG id


def test_a_late_complete_of_a_dag_run_is_found_with_its_try(store_location, tmp_path):
    events = [
        event("START", "p.t", dag_run="run-1", try_number=1, time="2026-10-01T02:00:00Z"),
        complete("p.t", output("out.t"), dag_run="run-1", try_number=2, time="2026-10-01T03:00:00Z", run="p.t-2"),
        event("FAIL", "p.u", dag_run="run-1", run_facets=extraction_error(), time="2026-10-01T01:00:00Z"),
    ]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "late.jsonl", events[1:])))
        assert missing_completes({"t": "success"}, store.run_events("p", "run-1"), "p", "run-1") == []
        store.ingest(FileEventSource(write(tmp_path / "early.jsonl", events[:1])))
        assert [e.event_type for e in store.run_events("p", "run-1")] == ["FAIL", "START", "COMPLETE"]
        assert parse_failures(store.run_events("p", "run-1"), "p", "run-1") == ["p.u"]
