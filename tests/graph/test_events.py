"""Reading events tolerantly: pure functions on files written here."""

from __future__ import annotations

import json

from airflow_lineage_governance.graph.events import (
    FileEventSource,
    final_events,
    read_events,
    to_run_event,
)
from airflow_lineage_governance.graph.sources import open_event_source
from tests.support.events import Listed, complete, event, extraction_error, output, write


def test_bad_lines_are_counted_never_raised(tmp_path):
    path = tmp_path / "events.jsonl"
    good = complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="r1")
    write(
        path,
        [
            good,
            "{not json",
            json.dumps([1, 2]),
            {"eventType": "COMPLETE"},
            event("WEIRD", "dag.b", run="r2"),
            good,
            complete("dag.c", run="r3", namespace="elsewhere"),
        ],
    )
    with path.open("a") as handle:
        handle.write('{"eventType": "COMPLETE", "run": {"runId"')  # truncated last line, no newline
    events, report = read_events(FileEventSource(path), job_namespace="platform")
    assert [e.run_id for e in events] == ["r1"]
    assert (
        report.malformed,
        report.truncated,
        report.wrong_shape,
        report.unknown_type,
        report.duplicates,
        report.other_namespace,
    ) == (1, 1, 2, 1, 1, 1)


def test_missing_file_is_no_events(tmp_path):
    events, report = read_events(FileEventSource(tmp_path / "none.jsonl"))
    assert events == [] and report.events == 0
    assert report.problems == [f"{tmp_path / 'none.jsonl'} does not exist: no event was ever written there"]


def test_a_late_start_never_hides_a_complete(tmp_path):
    path = tmp_path / "events.jsonl"
    write(
        path,
        [
            event("START", "dag.a", run="r1", time="2026-10-01T02:00:00Z"),
            event("COMPLETE", "dag.a", run="r1", time="2026-10-01T02:01:00Z"),
            event("START", "dag.a", run="r1", time="2026-10-01T02:02:00Z"),
        ],
    )
    events, report = read_events(FileEventSource(path))
    final = final_events(events, report)
    assert final["r1"].event_type == "COMPLETE" and report.late == 1


def test_only_the_latest_complete_of_a_job_keeps_its_whole_event(tmp_path):
    path = write(
        tmp_path / "events.jsonl",
        [
            complete("dag.a", run="r1", time="2026-10-01T02:00:00Z"),
            complete("dag.a", run="r2", time="2026-10-02T02:00:00Z"),
            event("START", "dag.a", run="r3", time="2026-10-03T02:00:00Z"),
        ],
    )
    events, _ = read_events(FileEventSource(path))
    assert [(e.run_id, e.raw is not None) for e in events] == [("r1", False), ("r2", True), ("r3", False)]


def test_run_facets_give_the_dag_run_try_and_extraction_error():
    failed = to_run_event(event("FAIL", "p.t", dag_run="run-1", try_number=3, run_facets=extraction_error()))
    assert failed is not None
    assert (failed.dag_run_id, failed.try_number, failed.extraction_failed) == ("run-1", 3, True)
    plain = to_run_event(
        event(
            "FAIL",
            "p.t",
            run_facets={
                "errorMessage": {
                    "message": "Lineage cannot be read: said only in text",
                    "programmingLanguage": "python",
                }
            },
        )
    )
    assert plain is not None and plain.extraction_failed is False  # recognised by the facet, never by text
    odd = to_run_event(event("FAIL", "p.t", run_facets={"extractionError": "not an object"}))
    assert odd is not None and odd.extraction_failed is False


def test_wrong_shapes_are_no_run_event():
    assert to_run_event([1]) is None
    assert to_run_event({"run": {"runId": 7}, "job": {"name": "x"}, "eventTime": "t", "eventType": "COMPLETE"}) is None
    assert to_run_event({"run": {"runId": "r"}, "job": {"name": ""}, "eventTime": "t", "eventType": "START"}) is None


def test_open_event_source_picks_file_or_marquez(tmp_path):
    assert isinstance(open_event_source(tmp_path / "e.jsonl"), FileEventSource)
    assert type(open_event_source("http://127.0.0.1:1")).__name__ == "MarquezEventSource"


def test_only_each_jobs_latest_complete_keeps_its_whole_event_from_a_file_or_a_source_of_dicts(tmp_path):
    """The reader keeps the line of each job's latest COMPLETE (one object, not the parsed event) and parses it
    again once all are read: the latest holds its event as written, whatever the order the jobs' runs came in."""
    runs = [
        complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="a1", time="2026-10-01T02:00:00Z"),
        complete("dag.b", output("out.u", {"y": ["out.t.x"]}), run="b2", time="2026-10-02T02:00:00Z"),
        complete("dag.a", output("out.t", {"x": ["crm.learners.name"]}), run="a3", time="2026-10-03T02:00:00Z"),
        complete("dag.b", output("out.u", {"y": ["out.t.x"]}), run="b1", time="2026-10-01T02:00:00Z"),
    ]
    path = write(tmp_path / "events.jsonl", runs)

    for source in (FileEventSource(path), Listed(runs)):
        events, _ = read_events(source)
        assert {e.run_id: e.raw for e in events} == {"a1": None, "b2": runs[1], "a3": runs[2], "b1": None}
