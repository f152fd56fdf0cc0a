"""Dated COMPLETE events with the snapshots they read and wrote, and the lineage history read from them."""

from __future__ import annotations

from airflow_lineage_governance.graph.events import FileEventSource, read_events
from airflow_lineage_governance.graph.history import LineageHistory
from tests.support.events import NS, complete, write


def versioned(dataset: dict, version: str) -> dict:
    dataset.setdefault("facets", {})["version"] = {"datasetVersion": version}
    return dataset


def read(name: str, version: str) -> dict:
    return {"namespace": NS, "name": name, "facets": {"version": {"datasetVersion": version}}}


def run(job, out, *, day: int, run: str, reads=(), sql: str | None = None, try_number: int = 1, version="") -> dict:
    event = complete(
        job,
        versioned(out, version or f"{run}-out"),
        run=run,
        time=f"2026-10-{day:02d}T02:00:00Z",
        dag_run=f"manual__{day}",
        try_number=try_number,
        inputs=[read(n, v) for n, v in reads],
    )
    if sql is not None:
        event["job"]["facets"] = {"sql": {"query": sql}}
    return event


def history_of(tmp_path, *events) -> tuple[LineageHistory, list]:
    history = LineageHistory(NS)
    received, _ = read_events(FileEventSource(write(tmp_path / "events.jsonl", list(events))), on_complete=history.add)
    return history, received
