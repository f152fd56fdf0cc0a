"""The store's lookups by name on both engines (what the UI's pages ask): a task's COMPLETE in one DAG run, the jobs
writing some tables now with their events, and the column names of the lineage now, held to the networkx reference."""

from __future__ import annotations

from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.lookups import Writer, column_names, task_complete, writers
from airflow_lineage_governance.store.reference import ReferenceHistory
from tests.store.test_queries import changed_history
from tests.support.events import complete, event, output, write

T = TableRef.parse


def stored(location: str, path, events: list[dict]) -> LineageStore:
    store = LineageStore.open(location, create=True)
    store.ingest(FileEventSource(write(path, events)), batch_size=2)
    return store


def test_a_tasks_complete_in_a_dag_run_is_its_latest_try_of_that_run(store_location, tmp_path):
    first = complete("p.t", output("out.t", {"x": ["crm.learners.email"]}), dag_run="run-1", run="t-1", try_number=1)
    second = complete(
        "p.t",
        output("out.t", {"x": ["crm.learners.full_name"]}),
        dag_run="run-1",
        run="t-2",
        try_number=2,
        time="2026-10-01T03:00:00Z",
    )
    other_run = complete(
        "p.t", output("out.t", {"x": ["crm.learners.id"]}), dag_run="run-2", time="2026-10-02T02:00:00Z"
    )
    events = [
        second,
        first,
        other_run,
        event("START", "p.u", dag_run="run-1"),
        complete("p.tt", output("out.tt"), dag_run="run-1"),
        complete("p.t", output("out.z"), dag_run="run-1", namespace="elsewhere", time="2026-10-01T04:00:00Z"),
    ]
    with stored(store_location, tmp_path / "events.jsonl", events) as store:
        engine = store.engine
        assert task_complete(engine, "p.t", "run-1", ["platform"]) == second  # as first received
        assert task_complete(engine, "p.t", "run-2") == other_run
        assert task_complete(engine, "p.t", "run-1")["job"]["namespace"] == "elsewhere"  # every namespace: the latest
        assert task_complete(engine, "p.u", "run-1") is None  # a START only
        assert task_complete(engine, "p.t", "run-3") is None
        assert task_complete(engine, "p.", "run-1") is None  # no prefix match
        assert task_complete(engine, "p.t", "run-1", []) is None


def test_the_writers_of_tables_are_the_jobs_whose_latest_complete_wrote_them(store_location, tmp_path):
    dag = {"airflow": {"dag": {"dag_id": "nightly"}, "dagRun": {"run_id": "r"}, "taskInstance": {"try_number": 1}}}
    events = [
        complete("nightly.a", output("out.t", {"x": ["crm.learners.email"]}), run_facets=dag),
        complete("other.b", output("out.t", {"y": ["crm.learners.email"]}), output("out.u")),
        complete("old.c", output("out.v"), time="2026-10-01T01:00:00Z"),
        complete("old.c", output("out.w"), time="2026-10-01T02:00:00Z"),  # no longer writes out.v
    ]
    with stored(store_location, tmp_path / "events.jsonl", events) as store:
        found = writers(store.engine, [T("out.t"), T("out.u"), T("out.v"), T("crm.learners")])
        assert list(found) == [T("out.t"), T("out.u")]  # a source, and a table no job writes now, are left out
        assert [w.job for w in found[T("out.t")]] == ["nightly.a", "other.b"]
        assert found[T("out.t")][0] == Writer("nightly.a", events[0])
        assert found[T("out.u")] == [Writer("other.b", events[1])]
        assert writers(store.engine, [T("out.w")], ["platform"]) == {T("out.w"): [Writer("old.c", events[3])]}
        assert writers(store.engine, [T("out.w")], ["elsewhere"]) == {}
        assert writers(store.engine, []) == {}


def test_the_column_names_are_the_reference_graphs(store_location, tmp_path):
    events = changed_history()
    graph = ReferenceHistory(events).lineage_graph(None)
    expected = sorted(graph.name_of(c) for columns in graph.table_columns.values() for c in columns.values())
    with stored(store_location, tmp_path / "events.jsonl", events) as store:
        assert column_names(store.engine) == expected
        assert column_names(store.engine, ["platform"], limit=3) == expected[:3]
        assert column_names(store.engine, ["elsewhere"]) == []
        assert "crm.learners.email" not in expected  # dag.a's latest run reads full_name only
