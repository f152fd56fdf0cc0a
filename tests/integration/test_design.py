"""Design lineage and the diff on events real Airflow runs produced: the platform's nightly run (the session's
`platform_run`), and a DAG with a branch not taken, run once for the module."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from airflow_lineage_governance.graph.records import sql_hash
from learning_platform.seed import seed_platform
from tests.integration.test_governance_dag import kinds, run_governance
from tests.support.sandbox import REPO, VENV_BIN, Sandbox, base_env, demo_pythonpath

pytestmark = pytest.mark.integration

PLATFORM_JOBS = [
    f"platform_nightly.{task}"
    for task in (
        "birthday_offers",
        "course_performance",
        "daily_revenue",
        "learner_activity",
        "learner_dim",
        "learner_erasure",
        "marketing_audience",
        "review_corpus",
    )
]
RULES = str(REPO / "governance" / "lineage.toml")
METADATA = str(REPO / "governance" / "metadata.toml")


def cli(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    env = base_env(sandbox.home)
    env["PYTHONPATH"] = demo_pythonpath()
    return subprocess.run(
        [str(VENV_BIN / "lineage-governance"), *args], capture_output=True, text=True, timeout=180, env=env
    )


def design(sandbox: Sandbox, dags=None) -> dict:
    done = cli(
        sandbox,
        "design",
        str(dags or sandbox.dags),
        "--catalog",
        str(sandbox.catalog_folder),
        "--logical-date",
        "2026-10-01T02:00:00+00:00",
        "--json",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def diff(sandbox: Sandbox, events, *extra: str, dags=None) -> tuple[int, dict, str]:
    args = [
        "diff",
        str(dags or sandbox.dags),
        "--events",
        str(events),
        "--catalog",
        str(sandbox.catalog_folder),
        "--rules",
        RULES,
        "--metadata",
        METADATA,
        *extra,
    ]
    done = cli(sandbox, *args, "--json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    text = cli(sandbox, *args)
    assert text.returncode == done.returncode, text.stderr[-2000:]
    return done.returncode, json.loads(done.stdout), text.stdout


def test_design_lists_every_platform_task_with_its_lineage(platform_run):
    sandbox, run = platform_run
    found = design(sandbox)
    tasks = {t["job"]: t for t in found["tasks"]}
    assert sorted(tasks) == PLATFORM_JOBS
    assert all("problem" not in t and t["column_edges"] and t["source"] == "designed" for t in tasks.values())
    offers = tasks["platform_nightly.birthday_offers"]
    assert offers["target"] == "marketing.birthday_offers"
    assert offers["dataset_edges"] == [{"source": "crm.learners", "target": "marketing.birthday_offers"}]
    assert {(e["source"], e["target"], e["type"], e["subtype"]) for e in offers["column_edges"]} == {
        ("crm.learners.date_of_birth", "marketing.birthday_offers", "INDIRECT", "FILTER"),
        ("crm.learners.marketing_consent", "marketing.birthday_offers", "INDIRECT", "FILTER"),
        ("crm.learners.country", "marketing.birthday_offers.country", "DIRECT", "IDENTITY"),
        ("crm.learners.learner_id", "marketing.birthday_offers.learner_id", "DIRECT", "IDENTITY"),
    }
    assert "platform_nightly.marketing_export" in found["other_tasks"]  # a Python task: design cannot read it
    assert found["import_errors"] == {}
    for job, task in tasks.items():  # the designed hash is the hash of the SQL the run's event carries
        [complete] = run.task_events(job.removeprefix("platform_nightly."), "COMPLETE")
        assert sql_hash(complete["job"]["facets"]["sql"]["query"]) == task["sql_hash"], job


def test_design_names_a_task_whose_lineage_cannot_be_read_in_one_sentence(platform_run, tmp_path):
    sandbox, _ = platform_run
    dags = tmp_path / "dags"
    shutil.copytree(sandbox.dags, dags)
    (dags / "sql" / "review_corpus.sql").write_text(
        "create table ai.review_corpus as select r.no_such from learning.reviews r"
    )
    (dags / "sql" / "daily_revenue.sql").write_text("select {{ no_such_variable }}")
    tasks = {t["job"]: t for t in design(sandbox, dags)["tasks"]}
    assert "learning.reviews has no column no_such" in tasks["platform_nightly.review_corpus"]["problem"]
    assert "no_such_variable" in tasks["platform_nightly.daily_revenue"]["problem"]
    assert "Traceback" not in json.dumps(tasks)
    assert "target" in tasks["platform_nightly.birthday_offers"]


def test_diff_after_a_real_run_shows_no_difference(platform_run):
    sandbox, run = platform_run
    code, found, text = diff(sandbox, run.events_path)
    assert code == 0 and found["differences"] == 0, text
    assert found["compared"] == PLATFORM_JOBS
    assert "Design and runtime agree." in text


def test_a_changed_sql_file_is_a_hash_mismatch_and_its_changed_edges(platform_run, tmp_path):
    sandbox, run = platform_run
    dags = tmp_path / "dags"
    shutil.copytree(sandbox.dags, dags)
    (dags / "sql" / "birthday_offers.sql").write_text(
        "create or replace table marketing.birthday_offers as\n"
        "select l.learner_id, l.country, l.email\nfrom crm.learners l\n"
        "where month(l.date_of_birth) = {{ logical_date.month }}\n"
    )
    code, found, text = diff(sandbox, run.events_path, dags=dags)
    assert code == 1
    [mismatch] = found["sql_hash_mismatches"]
    [complete] = run.task_events("birthday_offers", "COMPLETE")
    assert (mismatch["job"], mismatch["run_id"]) == ("platform_nightly.birthday_offers", complete["run"]["runId"])
    assert mismatch["observed_sql_hash"] == sql_hash(complete["job"]["facets"]["sql"]["query"])
    assert mismatch["designed_sql_hash"] != mismatch["observed_sql_hash"]
    [designed] = found["designed_not_observed"]["jobs"]
    assert designed["column_edges"] == [
        {
            "source": "crm.learners.email",
            "target": "marketing.birthday_offers.email",
            "type": "DIRECT",
            "subtype": "IDENTITY",
        }
    ]
    assert "ran other SQL than the deployed SQL" in designed["reason"]
    [observed] = found["observed_not_designed"]["jobs"]
    assert observed["column_edges"] == [
        {
            "source": "crm.learners.marketing_consent",
            "target": "marketing.birthday_offers",
            "type": "INDIRECT",
            "subtype": "FILTER",
        }
    ]
    assert observed["evidence"]["run_id"] == complete["run"]["runId"]
    assert found["designed_not_observed"]["tables"] == found["observed_not_designed"]["tables"] == []
    assert "SQL hash mismatches (the deployed SQL is not what ran):" in text
    assert "crm.learners.email -> marketing.birthday_offers.email (DIRECT IDENTITY)" in text


def test_a_manual_run_is_observed_not_designed_and_the_export_is_no_difference(platform_run, tmp_path):
    # The marketing export is a Python task that reports no datasets: nothing observed, nothing designed. A run of
    # the audience SQL under a job no DAG file holds (a manual run) is observed, not designed.
    sandbox, run = platform_run
    manual = json.loads(json.dumps(run.task_events("marketing_audience", "COMPLETE")[0]))
    manual["job"]["name"] = "adhoc.audience_backfill"
    manual["run"]["runId"] = "01999a2e-0000-7000-8000-00000000cafe"
    manual["outputs"][0]["name"] = "marketing.audience_copy"
    events = tmp_path / "events.jsonl"
    events.write_text(run.events_path.read_text() + json.dumps(manual) + "\n")
    code, found, text = diff(sandbox, events)
    assert code == 1 and found["sql_hash_mismatches"] == [] and found["designed_not_observed"]["jobs"] == []
    [observed] = found["observed_not_designed"]["jobs"]
    assert observed["job"] == "adhoc.audience_backfill"
    assert "no task of the DAGs folder is adhoc.audience_backfill" in observed["reason"]
    assert {"source": "crm.learners", "target": "marketing.audience_copy"} in observed["dataset_edges"]
    tables = found["observed_not_designed"]["tables"]
    assert [t["table"] for t in tables] == ["marketing.audience_copy"]
    assert all(
        "marketing_export" not in json.dumps(side)
        for side in (found["designed_not_observed"], found["observed_not_designed"])
    )
    [declared] = found["declared_not_designed"]  # metadata.toml's [[declared]] block: listed, no difference
    assert declared["job"] == "platform_nightly.marketing_export" and declared["evidence"]["source"] == "declared"
    assert declared["dataset_edges"] == [{"source": "marketing.audience", "target": "marketing.campaign_list"}]
    assert "declared by marketing-team" in declared["reason"] and "not an IcebergSqlOperator" in declared["reason"]
    # As of before the manual run, runtime agrees with the design again.
    before = run.task_events("marketing_audience", "COMPLETE")[0]["eventTime"]
    manual["eventTime"] = "2099-01-01T00:00:00Z"
    events.write_text(run.events_path.read_text() + json.dumps(manual) + "\n")
    code, found, _ = diff(sandbox, events, "--as-of", "2098-01-01T00:00:00Z")
    assert code == 0 and found["differences"] == 0, before


def test_the_nightly_with_the_design_configured_keeps_the_platforms_findings(platform_run):
    sandbox, _ = platform_run
    run, report = run_governance(sandbox, AIRFLOW__LINEAGE_GOVERNANCE__DESIGN_DAGS_FOLDER=str(sandbox.dags))
    assert len(report["findings"]) == 1 + 2 + 2  # 3 errors, 2 warnings: design and runtime agree on the platform
    coverage = report["coverage"]
    assert (coverage["design_tasks_compared"], coverage["design_differences"]) == (8, 0)
    assert coverage["runs_with_lineage_share"] == 1.0
    assert coverage["complete_runs_checked"] == 9
    assert (
        coverage["complete_runs_missing_inputs"]
        == coverage["complete_runs_missing_outputs"]
        == ["platform_nightly.marketing_export"]
    )
    assert coverage["complete_runs_missing_versions"] == []
    assert coverage["freshness_days"] == 7
    assert {"billing.refunds", "support.tickets", "marketing.campaign_list"} <= set(
        coverage["tables_without_recent_edges"]
    )
    assert "crm.learners" not in coverage["tables_without_recent_edges"]
    assert coverage["parse_failures_in_events"] == 0 and coverage["events_late"] == 0
    markdown = run.report_path.with_suffix(".md").read_text()
    assert "- complete runs missing inputs: platform_nightly.marketing_export\n" in markdown
    assert "- runs with lineage share: 100%\n" in markdown


BRANCH_DAG = """
from datetime import datetime
from airflow.sdk import DAG, task
from airflow_lineage_governance.dags.governance import governance_dag
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("offers", schedule="0 2 * * *", start_date=datetime(2026, 9, 1), catchup=False) as offers:
    @task.branch
    def pick(**context):
        return "weekday_offers" if context["logical_date"].weekday() < 5 else "weekend_offers"

    weekday = IcebergSqlOperator(task_id="weekday_offers", sql="create or replace table marketing.weekday_offers as "
                                 "select l.learner_id from crm.learners l where l.marketing_consent")
    weekend = IcebergSqlOperator(task_id="weekend_offers", sql="create or replace table marketing.weekend_offers as "
                                 "select l.learner_id, l.email from crm.learners l")
    pick() >> [weekday, weekend]

governance = governance_dag("offers_governance", "offers", schedule="0 2 * * *", start_date=datetime(2026, 9, 1))
"""


@pytest.fixture(scope="module")
def branch_run(tmp_path_factory, airflow_template):
    """A DAG whose branch runs weekday_offers on the logical date (a Thursday) and skips weekend_offers, run once
    through real Airflow."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog

    sandbox = Sandbox(tmp_path_factory.mktemp("branch-run"), airflow_template)
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.write_dag("offers", BRANCH_DAG)
    run = sandbox.dags_test("offers")
    assert run.returncode == 0, run.log[-3000:]
    assert run.task_events("weekend_offers", "COMPLETE") == [] and run.task_events("weekday_offers", "COMPLETE")
    return sandbox, run


def test_a_branch_not_taken_is_designed_not_observed(branch_run):
    sandbox, run = branch_run
    code, found, text = diff(sandbox, run.events_path, "--dag", "offers")
    assert code == 1 and found["compared"] == ["offers.weekday_offers", "offers.weekend_offers"]
    [designed] = found["designed_not_observed"]["jobs"]
    assert designed["job"] == "offers.weekend_offers"
    assert designed["reason"].startswith("no COMPLETE event of offers.weekend_offers as of ")
    assert designed["reason"].endswith("a branch not taken, or a collection gap")
    assert {
        "source": "crm.learners.email",
        "target": "marketing.weekend_offers.email",
        "type": "DIRECT",
        "subtype": "IDENTITY",
    } in designed["column_edges"]
    assert [t["table"] for t in found["designed_not_observed"]["tables"]] == ["marketing.weekend_offers"]
    assert found["observed_not_designed"] == {"jobs": [], "tables": []} and found["sql_hash_mismatches"] == []
    assert "offers.weekend_offers: no COMPLETE event" in text


def test_the_nightly_warns_of_the_branch_not_taken(branch_run):
    sandbox, _ = branch_run
    _, report = run_governance(
        sandbox, dag_id="offers_governance", AIRFLOW__LINEAGE_GOVERNANCE__DESIGN_DAGS_FOLDER=str(sandbox.dags)
    )
    [job] = [f for f in kinds(report, "designed_not_observed") if "job" in f]
    assert job["job"] == "offers.weekend_offers" and "branch not taken" in job["reason"]
    assert job["reason"].startswith("the task was skipped in the run checked")
    assert [f["table"] for f in kinds(report, "designed_not_observed") if "table" in f] == ["marketing.weekend_offers"]
    assert kinds(report, "observed_not_designed") == kinds(report, "sql_hash_mismatch") == []
    assert report["coverage"]["design_tasks_compared"] == 2 and report["coverage"]["design_differences"] == 2


def test_the_diff_from_the_lineage_store_is_the_diff_from_the_events(platform_run, tmp_path):
    sandbox, run = platform_run
    dags = tmp_path / "dags"
    shutil.copytree(sandbox.dags, dags)
    (dags / "sql" / "birthday_offers.sql").write_text(
        "create or replace table marketing.birthday_offers as\n"
        "select l.learner_id, l.country, l.email\nfrom crm.learners l\n"
        "where month(l.date_of_birth) = {{ logical_date.month }}\n"
    )
    manual = json.loads(json.dumps(run.task_events("marketing_audience", "COMPLETE")[0]))
    manual["job"]["name"] = "adhoc.audience_backfill"
    manual["run"]["runId"] = "01999a2e-0000-7000-8000-00000000cafe"
    manual["outputs"][0]["name"] = "marketing.audience_copy"
    events = tmp_path / "events.jsonl"
    events.write_text(run.events_path.read_text() + json.dumps(manual) + "\n")
    store = str(tmp_path / "lineage-store.duckdb")
    for args in (["init"], ["import", str(events)]):
        done = cli(sandbox, "store", *args, "--store", store)
        assert done.returncode == 0, done.stderr[-2000:]
    for folder in (sandbox.dags, dags):
        code, expected, expected_text = diff(sandbox, events, "--as-of", "2099-01-01T00:00:00Z", dags=folder)
        args = [
            "diff",
            str(folder),
            "--store",
            store,
            "--catalog",
            str(sandbox.catalog_folder),
            "--rules",
            RULES,
            "--metadata",
            METADATA,
            "--as-of",
            "2099-01-01T00:00:00Z",
        ]
        done, text = cli(sandbox, *args, "--json"), cli(sandbox, *args)
        assert done.returncode == text.returncode == code == 1, done.stderr[-2000:]
        found = json.loads(done.stdout)
        assert found.pop("events") == {"store": store}
        expected.pop("events")
        assert found == expected
        assert text.stdout == expected_text
