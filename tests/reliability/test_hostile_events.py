"""Hostile event files: malformed JSON, a truncated last line, wrong types, unknown event types, duplicated and
out-of-order events, and a 100 MB file. Counted in the report, never a crash, never a missed finding."""

from __future__ import annotations

import json
import random
import time

import pytest

from airflow_lineage_governance.governance.classify import understated
from airflow_lineage_governance.governance.runs import missing_completes
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.refs import ColumnRef

pytestmark = pytest.mark.reliability
NS = "iceberg://platform"


def complete(job: str, run_id: str, time_: str, dag_run: str, try_number: int = 1, event_type: str = "COMPLETE"):
    return {
        "eventType": event_type,
        "eventTime": time_,
        "producer": "test",
        "run": {
            "runId": run_id,
            "facets": {"airflow": {"dagRun": {"run_id": dag_run}, "taskInstance": {"try_number": try_number}}},
        },
        "job": {"namespace": "platform", "name": job},
        "inputs": [],
        "outputs": [
            {
                "namespace": NS,
                "name": "marketing.birthday_offers",
                "facets": {
                    "columnLineage": {
                        "fields": {
                            "learner_id": {
                                "inputFields": [
                                    {
                                        "namespace": NS,
                                        "name": "crm.learners",
                                        "field": "learner_id",
                                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                                    }
                                ]
                            }
                        },
                        "dataset": [
                            {
                                "namespace": NS,
                                "name": "crm.learners",
                                "field": "date_of_birth",
                                "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
                            }
                        ],
                    }
                },
            }
        ],
    }


GARBAGE = [
    "{not json",
    "[1, 2, 3]",
    '"a string"',
    "null",
    '{"eventType": 3, "run": "x"}',
    '{"eventType": "COMPLETE", "run": {"runId": 7}, "job": {"name": "p.x"}, "eventTime": "t"}',
    json.dumps(
        {
            "eventType": "TELEPORT",
            "eventTime": "2026-10-01T02:00:00Z",
            "run": {"runId": "u"},
            "job": {"namespace": "platform", "name": "p.weird"},
        }
    ),
]
WRONG_PARTS = (
    '{"eventType": "COMPLETE", "outputs": "not a list", "inputs": [3], "run": {"runId": "w"}, '
    '"job": {"namespace": "platform", "name": "p.w"}, "eventTime": "2026-10-01T02:00:00Z"}'
)


def test_a_100_megabyte_file_of_mostly_garbage_keeps_every_finding(tmp_path):
    path = tmp_path / "events.jsonl"
    good = complete("p.birthday_offers", "r1", "2026-10-01T02:05:00Z", "run-1")
    start_late = complete("p.birthday_offers", "r1", "2026-10-01T02:06:00Z", "run-1", event_type="START")
    rng = random.Random(5)
    counts = {"lines": 0}
    with path.open("w") as handle:
        handle.write(json.dumps(start_late) + "\n")  # out of order: a START after the COMPLETE, read first
        handle.write(json.dumps(good) + "\n")
        handle.write(json.dumps(good) + "\n")  # duplicated
        handle.write(WRONG_PARTS + "\n")  # a well-formed event whose datasets are of the wrong types
        padding = "x" * 2000
        while handle.tell() < 100 * 1024 * 1024:
            line = rng.choice(GARBAGE)
            handle.write((line if rng.random() < 0.5 else line + padding) + "\n")
            counts["lines"] += 1
        handle.write('{"eventType": "COMPLETE", "run": {"runId": "cut')  # truncated last line
    assert path.stat().st_size >= 100 * 1024 * 1024

    started = time.perf_counter()
    governance = StoredGovernance.from_events(path, job_namespaces=["platform"])
    seconds = time.perf_counter() - started
    report = governance.report()
    assert report.events == 3 and report.duplicates == 1 and report.truncated == 1
    assert report.malformed + report.wrong_shape + report.unknown_type + report.other_namespace == counts["lines"]
    assert report.unknown_type > 0 and report.wrong_shape > 0 and report.malformed > 0
    found = understated(governance.proposals(), governance.rules)
    assert [(u.column, u.proposed, u.decided_by.source) for u in found] == [
        (
            ColumnRef.parse("marketing.birthday_offers.learner_id"),
            "personal",
            ColumnRef.parse("crm.learners.date_of_birth"),
        )
    ]
    states = {"birthday_offers": "success", "course_performance": "success"}
    missing = missing_completes(states, governance.store.run_events("p", "run-1"), "p", "run-1")
    assert [m.evidence["task_id"] for m in missing] == ["course_performance"]
    (tmp_path / "figures.json").write_text(json.dumps({"megabytes": 100, "seconds": round(seconds, 1)}))
    assert seconds < 60
