"""The governance runs and findings the store keeps, on both engines: a report recorded reads back equal, the latest
run is that of the latest logical date, a run recorded again replaces its findings, and one subject's findings are
listed run after run."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from airflow_lineage_governance.governance.findings import (
    lineage_unavailable,
    missing_complete,
    missing_metadata,
    target_run_unfinished,
    unaccounted_table,
    understated_classification,
)
from airflow_lineage_governance.governance.recorded_runs import record_report, report_of
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.migrations import migrate
from airflow_lineage_governance.store.schema import SCHEMA_VERSION

EMAIL = ColumnRef.parse("marketing.audience.email")
UNDERSTATED = understated_classification(
    EMAIL, "internal", "personal", ColumnRef.parse("crm.learners.email"), "DIRECT", "IDENTITY"
)
STRAY = unaccounted_table(TableRef.parse("marketing.stray"))


def report(run: str, day: int, *findings) -> GovernanceReport:
    coverage = {
        "target_dag_id": "platform_nightly",
        "target_run_id": f"scheduled__2026-10-{day:02d}",
        "tasks_with_lineage": 2,
        "event_source": "/data/events.jsonl",
        "lineage_from_earlier_runs": {"platform_nightly.a": "run x"},
    }
    return GovernanceReport("lineage_governance", run, f"2026-10-{day:02d}T02:00:00+00:00", list(findings), coverage)


def at(day: int, hour: int = 3) -> datetime:
    return datetime(2026, 10, day, hour, tzinfo=UTC)


def test_a_recorded_report_reads_back_equal_with_its_run(store_location):
    first = report(
        "scheduled__1",
        1,
        UNDERSTATED,
        STRAY,
        missing_metadata(TableRef.parse("marketing.evil"), {"<b>x</b>": None, "email": "personal"}),
        missing_complete("platform_nightly.late", "late", 2, "success", "the listener was off"),
        target_run_unfinished("platform_nightly", "scheduled__1", "timed out"),
        lineage_unavailable("http://marquez:5000", "unreachable"),
    )
    described = record_report(store_location, first, at(1))  # creates the store
    with LineageStore.open(store_location) as store:
        assert described == store.engine.description  # a URL without its password
        run = store.latest_governance_run()
        assert run is not None
        assert (run.dag_id, run.run_id, run.logical_date, run.checked_at) == (
            "lineage_governance",
            "scheduled__1",
            "2026-10-01T02:00:00+00:00",
            at(1),
        )
        assert (run.source, run.target_dag_id, run.target_run_id, run.errors, run.warnings) == (
            "/data/events.jsonl",
            "platform_nightly",
            "scheduled__2026-10-01",
            5,
            1,
        )
        found = store.governance_findings("lineage_governance", "scheduled__1")
        assert [(f.kind, f.severity, f.subject_kind, f.subject) for f in found] == [
            ("understated_classification", "error", "column", "marketing.audience.email"),
            ("unaccounted_table", "error", "table", "marketing.stray"),
            ("missing_metadata", "warning", "table", "marketing.evil"),
            ("missing_complete", "error", "job", "platform_nightly.late"),
            ("target_run_unfinished", "error", "run", "platform_nightly/scheduled__1"),
            ("lineage_unavailable", "error", "source", "http://marquez:5000"),
        ]
        assert found[0].message == (
            "marketing.audience.email: declared internal, lineage proposes personal "
            "(from crm.learners.email, DIRECT IDENTITY)"
        )
        assert [f.fields for f in found] == [f.to_dict() for f in first.findings]
        assert report_of(run, found) == first  # the coverage too, its figures as the report had them
        assert store.governance_findings("lineage_governance", "scheduled__9") == []
        assert store.governance_run("lineage_governance", "scheduled__9") is None


def test_the_same_run_recorded_again_replaces_its_findings(store_location):
    record_report(store_location, report("scheduled__1", 1, UNDERSTATED, STRAY), at(1))
    record_report(store_location, report("scheduled__1", 1, STRAY), at(1, 9))  # the Airflow run cleared and re-run
    with LineageStore.open(store_location) as store:
        assert [r.run_id for r in store.governance_runs()] == ["scheduled__1"]
        assert store.latest_governance_run().checked_at == at(1, 9)  # type: ignore[union-attr]
        assert [f.subject for f in store.governance_findings("lineage_governance", "scheduled__1")] == [
            "marketing.stray"
        ]
        assert store.stats()["rows"]["findings"] == 1 and store.stats()["rows"]["governance_runs"] == 1


def test_the_latest_run_is_of_the_latest_logical_date_and_a_subject_has_its_history(store_location):
    record_report(store_location, report("scheduled__2", 2, UNDERSTATED), at(2))
    record_report(store_location, report("scheduled__3", 3, STRAY), at(3))
    record_report(store_location, report("scheduled__1", 1, UNDERSTATED, STRAY), at(4))  # an older night re-run later
    other = GovernanceReport("other_governance", "manual__1", "2026-09-30T00:00:00+00:00", [UNDERSTATED], {})
    record_report(store_location, other, at(5))
    with LineageStore.open(store_location) as store:
        assert [(r.dag_id, r.run_id) for r in store.governance_runs()] == [
            ("lineage_governance", "scheduled__3"),
            ("lineage_governance", "scheduled__2"),
            ("lineage_governance", "scheduled__1"),
            ("other_governance", "manual__1"),
        ]
        assert store.latest_governance_run().run_id == "scheduled__3"  # type: ignore[union-attr]
        assert store.latest_governance_run("other_governance").run_id == "manual__1"  # type: ignore[union-attr]
        assert [r.run_id for r in store.governance_runs(limit=2)] == ["scheduled__3", "scheduled__2"]
        history = store.subject_history("marketing.audience.email")
        assert [(h.run.dag_id, h.run.run_id, h.finding.kind) for h in history] == [
            ("lineage_governance", "scheduled__2", "understated_classification"),
            ("lineage_governance", "scheduled__1", "understated_classification"),
            ("other_governance", "manual__1", "understated_classification"),
        ]
        assert [h.run.run_id for h in store.subject_history("marketing.stray")] == ["scheduled__3", "scheduled__1"]
        assert store.subject_history("marketing.nothing") == []


def test_a_store_with_no_governance_run_answers_none(store_location):
    with LineageStore.open(store_location, create=True) as store:
        assert store.latest_governance_run() is None and store.governance_runs() == []


def test_a_version_5_store_is_upgraded_in_place_when_a_run_is_recorded(store_location):
    engine = open_engine(store_location)
    migrate(engine, target=5)
    engine.close()
    record_report(store_location, report("scheduled__1", 1, STRAY), at(1))
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        assert [f.subject for f in store.governance_findings("lineage_governance", "scheduled__1")] == [
            "marketing.stray"
        ]


def test_the_cli_prints_the_runs_a_run_s_findings_and_a_subject_s_findings(store_location, capsys):
    from airflow_lineage_governance.cli.main import main

    record_report(store_location, report("scheduled__1", 1, UNDERSTATED, STRAY), at(1))
    record_report(store_location, report("scheduled__2", 2, UNDERSTATED), at(2))
    capsys.readouterr()

    assert main(["findings", "--store", store_location]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 1)[0] for line in lines[:2]] == [
        "lineage_governance/scheduled__2",
        "lineage_governance/scheduled__1",
    ]
    assert lines[0].startswith("lineage_governance/scheduled__2 (logical date 2026-10-02T02:00:00+00:00, checked ")
    assert lines[-1].startswith("2 governance runs in the lineage store ")

    assert main(["findings", "--store", store_location, "--run-id", "scheduled__1"]) == 1  # it found errors
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[1:3] for line in lines[:2]] == [
        ["understated_classification", "marketing.audience.email:"],
        ["unaccounted_table", "marketing.stray:"],
    ]
    assert lines[-1].endswith("; 2 findings")

    assert main(["findings", "--store", store_location, "--subject", "marketing.audience.email", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [(h["run_id"], h["finding"]["kind"]) for h in history] == [
        ("scheduled__2", "understated_classification"),
        ("scheduled__1", "understated_classification"),
    ]

    assert main(["findings", "--store", store_location, "--run-id", "scheduled__9"]) == 2
    said = capsys.readouterr()
    assert said.err.strip().endswith(
        "keeps no governance run scheduled__9 of lineage_governance; `lineage-governance findings` lists the runs it "
        "keeps."
    )
    assert "Traceback" not in said.err
