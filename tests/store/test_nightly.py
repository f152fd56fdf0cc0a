"""The nightly report answered from the lineage store on both engines, after `store sync` brought the events in: the
findings and coverage recorded when the events were read in memory, late events told across syncs, and a source that
cannot be read reported as lineage_unavailable over what the store held."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from airflow_lineage_governance.governance.nightly import nightly_report
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.store.sync import SyncReport, sync
from tests.support.events import complete, event, extraction_error, output, write
from tests.support.governance import METADATA

CATALOG = ["crm.learners", "marketing.offers", "marketing.audience", "marketing.stray"]
NOW = datetime(2026, 10, 3, 3, tzinfo=UTC)
VERDICT = {
    "target_dag_id": "p",
    "target_run_id": "run-2",
    "finished": True,
    "backend_problem": None,
    "task_states": {"offers": "success", "audience": "success", "broken": "failed"},
    "missing": [],
}
HISTORY = [
    complete(
        "p.offers",
        output("marketing.offers", {"country": ["crm.learners.country"]}),
        run="o1",
        time="2026-10-01T02:00:00Z",
        dag_run="run-1",
    ),
    complete(
        "p.audience",
        output("marketing.audience", {"email": ["crm.learners.email"]}),
        run="a1",
        time="2026-10-01T02:10:00Z",
        dag_run="run-1",
    ),
    event("START", "p.offers", run="o2", time="2026-10-02T02:00:00Z", dag_run="run-2"),
    complete(
        "p.offers",
        output(
            "marketing.offers",
            {"country": ["crm.learners.country"], "learner_id": ["crm.learners.learner_id"]},
            rows=["crm.learners.date_of_birth"],
        ),
        run="o2",
        time="2026-10-02T02:05:00Z",
        dag_run="run-2",
    ),
    event("FAIL", "p.broken", run="b2", time="2026-10-02T02:06:00Z", dag_run="run-2", run_facets=extraction_error()),
    complete("q.other", output("marketing.other", {"x": ["crm.learners.email"]}), run="x1", namespace="elsewhere"),
]


def governance_files(folder: Path) -> dict[str, Path]:
    (folder / "lineage.toml").write_text('namespace = "iceberg://platform"\n')
    offers = 'columns = { learner_id = "internal", country = "internal" }'
    assert offers in METADATA
    (folder / "metadata.toml").write_text(
        METADATA.replace(offers, offers.replace('country = "internal"', 'country = "public"'))
    )
    return {"rules_path": folder / "lineage.toml", "metadata_path": folder / "metadata.toml"}


def stored_report(location: str, source: str, files: dict[str, Path], synced: SyncReport | None, problem=None):
    with StoredGovernance.open(location, job_namespaces=["platform"], **files) as governance:
        lineage = governance.nightly(source, synced)
        return nightly_report(
            VERDICT,
            lineage,
            CATALOG,
            dag_id="g",
            run_id="r",
            logical_date="2026-10-02",
            now=NOW,
            backend_problem=problem,
        )


# The report the events of HISTORY gave when they were read in memory, before the store.
RECORDED_FINDINGS = [
    {
        "kind": "understated_classification",
        "column": "marketing.offers.country",
        "declared": "public",
        "proposed": "internal",
        "decided_by": {"source": "crm.learners.country", "type": "DIRECT", "subtype": "IDENTITY"},
    },
    {"kind": "unaccounted_table", "table": "marketing.stray"},
    {"kind": "missing_metadata", "table": "marketing.audience", "proposals": {"email": "personal"}},
]
RECORDED_COVERAGE = {
    "target_dag_id": "p",
    "target_run_id": "run-2",
    "tasks_scheduled": 3,
    "tasks_succeeded": 2,
    "tasks_with_lineage": 2,
    "runs_with_lineage_share": 1.0,
    "columns_with_lineage": 2,
    "parse_failures": 1,
    "events_of_target_run": 3,
    "events_read": 5,
    "events_malformed": 0,
    "events_duplicated": 0,
    "events_late": 0,
    "events_other_namespace": 1,
    "lineage_backend": "reachable",
    "complete_runs_checked": 2,
    "complete_runs_missing_inputs": ["p.audience", "p.offers"],
    "complete_runs_missing_outputs": [],
    "complete_runs_missing_versions": ["p.audience", "p.offers"],
    "freshness_days": 7,
    "tables_without_recent_edges": ["crm.learners", "marketing.stray"],
    "parse_failures_in_events": 1,
    "lineage_from_earlier_runs": {"p.audience": "run run-1, 2026-10-01T02:10:00+00:00, 2 d 0 h old"},
}


def test_the_store_answers_the_report_the_events_in_memory_answered(store_location, tmp_path):
    files = governance_files(tmp_path)
    events = write(tmp_path / "events.jsonl", HISTORY)
    synced = sync(store_location, events, create=True)
    from_store = stored_report(store_location, str(events), files, synced)
    assert [f.to_dict() for f in from_store.findings] == RECORDED_FINDINGS
    assert from_store.coverage == {**RECORDED_COVERAGE, "event_source": str(events)}
    coverage = from_store.coverage
    assert (coverage["events_read"], coverage["events_other_namespace"], coverage["events_of_target_run"]) == (5, 1, 3)
    assert (coverage["parse_failures"], coverage["parse_failures_in_events"], coverage["columns_with_lineage"]) == (
        1,
        1,
        2,
    )
    assert coverage["lineage_from_earlier_runs"] == {"p.audience": "run run-1, 2026-10-01T02:10:00+00:00, 2 d 0 h old"}
    assert GovernanceReport.from_dict(from_store.to_dict()) == from_store


def test_an_event_stored_after_a_later_one_of_its_run_is_late(store_location, tmp_path):
    files = governance_files(tmp_path)
    events = write(tmp_path / "events.jsonl", HISTORY[3:5])
    sync(store_location, events, create=True)
    write(events, [*HISTORY[3:5], HISTORY[2]])  # the START of o2 arrives after its COMPLETE
    synced = sync(store_location, events)
    assert (synced.read, synced.added, synced.duplicates) == (1, 1, 0)  # only the line appended is read
    report = stored_report(store_location, str(events), files, synced)
    assert report.coverage["events_late"] == 1
    assert report.coverage["events_duplicated"] == 0  # what the sync read that the store held already


def test_a_source_that_cannot_be_read_is_lineage_unavailable_over_what_the_store_held(store_location, tmp_path):
    files = governance_files(tmp_path)
    events = write(tmp_path / "events.jsonl", HISTORY)
    sync(store_location, events, create=True)
    array = tmp_path / "array.json"
    array.write_text("[]\n")
    try:
        sync(store_location, array)
    except EventSourceError as error:
        problem = str(error)
    report = stored_report(store_location, str(array), files, None, problem)
    assert [f.to_dict() for f in report.findings] == [
        {
            "kind": "lineage_unavailable",
            "source": str(array),
            "reason": f"{array}: is a JSON array, not JSON Lines; write one event per line, as the OpenLineage file "
            "transport does.",
            "skipped": ["understated_classification", "unaccounted_table", "missing_metadata"],
        }
    ]
    assert report.coverage["lineage_backend"] == problem
    assert report.coverage["events_read"] == 5 and report.coverage["events_of_target_run"] == 3


def test_a_parse_failure_is_counted_however_its_facets_name_is_written(store_location, tmp_path):
    failed = event(
        "FAIL", "p.broken", run="b3", time="2026-10-02T02:07:00Z", dag_run="run-2", run_facets=extraction_error()
    )
    line = json.dumps(failed).replace('"extractionError"', '"extraction\\u0045rror"')
    events = write(tmp_path / "events.jsonl", [HISTORY[4], line, HISTORY[3]])
    sync(store_location, events, create=True)
    with StoredGovernance.open(store_location, job_namespaces=["platform"], **governance_files(tmp_path)) as governance:
        lineage = governance.nightly(str(events))
        assert (lineage.parse_failure_runs("p"), lineage.parse_failure_runs("q")) == (2, 0)
