"""The governance UI's FastAPI app through Starlette's TestClient: what each page renders from real events in a real
lineage store (filled by `lineage-governance store import`, on both engines), reports and TOML files, that hostile
names are escaped, that the impact JSON is the CLI's byte for byte, that each request asks the store (new events show
at once; a missing or busy store is one sentence on the page), and that a request without credentials gets no data.
(Authorization against a real auth manager is tested in tests/scheduler/test_ui.py, on a running api-server.)"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_lineage_governance import cli
from airflow_lineage_governance.governance.findings import (
    missing_metadata,
    unaccounted_table,
    understated_classification,
)
from airflow_lineage_governance.governance.recorded_runs import record_report
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.plugins.app import create_app, current_user, readable_dags
from airflow_lineage_governance.plugins.data import Sources, UiData, airflow_sources
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
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


def fill(store: str, events: Path) -> None:
    """Creates the store when it is not there and imports the events file into it, as a person would."""
    assert cli.main(["store", "init", "--store", store]) == 0
    assert cli.main(["store", "import", str(events), "--store", store]) == 0


@pytest.fixture
def folders(tmp_path, store_location):
    """The lineage store (on the test's engine) filled with the events, and the reports folder."""
    events = write(tmp_path / "events.jsonl", [audience_event(), hostile_event()])
    fill(store_location, events)
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
    return store_location, reports


def client(store: str, reports: Path, readable=lambda dag: True, user=True, wait_seconds=5.0) -> TestClient:
    sources = Sources(lambda: store, lambda: GOVERNANCE_DIR, lambda: reports, lambda: None)
    app = create_app(UiData(sources, wait_seconds))
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


def test_an_impact_is_refused_by_the_dag_the_writers_event_names(tmp_path, store_location):
    facets = {"airflow": {"dag": {"dag_id": "secret_dag"}, "dagRun": {"run_id": RUN}, "taskInstance": {}}}
    copy = complete("loader.copy", output("stage.copy", {"e": ["crm.learners.email"]}), run_facets=facets)
    fill(store_location, write(tmp_path / "events.jsonl", [copy]))
    refused = client(store_location, tmp_path, readable=lambda dag: dag != "secret_dag").get(
        "/impact.json", params={"column": "crm.learners.email"}
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == "the impact reaches tables written by DAGs you may not read (secret_dag)"
    allowed = client(store_location, tmp_path, readable=lambda dag: dag != "loader")  # the job's prefix is no DAG
    assert allowed.get("/impact.json", params={"column": "crm.learners.email"}).json()["columns_reached"] == [
        "stage.copy.e"
    ]


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


def test_the_impact_page_and_json_agree_with_the_cli(folders, tmp_path, capsys):
    store, reports = folders
    ui = client(store, reports)
    page = ui.get("/impact", params={"column": "crm.learners.marketing_consent"})
    assert page.status_code == 200
    # the export's [[declared]] lineage reaches 2 more columns (of those this event has), listed as
    # candidates, not as observed
    assert "3 columns reached" in page.text and page.text.count('class="reached-column observed"') == 3
    assert "2 more through declared or designed lineage" in page.text
    assert page.text.count('class="reached-column declared"') == 2
    assert '<option value="crm.learners.marketing_consent">' in page.text  # completion
    assert 'class="edge indirect filter path"' in page.text
    capsys.readouterr()
    served = ui.get("/impact.json", params={"column": "crm.learners.marketing_consent"})
    assert served.headers["content-type"] == "application/json"
    # the same text as the CLI prints from the events file (the in-memory history) and from the store
    for answering in (["--events", str(tmp_path / "events.jsonl")], ["--store", store]):
        asked = ["impact", "crm.learners.marketing_consent", "--json", *answering]
        options = ["--rules", str(GOVERNANCE_DIR / "lineage.toml"), "--metadata", str(GOVERNANCE_DIR / "metadata.toml")]
        assert cli.main([*asked, *options, "--job-namespace", "*"]) == 0
        assert served.content == capsys.readouterr().out.encode()
    missing = ui.get("/impact.json", params={"column": "crm.learners.nope"})
    assert missing.status_code == 404
    assert missing.json()["detail"].startswith("crm.learners.nope: no received lineage event mentions this column")


def test_each_request_asks_the_store_so_new_events_show_at_once(folders, tmp_path):
    store, reports = folders
    ui = client(store, reports)
    tab = {"dag_id": "platform_nightly", "task_id": "marketing_audience"}
    assert "No column lineage" in ui.get("/lineage", params={**tab, "run_id": "manual__2"}).text
    # the app keeps no store open between requests: a writer opens the DuckDB file while the app runs
    fill(store, write(tmp_path / "later.jsonl", [audience_event("manual__2", "2026-10-02T02:05:00Z")]))
    newer = ui.get("/lineage", params={**tab, "run_id": "manual__2"})
    assert "email &lt;- crm.learners.email" in newer.text and "2026-10-02T02:05:00Z" in newer.text
    older = ui.get("/lineage", params={**tab, "run_id": RUN})
    assert "email &lt;- crm.learners.email" in older.text and "2026-10-01T02:05:00Z" in older.text  # an earlier run's
    assert "3 columns reached" in ui.get("/impact", params={"column": "crm.learners.marketing_consent"}).text


def test_a_store_not_made_yet_is_one_sentence_on_each_page(folders, tmp_path, engine_kind, request):
    _, reports = folders
    if engine_kind == "duckdb":
        store = str(tmp_path / "not-made-yet.duckdb")
        named = store
    else:  # a database holding no store; the sentence names the server without the password
        from tests.store.conftest import new_schema

        store = new_schema(request.getfixturevalue("postgres_url"))
        password = store.split(":")[2].split("@")[0]
        named = store.split("?")[0].replace(f":{password}@", "@")
    ui = client(store, reports)
    sentence = (
        f"No lineage store at {named} yet: create it with `lineage-governance store init` and fill it with "
        "`lineage-governance store import EVENTS` (or the OpenLineage StoreTransport), then reload this page."
    )
    impact = ui.get("/impact", params={"column": "crm.learners.marketing_consent"})
    assert impact.status_code == 200 and f'<p class="panel error">{sentence}</p>' in impact.text
    tab = ui.get("/lineage", params={"dag_id": "platform_nightly", "run_id": RUN, "task_id": "marketing_audience"})
    assert tab.status_code == 200 and f'<p class="panel">{sentence}</p>' in tab.text
    answer = ui.get("/impact.json", params={"column": "crm.learners.marketing_consent"})
    assert answer.status_code == 503 and answer.json() == {"detail": sentence}
    assert "Traceback" not in impact.text + tab.text + answer.text
    governance = ui.get("/governance")
    assert RUN in governance.text  # the report files need no store
    assert f"{sentence.rstrip('.')}: these are the report files under {reports}." in text_of(governance)
    if engine_kind == "duckdb":
        assert not Path(store).exists()  # a page never creates the store


def hold(path: str, seconds: float) -> subprocess.Popen:
    """Starts another process that opens the DuckDB file for writing and keeps it open for `seconds`."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "time.sleep(float(sys.argv[2])); c.close()",
            path,
            str(seconds),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("engine_kind", ["duckdb"], indirect=True)
def test_a_duckdb_store_another_process_writes_is_waited_for_then_one_sentence(folders):
    store, reports = folders
    holder = hold(store, 60)
    try:
        started = time.monotonic()
        page = client(store, reports, wait_seconds=0.5).get("/impact", params={"column": "crm.learners.email"})
        waited = time.monotonic() - started
        answer = client(store, reports, wait_seconds=0.5).get("/impact.json", params={"column": "crm.learners.email"})
    finally:
        holder.kill()
        holder.wait(timeout=30)
    sentence = (
        f"{store}: another process is writing the lineage store's DuckDB file; reload this page in a moment, or keep "
        "a store that many processes share on PostgreSQL."
    )
    assert page.status_code == 200 and f'<p class="panel error">{sentence}</p>' in html.unescape(page.text)
    assert waited > 0.2 and "Traceback" not in page.text  # it did wait for the other process
    assert answer.status_code == 503 and answer.json() == {"detail": sentence}
    holder = hold(store, 1.0)  # a writer done within the wait: the page answers
    try:
        page = client(store, reports, wait_seconds=30).get("/impact", params={"column": "crm.learners.email"})
    finally:
        holder.wait(timeout=30)
    assert page.status_code == 200 and "columns reached" in page.text and "panel error" not in page.text


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


LATER = "scheduled__2026-10-02T02:00:00+00:00"


def record_runs(store: str) -> None:
    """Records two governance runs in the store, as the nightly DAG's report task does: RUN again with other findings
    than its report file holds, and a later night."""
    stray = unaccounted_table(TableRef.parse("marketing.stray"))
    coverage = {"target_dag_id": "platform_nightly", "tasks_with_lineage": 1, "tasks_succeeded": 2}
    earlier = GovernanceReport(
        "lineage_governance",
        RUN,
        "2026-10-01T02:00:00+00:00",
        [stray],
        {**coverage, "target_run_id": RUN, "event_source": "/data/events.jsonl"},
    )
    record_report(store, earlier, datetime(2026, 10, 1, 3, tzinfo=UTC))
    later = GovernanceReport(
        "lineage_governance",
        LATER,
        "2026-10-02T02:00:00+00:00",
        [missing_metadata(TableRef.parse("marketing.evil"), {HOSTILE: None}), stray],
        {**coverage, "target_run_id": LATER},
    )
    record_report(store, later, datetime(2026, 10, 2, 3, 4, 5, tzinfo=UTC))


def text_of(page) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page.text)))


def test_the_governance_page_shows_the_latest_run_the_store_keeps(folders):
    store, reports = folders
    record_runs(store)
    ui = client(store, reports)
    page = ui.get("/governance")
    assert page.status_code == 200
    with LineageStore.open(store, read_only=store.endswith(".duckdb")) as opened:
        described = opened.engine.description
    shown = text_of(page)
    assert f"From the lineage store {described}." in shown
    assert f"Latest run: {LATER} lineage_governance" in shown
    assert "Logical date 2026-10-02T02:00:00+00:00, checked at 2026-10-02 03:04:05 UTC: 1 error, 1 warning." in shown
    assert "marketing.stray: in the catalog, but no declared source and no job's output in the lineage" in shown
    assert page.text.count('class="finding error"') == 1 and page.text.count('class="finding warning"') == 1
    assert page.text.count('<tr class="run">') == 2  # both nights, the store's: not the report file's counts
    assert "2026-10-01 03:00:00 UTC" in shown and "1 of 2 tasks with lineage" in shown
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text


def test_a_run_page_reads_its_findings_from_the_store(folders):
    store, reports = folders
    record_runs(store)
    ui = client(store, reports)
    page = ui.get("/run", params={"dag_id": "lineage_governance", "run_id": RUN})
    assert page.status_code == 200
    shown = text_of(page)
    with LineageStore.open(store, read_only=store.endswith(".duckdb")) as opened:
        described = opened.engine.description
    assert (
        f"Governance run {RUN} of lineage_governance, checked at 2026-10-01 03:00:00 UTC: from the lineage store "
        f"{described}." in shown
    )
    # the store's findings of the run, not those its report file holds
    assert "unaccounted table" in shown and "understated classification" not in shown
    assert "event source /data/events.jsonl" in shown  # the coverage the store keeps
    json_report = ui.get("/report", params={"dag_id": "lineage_governance", "run_id": RUN, "format": "json"})
    assert json_report.json()["findings"] == [{"kind": "unaccounted_table", "table": "marketing.stray"}]
    md = ui.get("/report", params={"dag_id": "lineage_governance", "run_id": LATER, "format": "md"})
    assert md.text.startswith("# Lineage governance: lineage_governance\n\nRun `scheduled__2026-10-02T02:00:00+00:00`")
    assert "## missing metadata (warning)" in md.text
    missing = ui.get("/run", params={"dag_id": "lineage_governance", "run_id": "manual__9"})
    assert missing.status_code == 404
    assert missing.json()["detail"] == "no governance run manual__9 of lineage_governance in the lineage store"


def test_the_stores_runs_of_dags_the_user_may_not_read_are_hidden(folders):
    store, reports = folders
    record_runs(store)
    hidden = client(store, reports, readable=lambda dag: dag != "platform_nightly")
    page = hidden.get("/governance")
    assert page.status_code == 200 and RUN not in page.text and "marketing.stray" not in page.text
    assert "No governance run yet you may read." in text_of(page)
    assert hidden.get("/run", params={"dag_id": "lineage_governance", "run_id": RUN}).status_code == 403
    assert hidden.get("/report", params={"dag_id": "lineage_governance", "run_id": RUN}).status_code == 403


def test_while_the_store_holds_no_governance_run_the_pages_say_they_read_the_report_files(folders):
    store, reports = folders
    ui = client(store, reports)
    with LineageStore.open(store, read_only=store.endswith(".duckdb")) as opened:
        described = opened.engine.description
    shown = text_of(ui.get("/governance"))
    assert (
        f"The lineage store {described} holds no governance run yet: these are the report files under {reports}."
        in shown
    )
    assert f"Latest run: {RUN} lineage_governance" in shown and "understated classification" in shown
    run = text_of(ui.get("/run", params={"dag_id": "lineage_governance", "run_id": RUN}))
    path = reports / "lineage_governance" / RUN / "governance-report.json"
    assert f"Governance run {RUN} of lineage_governance, checked at " in run
    assert f": from its report file {path}." in run


@pytest.mark.parametrize("engine_kind", ["duckdb"], indirect=True)
def test_the_governance_pages_read_the_store_the_nightly_dag_records_in(folders, tmp_path, monkeypatch):
    store, reports = folders
    nightly = str(reports / "lineage-store.duckdb")  # a relative `store` setting, as the nightly DAG takes it
    record_runs(nightly)
    sources = Sources(lambda: store, lambda: GOVERNANCE_DIR, lambda: reports, lambda: None, lambda: nightly)
    app = create_app(UiData(sources))
    app.dependency_overrides[current_user] = lambda: "steward"
    app.dependency_overrides[readable_dags] = lambda: lambda dag: True
    shown = text_of(TestClient(app).get("/governance"))
    assert f"From the lineage store {nightly}." in shown and f"Latest run: {LATER}" in shown
    # the provider's settings name the nightly DAG's store: a relative path inside the report folder
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", "lineage-store.duckdb")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__REPORT_FOLDER", str(reports))
    monkeypatch.delenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID", raising=False)
    configured = airflow_sources()
    assert configured.store() == "lineage-store.duckdb"
    assert configured.governance_store is not None and configured.governance_store() == nightly
