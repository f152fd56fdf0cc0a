"""Dated COMPLETE events with the snapshots they read and wrote."""

from __future__ import annotations

from tests.support.events import NS, complete


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
