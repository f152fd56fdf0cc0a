"""Small OpenLineage run events built in-process for the pure graph and governance layers' tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

NS = "iceberg://platform"


def source(
    name: str, kind: str = "DIRECT", subtype: str = "IDENTITY", masking: bool = False, namespace: str = NS
) -> dict[str, Any]:
    """Returns an input field `db.table.column` with one transformation."""
    table, _, column = name.rpartition(".")
    return {
        "namespace": namespace,
        "name": table,
        "field": column,
        "transformations": [{"type": kind, "subtype": subtype, "masking": masking}],
    }


def output(
    table: str,
    fields: dict[str, list[Any]] | None = None,
    rows: list[Any] | None = None,
    schema: list[str] | None = None,
    namespace: str = NS,
) -> dict[str, Any]:
    """Returns an output dataset: each field's inputs (a name is a DIRECT IDENTITY source), and the
    sources that shape every row (a name is an INDIRECT FILTER source)."""

    def entry(item: Any, kind: str, subtype: str) -> dict[str, Any]:
        return source(item, kind, subtype) if isinstance(item, str) else item

    facets: dict[str, Any] = {
        "columnLineage": {
            "fields": {
                name: {"inputFields": [entry(s, "DIRECT", "IDENTITY") for s in sources]}
                for name, sources in (fields or {}).items()
            },
            "dataset": [entry(s, "INDIRECT", "FILTER") for s in rows or []],
        }
    }
    if schema is not None:
        facets["schema"] = {"fields": [{"name": n, "type": "string"} for n in schema]}
    return {"namespace": namespace, "name": table, "facets": facets}


def event(
    kind: str,
    job: str,
    *outputs: dict[str, Any],
    run: str | None = None,
    time: str = "2026-10-01T02:00:00Z",
    dag_run: str | None = None,
    try_number: int | None = None,
    run_facets: dict[str, Any] | None = None,
    namespace: str = "platform",
    inputs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Returns a run event of `job` (a DAG run's task when `dag_run` is given)."""
    facets = dict(run_facets or {})
    if dag_run is not None:
        facets["airflow"] = {"dagRun": {"run_id": dag_run}, "taskInstance": {"try_number": try_number or 1}}
    return {
        "eventType": kind,
        "eventTime": time,
        "producer": "tests",
        "run": {"runId": run or f"{job}-{time}", "facets": facets},
        "job": {"namespace": namespace, "name": job},
        "inputs": inputs or [],
        "outputs": list(outputs),
    }


def complete(job: str, *outputs: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Returns a COMPLETE event of `job` writing `outputs`."""
    return event("COMPLETE", job, *outputs, **options)


def extraction_error(
    message: str = "Lineage cannot be read: out.t: crm.learners has no column emial.",
    task: str = "create table out.t as select ...",
) -> dict[str, Any]:
    """Returns OpenLineage's ExtractionErrorRunFacet for one task whose lineage could not be read."""
    return {
        "extractionError": {
            "_producer": "tests",
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-2/ExtractionErrorRunFacet.json",
            "totalTasks": 1,
            "failedTasks": 1,
            "errors": [{"errorMessage": message, "task": task}],
        }
    }


def write(path: Path, lines: list[Any]) -> Path:
    """Writes the events (dicts, or raw text lines) as JSONL; returns the path."""
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def graph_of(*events: dict[str, Any], namespace: str | None = NS) -> Any:
    """Returns the lineage graph of the events, read as the graph layer reads them."""
    from airflow_lineage_governance.graph.build import build_graph
    from airflow_lineage_governance.graph.events import to_run_event

    received = [to_run_event(e) for e in events]
    return build_graph([e for e in received if e is not None], namespace)


class Listed:
    """An in-process event source: its events are Python values (each read a fresh copy), not JSON lines."""

    description = "in-process"

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def raw_events(self, report: Any) -> Any:
        """Yields a copy of each event."""
        yield from copy.deepcopy(self.events)
