"""Lineage with time on events real Airflow runs produced: the platform's nightly DAG run for one logical date,
a source table changed (rows appended with pyiceberg), the DAG run again for the next date; then the second
run's analytics.course_performance snapshot traced back to the exact input snapshots, forwards from the changed
source snapshot, and the answers as of a time between the two runs."""

from __future__ import annotations

import json
import subprocess

import pytest

from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.events import parse_time
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.refs import ColumnRef, TableRef
from learning_platform.seed import seed_platform
from tests.support.sandbox import REPO, VENV_BIN, Sandbox

pytestmark = pytest.mark.integration
T = TableRef.parse
PERFORMANCE, ENROLLMENTS = T("analytics.course_performance"), T("learning.enrollments")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, airflow_template):
    """The events of two nightly runs with learning.enrollments changed between them (built once: slow), and
    the snapshot of enrollments after the change."""
    sandbox = Sandbox(tmp_path_factory.mktemp("history-runs"), airflow_template)
    catalog = open_local_catalog(sandbox.catalog_folder)
    seed_platform(catalog)
    sandbox.copy_repo_dags()
    first = sandbox.dags_test("platform_nightly", "2026-10-01T02:00:00+00:00")
    assert first.returncode == 0, first.log[-3000:]
    enrollments = catalog.load_table("learning.enrollments")
    enrollments.append(enrollments.scan(limit=25).to_arrow())
    changed = str(catalog.load_table("learning.enrollments").current_snapshot().snapshot_id)
    second = sandbox.dags_test("platform_nightly", "2026-10-02T02:00:00+00:00")
    assert second.returncode == 0, second.log[-3000:]
    return sandbox, second, changed


def completes(run, task: str) -> list[dict]:
    return sorted(run.task_events(task, "COMPLETE"), key=lambda e: e["eventTime"])


def snapshot_of(event: dict) -> str:
    return event["outputs"][0]["facets"]["version"]["datasetVersion"]


def test_trace_back_names_the_run_try_sql_and_each_input_snapshot_read(two_runs):
    sandbox, run, changed = two_runs
    governance = StoredGovernance.from_events(run.events_path)
    earlier, later = completes(run, "course_performance")
    origin = governance.trace(f"analytics.course_performance@{snapshot_of(later)}")
    assert origin.run.run_id == later["run"]["runId"] and origin.run.try_number == 1
    assert (
        origin.run.sql_hash is not None
        and origin.run.sql_hash == governance.trace(f"analytics.course_performance@{snapshot_of(earlier)}").run.sql_hash
    )  # the same SQL both nights
    read = {str(o.table): o.snapshot for o in origin.inputs}
    assert read == {d["name"]: d["facets"]["version"]["datasetVersion"] for d in later["inputs"]}
    assert read["learning.enrollments"] == changed
    assert all(o.run is None for o in origin.inputs)  # sources: the seed wrote them, no run of the platform
    before = governance.trace(f"analytics.course_performance@{snapshot_of(earlier)}")
    assert {str(o.table): o.snapshot for o in before.inputs}["learning.enrollments"] != changed


def test_trace_forward_lists_every_output_that_read_the_changed_snapshot(two_runs):
    sandbox, run, changed = two_runs
    governance = StoredGovernance.from_events(run.events_path)
    forward = governance.trace(f"learning.enrollments@{changed}", forward=True)
    earlier, later = completes(run, "course_performance")
    found = {(str(c.table), c.snapshot) for c in forward}
    assert ("analytics.course_performance", snapshot_of(later)) in found
    assert ("analytics.course_performance", snapshot_of(earlier)) not in found
    performance = next(c for c in forward if c.table == PERFORMANCE)
    assert (performance.owner, performance.tier) == ("analytics-team", 1)
    assert performance.run.run_id == later["run"]["runId"]


def test_answers_as_of_a_time_between_the_runs_come_from_the_first(two_runs):
    sandbox, run, changed = two_runs
    governance = StoredGovernance.from_events(run.events_path)
    earlier, later = completes(run, "course_performance")
    between = parse_time(later["eventTime"]) - (parse_time(later["eventTime"]) - parse_time(earlier["eventTime"])) / 2
    impact = governance.impact("learning.enrollments.enrollment_id", at=between)
    hop = impact.reached[ColumnRef(PERFORMANCE, "enrollments")].hops[-1].to_dict()
    assert hop["run_id"] == earlier["run"]["runId"] and hop["output_snapshot"] == snapshot_of(earlier)
    now = governance.impact("learning.enrollments.enrollment_id")
    hop = now.reached[ColumnRef(PERFORMANCE, "enrollments")].hops[-1].to_dict()
    assert hop["run_id"] == later["run"]["runId"] and hop["input_snapshot"] == changed
    then = {e.run_id for e in governance.graph(between).edges() if e.job == "platform_nightly.course_performance"}
    assert then == {earlier["run"]["runId"]}


def test_the_cli_traces_as_a_user_runs_it(two_runs):
    sandbox, run, changed = two_runs
    later = completes(run, "course_performance")[-1]
    common = [
        "--events",
        str(run.events_path),
        "--rules",
        str(REPO / "governance" / "lineage.toml"),
        "--metadata",
        str(REPO / "governance" / "metadata.toml"),
    ]
    done = subprocess.run(
        [
            str(VENV_BIN / "lineage-governance"),
            "trace",
            f"analytics.course_performance@{snapshot_of(later)}",
            "--json",
            *common,
        ],
        capture_output=True,
        text=True,
        env=sandbox.env(),
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    origin = json.loads(done.stdout)["origin"]
    assert origin["written_by"]["run_id"] == later["run"]["runId"]
    assert origin["written_by"]["inputs"]["learning.enrollments"] == changed
    text = subprocess.run(
        [str(VENV_BIN / "lineage-governance"), "trace", f"learning.enrollments@{changed}", "--forward", *common],
        capture_output=True,
        text=True,
        env=sandbox.env(),
        cwd=REPO,
        timeout=120,
    )
    assert text.returncode == 0 and f"analytics.course_performance@{snapshot_of(later)}" in text.stdout
    missing = subprocess.run(
        [str(VENV_BIN / "lineage-governance"), "trace", "learning.enrollments@1", *common],
        capture_output=True,
        text=True,
        env=sandbox.env(),
        cwd=REPO,
        timeout=120,
    )
    assert missing.returncode == 2 and "no received COMPLETE event wrote or read this snapshot" in missing.stderr
