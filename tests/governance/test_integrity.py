"""The integrity and freshness figures of the coverage, on in-process events."""

from __future__ import annotations

from datetime import UTC, datetime

from airflow_lineage_governance.governance.integrity import integrity, late_events
from airflow_lineage_governance.graph.events import to_run_event
from tests.support.events import NS, complete, event, extraction_error, output
from tests.support.governance import governance_of


def versioned(table: str) -> dict:
    found = output(table, {"id": ["crm.learners.learner_id"]})
    found["facets"]["version"] = {"datasetVersion": "42"}
    return found


def test_the_figures_of_complete_runs_tables_parse_failures_and_late_events(tmp_path):
    read = {"namespace": NS, "name": "crm.learners", "facets": {"version": {"datasetVersion": "7"}}}
    events = [
        complete("p.good", versioned("marketing.good"), inputs=[read], time="2026-10-01T02:00:00Z", dag_run="r"),
        complete(
            "p.unversioned",
            output("marketing.bare", {"id": ["crm.learners.learner_id"]}),
            inputs=[read],
            time="2026-10-01T02:00:00Z",
            dag_run="r",
        ),
        complete("p.export", time="2026-10-01T02:00:00Z", dag_run="r"),
        # a first MERGE reads its own target before any snapshot of it exists: only that input has no version
        complete(
            "p.merge",
            versioned("marketing.dim"),
            inputs=[read, {"namespace": NS, "name": "marketing.dim"}],
            time="2026-10-01T02:00:00Z",
            dag_run="r",
        ),
        complete("q.old", versioned("marketing.old"), inputs=[read], time="2026-09-01T02:00:00Z", dag_run="s"),
        event("FAIL", "p.broken", dag_run="r", run_facets=extraction_error()),
        event("START", "p.good", run="p.good-2026-10-01T02:00:00Z", time="2026-10-01T01:59:00Z", dag_run="r"),
    ]
    governance = governance_of(tmp_path, *events)
    received = [to_run_event(raw) for raw in events]  # in the order they were read
    now = datetime(2026, 10, 2, tzinfo=UTC)
    catalog = ["crm.learners", "marketing.dim", "marketing.good", "marketing.bare", "marketing.old", "billing.refunds"]
    figures = integrity(governance.graph, received, catalog, now, dag_id="p")
    assert figures == {
        "complete_runs_checked": 4,
        "complete_runs_missing_inputs": ["p.export"],
        "complete_runs_missing_outputs": ["p.export"],
        "complete_runs_missing_versions": ["p.unversioned"],
        "freshness_days": 7,
        "tables_without_recent_edges": ["billing.refunds", "marketing.old"],
        "parse_failures_in_events": 1,
        "events_late": 1,
    }  # the START read after its run's COMPLETE
    assert integrity(governance.graph, received, None, now)["complete_runs_checked"] == 5
    assert "tables_without_recent_edges" not in integrity(governance.graph, [], None, now)


def test_late_is_out_of_order_within_a_run():
    first = to_run_event(event("START", "p.a", run="r1", time="2026-10-01T02:00:00Z"))
    done = to_run_event(event("COMPLETE", "p.a", run="r1", time="2026-10-01T02:05:00Z"))
    other = to_run_event(event("START", "p.b", run="r2", time="2026-10-01T01:00:00Z"))
    assert late_events([first, done, other]) == 0
    assert late_events([done, first, other]) == 1
