"""The governance UI's FastAPI app through Starlette's TestClient: what each page renders from real events,
reports and TOML files, that hostile names are escaped, that the impact JSON is the CLI's byte for byte, that
the graph is built once per version of the events, and that a request without credentials gets no data.
(Authorization against a real auth manager is tested in tests/scheduler/test_ui.py, on a running api-server.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_lineage_governance import cli
from airflow_lineage_governance.governance.findings import missing_metadata, understated_classification
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.plugins.app import create_app, current_user, readable_dags
from airflow_lineage_governance.plugins.data import Sources, UiData
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.events import complete, output, source, write

REPO = Path(__file__).resolve().parents[2]
GOVERNANCE_DIR = REPO / "governance"
HOSTILE = '<script>alert("x")</script>'
RUN = "scheduled__2026-10-01T02:00:00+00:00"


def audience_event(run: str = RUN, time: str = "2026-10-01T02:05:00Z") -> dict:
    out = output(
        "marketing.audience",
        {
            "email": ["crm.learners.email"],
            "full_name": [source("crm.learners.full_name", "DIRECT", "TRANSFORMATION", masking=True)],
            "country": ["crm.learners.country"],
        },
        rows=["crm.learners.marketing_consent", source("crm.learners.learner_id", "INDIRECT", "JOIN")],
    )
    inputs = [
        {"namespace": "iceberg://platform", "name": "crm.learners", "facets": {"version": {"datasetVersion": "42"}}}
    ]
    return complete("platform_nightly.marketing_audience", out, dag_run=run, time=time, inputs=inputs)


def hostile_event() -> dict:
    out = output("marketing.evil", {HOSTILE: [f"crm.learners.{HOSTILE}"]})
    return complete("platform_nightly.evil", out, dag_run=RUN)


@pytest.fixture
def folders(tmp_path):
    events = write(tmp_path / "events.jsonl", [audience_event(), hostile_event()])
    reports = tmp_path / "reports"
    report = GovernanceReport(
        "lineage_governance",
        RUN,
        "2026-10-01T02:00:00+00:00",
        [
            understated_classification(
                ColumnRef.parse("marketing.audience.email"),
                "internal",
                "personal",
                ColumnRef.parse("crm.learners.email"),
                "DIRECT",
                "IDENTITY",
            ),
            missing_metadata(TableRef.parse("marketing.evil"), {HOSTILE: None}),
        ],
        {"target_dag_id": "platform_nightly", "target_run_id": RUN, "tasks_with_lineage": 2, "tasks_succeeded": 2},
    )
    report.write(reports / "lineage_governance" / RUN)
    return events, reports


def client(events: Path, reports: Path, readable=lambda dag: True, user=True) -> TestClient:
    sources = Sources(lambda: str(events), lambda: GOVERNANCE_DIR, lambda: reports, lambda: None)
    app = create_app(UiData(sources), warm_up=False)
    if user:  # else Airflow's own get_user answers, from the request's (missing) credentials
        app.dependency_overrides[current_user] = lambda: "steward"
        app.dependency_overrides[readable_dags] = lambda: readable
    return TestClient(app)


def test_the_governance_page_lists_runs_with_their_counts(folders):
    page = client(*folders).get("/governance")
    assert page.status_code == 200
    assert RUN in page.text and "1 error" in page.text and "1 warning" in page.text
    assert "2 of 2 tasks with lineage" in page.text


def test_a_run_page_groups_findings_with_owner_and_evidence(folders):
    page = client(*folders).get("/run", params={"dag_id": "lineage_governance", "run_id": RUN})
    assert page.status_code == 200
    assert "understated classification" in page.text and "missing metadata" in page.text
    assert page.text.count('class="finding error"') == 1 and page.text.count('class="finding warning"') == 1
    assert "declared internal, lineage proposes personal" in page.text
    assert "../dags/lineage_governance/runs/" in page.text  # the Airflow run
    report = client(*folders).get("/report", params={"dag_id": "lineage_governance", "run_id": RUN, "format": "md"})
    assert report.text.startswith("# Lineage governance: lineage_governance")


def test_runs_of_dags_the_user_may_not_read_are_hidden(folders):
    hidden = client(*folders, readable=lambda dag: dag != "platform_nightly")
    assert RUN not in hidden.get("/governance").text
    assert hidden.get("/run", params={"dag_id": "lineage_governance", "run_id": RUN}).status_code == 403
    assert (
        hidden.get(
            "/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "marketing_audience"}
        ).status_code
        == 403
    )
    refused = hidden.get("/impact.json", params={"column": "crm.learners.marketing_consent"})
    assert refused.status_code == 403 and "marketing" not in refused.json()["detail"].replace("platform_nightly", "")


def test_the_lineage_tab_shows_sources_filters_snapshots_and_a_picture(folders):
    page = client(*folders).get(
        "/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "marketing_audience"}
    )
    assert page.status_code == 200
    text = re.sub(r"<[^>]+>", "", page.text).replace("&lt;", "<")
    assert "email <- crm.learners.email (DIRECT IDENTITY)" in text
    assert "crm.learners.full_name (DIRECT TRANSFORMATION, masked)" in text
    assert re.search(r"crm\.learners\.marketing_consent\s*INDIRECT\s*FILTER", text)
    assert "42" in text  # the snapshot read
    svg = page.text[page.text.index("<svg xmlns") :]
    assert svg.count('<path class="edge') == 5  # 3 columns' sources and 2 rows-shaping inputs
    assert svg.count('class="edge indirect') == 2 and svg.count(" masked ") == 1


def test_a_task_with_no_lineage_says_so(folders):
    page = client(*folders).get(
        "/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "marketing_export"}
    )
    assert page.status_code == 200 and "No column lineage from platform_nightly.marketing_export" in page.text


def test_hostile_names_are_escaped_everywhere(folders):
    ui = client(*folders)
    pages = [
        ui.get("/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "evil"}),
        ui.get("/run", params={"dag_id": "lineage_governance", "run_id": RUN}),
        ui.get("/impact", params={"column": f"crm.learners.{HOSTILE}"}),
        ui.get("/impact", params={"column": HOSTILE}),
    ]
    for page in pages:
        assert page.status_code == 200
        assert "<script>" not in page.text and "&lt;script&gt;" in page.text


def test_the_impact_page_and_json_agree_with_the_cli(folders, capsys, monkeypatch):
    events, reports = folders
    ui = client(events, reports)
    page = ui.get("/impact", params={"column": "crm.learners.marketing_consent"})
    assert page.status_code == 200
    # the export's [[declared]] lineage reaches 2 more columns (of those this event has), listed as
    # candidates, not as observed
    assert "3 columns reached" in page.text and page.text.count('class="reached-column observed"') == 3
    assert "2 more through declared or designed lineage" in page.text
    assert page.text.count('class="reached-column declared"') == 2
    assert '<option value="crm.learners.marketing_consent">' in page.text  # completion
    assert 'class="edge indirect filter path"' in page.text
    served = ui.get("/impact.json", params={"column": "crm.learners.marketing_consent"})
    assert served.headers["content-type"] == "application/json"
    assert (
        cli.main(
            [
                "impact",
                "crm.learners.marketing_consent",
                "--json",
                "--events",
                str(events),
                "--rules",
                str(GOVERNANCE_DIR / "lineage.toml"),
                "--metadata",
                str(GOVERNANCE_DIR / "metadata.toml"),
                "--job-namespace",
                "*",
            ]
        )
        == 0
    )
    assert served.content == capsys.readouterr().out.encode()
    assert ui.get("/impact.json", params={"column": "crm.learners.nope"}).status_code == 404


def test_the_graph_is_built_once_per_version_of_the_events(folders):
    events, reports = folders
    ui = client(events, reports)
    data = ui.app.state.data
    ui.get("/impact", params={"column": "crm.learners.marketing_consent"})
    first = data.governance()
    ui.get("/impact", params={"column": "crm.learners.email"})
    assert data.governance() is first
    write(events, [audience_event(), hostile_event(), audience_event("manual__2", "2026-10-02T02:05:00Z")])
    assert data.governance() is not first
    older = ui.get("/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "marketing_audience"})
    assert "email &lt;- crm.learners.email" in older.text  # an earlier run's event, found by a scan of the file


def test_requests_without_credentials_get_no_data(folders):
    anonymous = client(*folders, user=False)
    for path in (
        "/",
        "/governance",
        f"/run?dag_id=lineage_governance&run_id={RUN}",
        "/impact?column=crm.learners.marketing_consent",
        "/impact.json?column=crm.learners.marketing_consent",
        f"/lineage?dag_id=platform_nightly&run_id={RUN}&task_id=marketing_audience",
    ):
        for accept in ("text/html", "application/json"):
            answer = anonymous.get(path, headers={"Accept": accept}, follow_redirects=False)
            assert answer.status_code == 401, path
            assert "marketing" not in answer.text and "crm." not in answer.text, path
    page = anonymous.get("/governance", headers={"Accept": "text/html"})
    assert "Log in to Airflow" in page.text and json.dumps(page.status_code) == "401"
