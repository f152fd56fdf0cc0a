"""Runs with no COMPLETE event, and runs whose lineage could not be read (by the extractionError facet)."""

from __future__ import annotations

from airflow_lineage_governance.governance.runs import events_of_run, missing_completes, parse_failures
from airflow_lineage_governance.kinds import FindingKind
from tests.support.events import event, extraction_error
from tests.support.runs import EVENTS, received


def test_events_of_run_match_dag_and_run():
    assert {e.job_name for e in events_of_run(EVENTS, "p", "run-1")} == {"p.good", "p.flaky", "p.broken", "p.crashed"}


def test_a_success_with_no_complete_is_missing_with_its_latest_try():
    states = {"good": "success", "flaky": "success", "broken": "failed", "skipped": "skipped", "gone": "success"}
    missing = missing_completes(states, EVENTS, "p", "run-1", reason="the wait ended")
    assert [f.to_dict() for f in missing] == [
        {
            "kind": "missing_complete",
            "job": "p.flaky",
            "task_id": "flaky",
            "try_number": 2,
            "state": "success",
            "reason": "the wait ended",
        },
        {
            "kind": "missing_complete",
            "job": "p.gone",
            "task_id": "gone",
            "try_number": None,
            "state": "success",
            "reason": "the wait ended",
        },
    ]
    assert all(f.kind is FindingKind.MISSING_COMPLETE for f in missing)


def test_parse_failures_are_fail_events_with_the_extraction_error_facet():
    assert parse_failures(EVENTS, "p", "run-1") == ["p.broken"]
    assert parse_failures(EVENTS, "p", "run-0") == ["p.other_run"]
    complete_with_facet = received(event("COMPLETE", "p.x", dag_run="run-2", run_facets=extraction_error()))
    assert parse_failures(complete_with_facet, "p", "run-2") == []


def test_each_map_index_of_a_mapped_task_is_held_against_a_complete_of_its_job():
    mapped = received(
        *(event("COMPLETE", "p.load", dag_run="run-1", run=f"load-{i}") for i in range(3)),
        event("START", "p.load", dag_run="run-1", run="load-3"),
        event("COMPLETE", "p.item_2", dag_run="run-1"),
    )
    all_sent = {"load_0": "success", "load_1": "success", "load_2": "success", "item_2": "success"}
    assert missing_completes(all_sent, mapped, "p", "run-1") == []
    one_short = {**all_sent, "load_3": "success", "load_4": "failed"}
    assert [f.to_dict() for f in missing_completes(one_short, mapped, "p", "run-1")] == [
        {
            "kind": "missing_complete",
            "job": "p.load",
            "task_id": "load",
            "try_number": 1,
            "state": "success",
            "reason": "1 of its 4 successful map indexes have no COMPLETE event",
        }
    ]
