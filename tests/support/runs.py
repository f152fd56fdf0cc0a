"""The events of one DAG run's tasks: a success, a retry, a failure whose lineage could not be read, a crash."""

from __future__ import annotations

from airflow_lineage_governance.graph.events import to_run_event
from tests.support.events import event, extraction_error


def received(*raw):
    return [to_run_event(r) for r in raw]


EVENTS = received(
    event("START", "p.good", dag_run="run-1"),
    event("COMPLETE", "p.good", dag_run="run-1"),
    event("START", "p.flaky", dag_run="run-1", try_number=1),
    event("FAIL", "p.flaky", dag_run="run-1", try_number=1),
    event("START", "p.flaky", dag_run="run-1", try_number=2),
    event("START", "p.broken", dag_run="run-1"),
    event("FAIL", "p.broken", dag_run="run-1", run_facets=extraction_error()),
    event(
        "FAIL",
        "p.crashed",
        dag_run="run-1",
        run_facets={
            "errorMessage": {
                "message": "Lineage cannot be read: only the text says so",
                "programmingLanguage": "python",
            }
        },
    ),
    event("FAIL", "p.other_run", dag_run="run-0", run_facets=extraction_error()),
    event("COMPLETE", "q.good", dag_run="run-1"),
)
