"""Reading events tolerantly and building the graph from them: pure functions on files written here."""

from __future__ import annotations

import json

from airflow_lineage_governance.graph.build import build_graph
from airflow_lineage_governance.graph.events import FileEventSource, final_events, read_events
from airflow_lineage_governance.graph.impact import downstream

NS = "iceberg://platform"


def event(kind: str, run: str, job: str, time: str, fields: dict | None = None, dataset: list | None = None,
          namespace: str = "platform") -> dict:
    outputs = []
    if fields is not None:
        facet = {"fields": {name: {"inputFields": [
            {"namespace": NS, "name": src.rsplit(".", 1)[0], "field": src.rsplit(".", 1)[1],
             "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "masking": False}]}
            for src in sources]} for name, sources in fields.items()},
            "dataset": [{"namespace": NS, "name": src.rsplit(".", 1)[0], "field": src.rsplit(".", 1)[1],
                         "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}]} for src in dataset or []]}
        outputs = [{"namespace": NS, "name": "out.t", "facets": {"columnLineage": facet}}]
    return {"eventType": kind, "eventTime": time, "run": {"runId": run}, "job": {"namespace": namespace, "name": job},
            "inputs": [], "outputs": outputs}


def write(path, lines: list) -> None:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


def test_bad_lines_are_counted_never_raised(tmp_path):
    path = tmp_path / "events.jsonl"
    good = event("COMPLETE", "r1", "dag.a", "2026-10-01T02:00:00Z", {"x": ["crm.learners.email"]})
    write(path, [good, "{not json", json.dumps([1, 2]), {"eventType": "COMPLETE"},
                 event("WEIRD", "r2", "dag.b", "2026-10-01T02:00:00Z"), good,
                 event("COMPLETE", "r3", "dag.c", "2026-10-01T02:00:00Z", namespace="elsewhere")])
    with path.open("a") as handle:
        handle.write('{"eventType": "COMPLETE", "run": {"runId"')  # truncated last line, no newline
    events, report = read_events(FileEventSource(path), job_namespace="platform")
    assert [e.run_id for e in events] == ["r1"]
    assert (report.malformed, report.truncated, report.wrong_shape, report.unknown_type, report.duplicates,
            report.other_namespace) == (1, 1, 2, 1, 1, 1)


def test_missing_file_is_no_events(tmp_path):
    events, report = read_events(FileEventSource(tmp_path / "none.jsonl"))
    assert events == [] and report.events == 0


def test_a_late_start_never_hides_a_complete(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [event("START", "r1", "dag.a", "2026-10-01T02:00:00Z"),
                 event("COMPLETE", "r1", "dag.a", "2026-10-01T02:01:00Z"),
                 event("START", "r1", "dag.a", "2026-10-01T02:02:00Z")])
    events, report = read_events(FileEventSource(path))
    final = final_events(events, report)
    assert final["r1"].event_type == "COMPLETE" and report.late == 1


def test_the_latest_run_of_a_job_defines_its_edges(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [event("COMPLETE", "r2", "dag.a", "2026-10-02T02:00:00Z", {"x": ["crm.learners.full_name"]},
                       ["crm.learners.status"]),
                 event("COMPLETE", "r1", "dag.a", "2026-10-01T02:00:00Z", {"x": ["crm.learners.email"]})])
    events, _ = read_events(FileEventSource(path))
    graph = build_graph(events, NS)
    assert {(e.source, e.target) for e in graph.edges()} == {("crm.learners.full_name", "out.t.x"),
                                                             ("crm.learners.status", "out.t")}
    assert downstream(graph, "crm.learners.status").rows == ["out.t"]
    assert downstream(graph, "crm.learners.status").columns_reached == ["out.t.x"]
