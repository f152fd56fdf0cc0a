"""The provider's UI plugin in a running Airflow: loaded by the api-server with no extra step, its pages seen in
headless Chromium logged in through the UI (inside the Airflow UI, as a person opens them) answered from the lineage
store airflow.cfg names (filled by `lineage-governance store import`), its JSON agreeing byte for byte with the CLI,
and every route refusing a request without credentials."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.scheduler.test_scheduler import GOVERNANCE, LOGICAL_DATE, PLATFORM
from tests.support.stack import REPO, anonymous_get

pytestmark = pytest.mark.scheduler

COLUMN = "crm.learners.marketing_consent"
REACHED = 7
DECLARED = 3  # marketing.campaign_list's email, full_name, learner_id through the export's [[declared]] block
SUMMARY = re.compile(r"Lineage of marketing\.audience \([^)]*\): (\d+) columns, (\d+) edges")
IFRAME = "document.querySelector('iframe') && document.querySelector('iframe').contentDocument"


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def store_command(root: Path, *arguments: str) -> None:
    """Runs `lineage-governance store ARGUMENTS` on the stack's lineage store (airflow.cfg's `store`)."""
    done = subprocess.run(
        [sys.executable, "-m", "airflow_lineage_governance.cli", "store", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(REPO), "AIRFLOW_HOME": str(root / "airflow")},
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def runs(stack):
    """A finished platform run and its governance run (those the scheduler suite ran already, else new ones), their
    events imported into the lineage store the UI reads, as `lineage-governance store import` does."""
    api, root = stack
    platform = [r["dag_run_id"] for r in api.runs(PLATFORM) if r["state"] == "success"]
    governance = [r["dag_run_id"] for r in api.runs(GOVERNANCE) if r["state"] == "failed"]
    if platform and governance:
        found = platform[0], governance[0]
    else:
        found = api.trigger(PLATFORM, LOGICAL_DATE), api.trigger(GOVERNANCE, LOGICAL_DATE)
        assert api.wait_for(PLATFORM, found[0]) == "success"
        assert api.wait_for(GOVERNANCE, found[1]) == "failed"
    store_command(root, "init")
    store_command(root, "import", str(root / "events.jsonl"))
    return found


def routes(platform_run: str, governance_run: str) -> list[str]:
    """Returns every route of the plugin's app, with real arguments."""
    run = f"dag_id={GOVERNANCE}&run_id={_q(governance_run)}"
    return [
        "lineage-governance/",
        "lineage-governance/governance",
        f"lineage-governance/run?{run}",
        f"lineage-governance/report?{run}&format=json",
        f"lineage-governance/report?{run}&format=md",
        f"lineage-governance/lineage?dag_id={PLATFORM}&run_id={_q(platform_run)}&task_id=marketing_audience",
        f"lineage-governance/impact?column={COLUMN}",
        f"lineage-governance/impact.json?column={COLUMN}",
    ]


def test_the_provider_plugin_is_loaded(stack):
    api, _ = stack
    plugins = {p["name"]: p for p in api.call("GET", "/plugins")["plugins"]}
    ours = plugins["lineage_governance"]
    assert {v["name"]: v["destination"] for v in ours["external_views"]} == {
        "Governance": "nav",
        "Impact": "nav",
        "Lineage": "task_instance",
    }
    assert [a["url_prefix"] for a in ours["fastapi_apps"]] == ["/lineage-governance"]
    errors = api.call("GET", "/plugins/importErrors")["import_errors"]
    assert not [e for e in errors if "lineage_governance" in json.dumps(e)]


def test_every_route_refuses_anonymous_requests(stack, runs):
    api, _ = stack
    for path in routes(*runs):
        for accept in ("text/html", "application/json"):
            status, body = anonymous_get(api.ui(path), accept)
            assert status in (401, 403), f"{path} ({accept}): {status}"
            assert "marketing" not in body and "crm.learners" not in body, path
    for path in routes(*runs):  # a forged token is no better
        request = urllib.request.Request(api.ui(path), headers={"Authorization": "Bearer not-a-token"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert refused.value.code in (401, 403), path
    assert json.loads(api.get(routes(*runs)[-1]))["column"] == COLUMN  # and the same route answers a user


def test_the_governance_page_lists_the_runs_errors_and_warnings(stack, browser, runs, screenshots):
    api, _ = stack
    _, governance_run = runs
    browser.open(api.ui("plugin/lineage-governance"))
    text = browser.text(["Governance", governance_run, "3 errors", "2 warnings"])
    row = browser.evaluate(
        f"Array.from({IFRAME}.querySelectorAll('tr.run')).map(r => r.innerText)"
        f".find(t => t.includes({json.dumps(governance_run)}))"
    )
    assert row and "3 errors" in row and "2 warnings" in row, text
    browser.screenshot(screenshots / "ui-governance.png")

    browser.open(
        api.ui(f"plugin/lineage-governance/lineage-governance/run?dag_id={GOVERNANCE}&run_id={_q(governance_run)}")
    )
    wanted = [
        "3 errors",
        "2 warnings",
        "unaccounted table",
        "marketing.campaign_list",
        "understated classification",
        "marketing.birthday_offers.country",
        "missing metadata",
        "marketing-team",
    ]
    text = browser.text(wanted)
    for line in wanted:
        assert line in text, line
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('tr.finding.error').length") == 3
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('tr.finding.warning').length") == 2
    browser.screenshot(screenshots / "ui-governance-run.png")


def test_the_lineage_tab_of_an_operator_task(stack, browser, runs, screenshots):
    api, _ = stack
    platform_run, _ = runs
    columns, edges = map(int, SUMMARY.search(api.log(PLATFORM, platform_run, "marketing_audience")).groups())
    browser.open(api.ui(f"dags/{PLATFORM}/runs/{_q(platform_run)}/tasks/marketing_audience/plugin/column-lineage"))
    text = browser.text(["email <- crm.learners.email (DIRECT IDENTITY)", "crm.learners.marketing_consent"])
    assert "email <- crm.learners.email (DIRECT IDENTITY)" in text
    filters = browser.evaluate(f"Array.from({IFRAME}.querySelectorAll('tr.row-input')).map(r => r.innerText)")
    assert any("crm.learners.marketing_consent" in row and "FILTER" in row for row in filters), filters
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('tr.output-column').length") == columns
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('svg.lineage path.edge').length") == edges
    browser.evaluate(f"{IFRAME}.querySelector('.picture').scrollIntoView({{block: 'end'}})")  # the picture in view
    browser.screenshot(screenshots / "ui-lineage.png")


def test_the_impact_page_and_its_json_agree_with_the_cli(stack, browser, runs, screenshots):
    api, root = stack
    browser.open(api.ui("plugin/lineage-impact"))
    assert browser.wait_for(f"{IFRAME} && {IFRAME}.querySelector('input[name=column]')")
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('datalist option[value=\"{COLUMN}\"]').length") == 1
    browser.evaluate(f"{IFRAME}.querySelector('input[name=column]').focus()")
    browser.call("Input.insertText", text=COLUMN)  # typed, as a person would
    browser.evaluate(f"{IFRAME}.querySelector('button[type=submit]').click()")
    text = browser.text([f"{REACHED} columns reached", "marketing.audience.email"])
    assert f"{REACHED} columns reached" in text
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('tr.reached-column.observed').length") == REACHED
    # the campaign export's [[declared]] lineage carries the audience on, as candidates
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('tr.reached-column.declared').length") == DECLARED
    assert browser.evaluate(f"{IFRAME}.querySelectorAll('svg.lineage path.edge.path').length") >= 2
    assert "marketing-team" in text
    browser.screenshot(screenshots / "ui-impact.png")

    served = api.get(f"lineage-governance/impact.json?column={COLUMN}")
    printed = subprocess.run(
        [
            sys.executable,
            "-m",
            "airflow_lineage_governance.cli",
            "impact",
            COLUMN,
            "--json",
            "--events",
            str(root / "events.jsonl"),
            "--rules",
            str(REPO / "governance" / "lineage.toml"),
            "--metadata",
            str(REPO / "governance" / "metadata.toml"),
            "--job-namespace",
            "platform",
        ],
        capture_output=True,
        timeout=300,
        cwd=REPO,
        env={"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(REPO)},
    )
    assert printed.returncode == 0, printed.stderr
    assert served == printed.stdout
    answer = json.loads(served)
    assert len(answer["columns_reached"]) == REACHED + DECLARED
    assert sum(r["confidence"] == "observed" for r in answer["reached"].values()) == REACHED
