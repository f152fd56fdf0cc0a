"""What a real, shared Marquez did to the governance answers, reproduced with event
files: another deployment's job of the same name, event times rewritten, a backend that is down, and coverage
that mixed runs."""

from __future__ import annotations

from datetime import UTC, datetime

from airflow_lineage_governance.governance.checks import run_checks
from airflow_lineage_governance.governance.nightly import age, nightly_report
from airflow_lineage_governance.governance.store_session import StoredLineage
from airflow_lineage_governance.graph.events import FileEventSource, final_events, read_events
from airflow_lineage_governance.kinds import FindingKind
from tests.support.events import complete, event, output, source, write
from tests.support.governance import METADATA, synced_lineage

RULES = 'namespace = "iceberg://platform"\n'
CATALOG = [
    "crm.learners",
    "marketing.offers",
    "marketing.birthday_offers",
    "marketing.stray",
    "marketing.campaign_list",
]


def offers(
    namespace: str = "platform",
    time: str = "2026-10-01T02:00:00Z",
    run: str = "r1",
    filtered: bool = True,
    dag_run: str = "run-1",
) -> dict:
    """The platform's offers job: country and learner_id copied, every row filtered on date of birth."""
    rows = ["crm.learners.date_of_birth"] if filtered else []
    return complete(
        "p.offers",
        output(
            "marketing.offers",
            {"country": ["crm.learners.country"], "learner_id": ["crm.learners.learner_id"]},
            rows=rows,
        ),
        namespace=namespace,
        time=time,
        run=run,
        dag_run=dag_run,
    )


def birthday(dag_run: str = "run-1", time: str = "2026-10-01T02:01:00Z") -> dict:
    return complete(
        "p.birthday",
        output("marketing.birthday_offers", {"email": ["crm.learners.email"]}),
        time=time,
        run=f"b-{dag_run}",
        dag_run=dag_run,
    )


METADATA_WITH_DOB = METADATA.replace(
    'country = "internal", learner_id', 'country = "internal", date_of_birth = "personal", learner_id'
)


def load(tmp_path, events, **options) -> StoredLineage:
    (tmp_path / "lineage.toml").write_text(RULES)
    (tmp_path / "metadata.toml").write_text(METADATA_WITH_DOB)
    path = write(tmp_path / "events.jsonl", events)
    lineage, _ = synced_lineage(
        tmp_path, path, rules_path=tmp_path / "lineage.toml", metadata_path=tmp_path / "metadata.toml", **options
    )
    return lineage


def kinds(found) -> list[str]:
    return sorted(f"{f.kind}:{f.column or f.table or f.job or ''}" for f in found)


def test_a_staging_complete_of_a_same_named_job_changes_no_finding(tmp_path):
    ours = [offers(), birthday()]
    baseline = run_checks(load(tmp_path, ours, job_namespaces=["platform"]), CATALOG)
    assert len(baseline) == 5  # 2 understated (FILTER on date_of_birth), 2 unaccounted, 1 missing metadata
    staging = offers(namespace="staging", time="2026-10-01T03:00:00Z", run="s1", filtered=False)
    scoped = load(tmp_path, [*ours, staging], job_namespaces=["platform"])
    assert kinds(run_checks(scoped, CATALOG)) == kinds(baseline)
    assert scoped.report.other_namespace == 1  # counted, never mixed in
    unscoped = load(tmp_path, [*ours, staging])  # what happened on a shared Marquez: 5 findings became 3
    assert len(run_checks(unscoped, CATALOG)) == 3


def test_several_job_namespaces_can_be_ours(tmp_path):
    other = complete(
        "q.copy", output("marketing.stray", {"country": ["crm.learners.country"]}), namespace="platform-b", run="q1"
    )
    governance = load(
        tmp_path, [offers(), other, offers(namespace="staging", run="s1")], job_namespaces=["platform", "platform-b"]
    )
    assert governance.report.other_namespace == 1
    assert "unaccounted_table:marketing.stray" not in kinds(run_checks(governance, CATALOG))


def test_event_times_are_compared_as_instants_not_text(tmp_path):
    # Marquez gives back `.100000+00:00` as `.1Z` and `.150000+00:00` as `.15Z`; as text ".1Z" sorts after ".15Z".
    older = offers(time="2026-10-01T02:00:46.1Z", run="old", filtered=False)
    newer = offers(time="2026-10-01T02:00:46.15Z", run="new", filtered=True)
    for order in ([older, newer], [newer, older]):
        governance = load(tmp_path, order, job_namespaces=["platform"])
        assert governance.graph.jobs["p.offers"].run_id == "new"
        assert governance.graph.jobs["p.offers"].at == datetime(2026, 10, 1, 2, 0, 46, 150000, tzinfo=UTC)


def test_the_same_instant_written_two_ways_is_one_event_and_complete_beats_start(tmp_path):
    path = write(
        tmp_path / "events.jsonl",
        [
            event("COMPLETE", "p.a", run="r1", time="2026-10-01T02:00:46.541480+00:00"),
            event("START", "p.a", run="r1", time="2026-10-01T02:00:46.54148Z"),
            event(
                "COMPLETE", "p.a", run="r1", time="2026-10-01T02:00:46.54148Z"
            ),  # the same event, as Marquez sends it
            event("START", "p.b", run="r2", time="2026-10-01T04:00:00+02:00"),
            event("COMPLETE", "p.b", run="r2", time="2026-10-01T02:00:00Z"),
        ],
    )
    events, report = read_events(FileEventSource(path))
    assert report.duplicates == 1
    final = final_events(events, report)
    assert final["r1"].event_type == "COMPLETE" and final["r2"].event_type == "COMPLETE"


def test_a_time_that_is_no_time_is_wrong_shaped(tmp_path):
    path = write(
        tmp_path / "events.jsonl",
        [event("COMPLETE", "p.a", time="yesterday"), event("COMPLETE", "p.b", time="2026-10-01T02:00:00")],
    )
    events, report = read_events(FileEventSource(path))
    assert [e.job_name for e in events] == ["p.b"] and report.wrong_shape == 1
    assert events[0].at.tzinfo is UTC  # no offset: read as UTC


VERDICT = {
    "target_dag_id": "p",
    "target_run_id": "run-2",
    "finished": True,
    "backend_problem": None,
    "task_states": {"offers": "success", "birthday": "success"},
    "missing": [
        {"kind": "missing_complete", "job": "p.offers", "task_id": "offers", "try_number": 1, "state": "success"}
    ],
}


def test_a_backend_that_is_down_is_one_finding_and_no_false_or_clean_checks(tmp_path):
    (tmp_path / "lineage.toml").write_text(RULES)
    (tmp_path / "metadata.toml").write_text(METADATA_WITH_DOB)
    governance, problem = synced_lineage(
        tmp_path, "http://127.0.0.1:9", rules_path=tmp_path / "lineage.toml", metadata_path=tmp_path / "metadata.toml"
    )
    assert problem is not None and "is unreachable" in problem
    report = nightly_report(
        VERDICT, governance, CATALOG, dag_id="g", run_id="r", logical_date="l", backend_problem=problem
    )
    assert [f.kind for f in report.findings] == [FindingKind.MISSING_COMPLETE, FindingKind.LINEAGE_UNAVAILABLE]
    unavailable = report.findings[1]
    assert unavailable.evidence["reason"] == problem
    assert unavailable.evidence["skipped"] == ["understated_classification", "unaccounted_table", "missing_metadata"]
    assert unavailable.sentence().startswith("http://127.0.0.1:9: the lineage events could not be read (Marquez at")
    assert report.coverage["lineage_backend"] == problem
    assert len(report.errors) == 2


def test_coverage_counts_the_target_run_and_says_how_old_earlier_answers_are(tmp_path):
    # The offers task's events of tonight's run were lost: its lineage is yesterday's, and the report says so.
    governance = load(
        tmp_path,
        [
            offers(dag_run="run-1", time="2026-10-01T02:00:00Z"),
            birthday(dag_run="run-1"),
            birthday(dag_run="run-2", time="2026-10-02T02:01:00Z"),
        ],
        job_namespaces=["platform"],
    )
    report = nightly_report(
        VERDICT,
        governance,
        CATALOG,
        dag_id="g",
        run_id="r",
        logical_date="l",
        now=datetime(2026, 10, 2, 5, 30, tzinfo=UTC),
    )
    coverage = report.coverage
    assert coverage["events_read"] == 3 and coverage["events_of_target_run"] == 1
    assert coverage["tasks_with_lineage"] == 1
    assert coverage["columns_with_lineage"] == 1  # birthday's email, from run-2; not offers' columns from run-1
    assert coverage["lineage_from_earlier_runs"] == {"p.offers": "run run-1, 2026-10-01T02:00:00+00:00, 1 d 3 h old"}


def test_ages_read_as_a_person_reads_them():
    assert [age(s) for s in (5, 600, 3 * 3600 + 300, 2 * 86400 + 4 * 3600, -3)] == [
        "5 s",
        "10 min",
        "3 h 5 min",
        "2 d 4 h",
        "0 s",
    ]


def test_sources_keep_their_namespace_field():
    assert source("crm.learners.email")["namespace"] == "iceberg://platform"
