"""The sensor reading the target run's events from the lineage store (a DuckDB file): only that run's events of
the job namespace, and one sentence when the store cannot be read."""

from __future__ import annotations

from airflow_lineage_governance.governance.runs import missing_completes
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.sensors.lineage_complete import LineageCompleteSensor
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.support.events import event, write


def test_the_sensor_reads_the_target_runs_events_of_its_namespace_from_the_store(tmp_path):
    store = str(tmp_path / "lineage-store.duckdb")
    events = [
        event("START", "p.a", dag_run="run-1"),
        event("COMPLETE", "p.a", dag_run="run-1", time="2026-10-01T03:00:00Z"),
        event("COMPLETE", "p.b", dag_run="run-1", namespace="other"),
        event("COMPLETE", "p.b", dag_run="run-0"),
    ]
    with LineageStore.open(store, create=True) as opened:
        opened.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)))
    sensor = LineageCompleteSensor(task_id="wait", target_dag_id="p", store=store)
    found, problem = sensor._stored_events("run-1", "platform")
    assert problem == "" and [(e.job_name, e.event_type) for e in found] == [("p.a", "START"), ("p.a", "COMPLETE")]
    missing = missing_completes({"a": "success", "b": "success"}, found, "p", "run-1")
    assert [m.job for m in missing] == ["p.b"]  # its COMPLETE came from another deployment's namespace


def test_a_store_that_cannot_be_read_is_one_sentence(tmp_path):
    sensor = LineageCompleteSensor(task_id="wait", target_dag_id="p", store=str(tmp_path / "missing.duckdb"))
    found, problem = sensor._stored_events("run-1", "platform")
    assert found == [] and problem.startswith("the lineage store could not be read: ")
    assert "Traceback" not in problem
