"""One Finding type: its JSON shape per kind, its round trip as plain data, its sentences and the report."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.governance import findings
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.governance.report import GovernanceReport, markdown
from airflow_lineage_governance.kinds import EdgeType, FindingKind, Severity, Subtype
from airflow_lineage_governance.refs import ColumnRef, TableRef

C = ColumnRef.parse
T = TableRef.parse

EVERY_KIND = [
    findings.target_run_unfinished("platform_nightly", "scheduled__1", "no run exists"),
    findings.missing_complete("p.review_corpus", "review_corpus", 2, "success", "the backend was unreachable"),
    findings.missing_complete("p.export", "export", None, "success"),
    findings.unaccounted_table(T("marketing.campaign_list")),
    findings.understated_classification(
        C("marketing.offers.country"), "internal", "personal", C("crm.l.dob"), EdgeType.INDIRECT, Subtype.FILTER
    ),
    findings.missing_metadata(T("a.b.audience"), {"email": "personal", "note": None}),
    findings.lineage_unavailable("http://marquez:5000", "Marquez at http://marquez:5000 is unreachable"),
]


def test_the_json_shape_of_every_kind():
    assert [f.to_dict() for f in EVERY_KIND] == [
        {
            "kind": "target_run_unfinished",
            "dag_id": "platform_nightly",
            "run_id": "scheduled__1",
            "reason": "no run exists",
        },
        {
            "kind": "missing_complete",
            "job": "p.review_corpus",
            "task_id": "review_corpus",
            "try_number": 2,
            "state": "success",
            "reason": "the backend was unreachable",
        },
        {"kind": "missing_complete", "job": "p.export", "task_id": "export", "try_number": None, "state": "success"},
        {"kind": "unaccounted_table", "table": "marketing.campaign_list"},
        {
            "kind": "understated_classification",
            "column": "marketing.offers.country",
            "declared": "internal",
            "proposed": "personal",
            "decided_by": {"source": "crm.l.dob", "type": "INDIRECT", "subtype": "FILTER"},
        },
        {"kind": "missing_metadata", "table": "a.b.audience", "proposals": {"email": "personal", "note": None}},
        {
            "kind": "lineage_unavailable",
            "source": "http://marquez:5000",
            "reason": "Marquez at http://marquez:5000 is unreachable",
            "skipped": ["understated_classification", "unaccounted_table", "missing_metadata"],
        },
    ]
    assert [list(f.to_dict()) for f in EVERY_KIND][4] == ["kind", "column", "declared", "proposed", "decided_by"]


def test_plain_data_round_trips_through_json():
    for finding in EVERY_KIND:
        data = json.loads(json.dumps(finding.to_dict()))
        assert Finding.from_dict(data) == finding
        assert Finding.from_dict(data).to_dict() == finding.to_dict()
    assert Finding.from_dict({"kind": "unaccounted_table", "table": "a.b.c"}).table == TableRef(("a", "b"), "c")
    with pytest.raises(ValueError):
        Finding.from_dict({"kind": "no_such_kind"})


def test_severity_comes_from_the_kind():
    assert [f.severity for f in EVERY_KIND] == [Severity.ERROR] * 5 + [Severity.WARNING, Severity.ERROR]
    assert all(f.severity is f.kind.severity for f in EVERY_KIND)


def test_sentences():
    assert [f.sentence() for f in EVERY_KIND] == [
        "platform_nightly: its run had not finished when the wait ended (no run exists)",
        "p.review_corpus: the task succeeded, try 2, but no COMPLETE lineage event arrived "
        "(the backend was unreachable)",
        "p.export: the task succeeded, but no COMPLETE lineage event arrived",
        "marketing.campaign_list: in the catalog, but no declared source and no job's output in the lineage",
        "marketing.offers.country: declared internal, lineage proposes personal (from crm.l.dob, INDIRECT FILTER)",
        "a.b.audience: written with no metadata; lineage proposes email personal, note unknown",
        "http://marquez:5000: the lineage events could not be read (Marquez at http://marquez:5000 is "
        "unreachable), so the checks understated_classification, unaccounted_table, missing_metadata were "
        "skipped: not passed, not failed",
    ]
    assert EVERY_KIND[3].line() == (
        "unaccounted table: marketing.campaign_list: in the catalog, but no declared "
        "source and no job's output in the lineage"
    )
    assert {f.kind for f in EVERY_KIND + DESIGN_KINDS} == set(FindingKind)


EDGE = {"source": "crm.learners.country", "target": "marketing.offers.country", "type": "DIRECT", "subtype": "IDENTITY"}
DESIGN_KINDS = [
    findings.sql_hash_mismatch("p.offers", "a" * 16, "b" * 16, "run-1", "2026-10-01T02:00:00Z"),
    findings.design_difference(
        FindingKind.DESIGNED_NOT_OBSERVED,
        "a branch not taken",
        job="p.offers",
        evidence={"dataset_edges": [], "column_edges": [EDGE] * 4, "run": None},
    ),
    findings.design_difference(
        FindingKind.OBSERVED_NOT_DESIGNED, "drift", table=T("marketing.stray"), evidence={"jobs": ["p.manual"]}
    ),
]


def test_the_design_kinds_are_warnings_with_sentences_and_round_trip():
    assert [f.severity for f in DESIGN_KINDS] == [Severity.WARNING] * 3
    assert [f.sentence() for f in DESIGN_KINDS] == [
        "p.offers: the deployed SQL is aaaaaaaaaaaa, but run run-1 (2026-10-01T02:00:00Z) ran bbbbbbbbbbbb",
        "p.offers: 4 edges (crm.learners.country -> marketing.offers.country, crm.learners.country -> "
        "marketing.offers.country, crm.learners.country -> marketing.offers.country and 1 more) designed, not "
        "observed; a branch not taken",
        "marketing.stray: drift",
    ]
    assert DESIGN_KINDS[0].to_dict() == {
        "kind": "sql_hash_mismatch",
        "job": "p.offers",
        "designed_sql_hash": "a" * 16,
        "observed_sql_hash": "b" * 16,
        "run_id": "run-1",
        "event_time": "2026-10-01T02:00:00Z",
    }
    for finding in DESIGN_KINDS:
        assert Finding.from_dict(json.loads(json.dumps(finding.to_dict()))) == finding


def test_the_report_round_trips_and_renders_from_the_findings(tmp_path):
    report = GovernanceReport(
        "lineage_governance",
        "manual__1",
        "2026-10-01T02:00:00+00:00",
        EVERY_KIND,
        {"tasks_scheduled": 7, "event_source": "events.jsonl"},
    )
    data = json.loads(json.dumps(report.to_dict()))
    assert set(data) == {"dag_id", "run_id", "logical_date", "findings", "coverage"}
    again = GovernanceReport.from_dict(data)
    assert again == report and len(again.errors) == 6
    text = markdown(report)
    assert text.startswith(
        "# Lineage governance: lineage_governance\n\nRun `manual__1`, logical date "
        "2026-10-01T02:00:00+00:00: 6 errors, 1 warnings.\n"
    )
    assert "## missing metadata (warning)\n- a.b.audience: written with no metadata" in text
    assert "## unaccounted table\n- marketing.campaign_list: in the catalog" in text
    assert text.index("## missing complete") < text.index("## missing metadata") < text.index("## target run")
    assert "## lineage unavailable\n- http://marquez:5000: the lineage events could not be read" in text
    assert text.endswith("## Coverage\n- tasks scheduled: 7\n- event source: events.jsonl\n")
    json_path, md_path = report.write(tmp_path / "out")
    assert json.loads(json_path.read_text()) == report.to_dict() and md_path.read_text() == text
    assert "No findings." in markdown(GovernanceReport("d", "r", "l"))
