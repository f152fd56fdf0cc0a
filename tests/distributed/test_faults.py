"""A Celery worker killed (SIGKILL, with its task processes: a lost host) while its task is mid-write: before
the commit, and after the commit but before the COMPLETE event. The task is retried on the other worker."""

from __future__ import annotations

import re

import pytest

from tests.distributed.checks import (
    detached_snapshots,
    orphan_data_files,
    run_events,
    task_instance_facet,
    worker_that_ran,
)
from tests.distributed.cluster import Cluster, wait_until

ROWS = 100
DATES = {"before_commit": "2026-04-01T00:00:00Z", "after_commit": "2026-04-02T00:00:00Z"}


@pytest.mark.parametrize("point", ["before_commit", "after_commit"])
def test_a_task_killed_with_its_worker_is_retried_on_the_other_and_lands_once(cluster: Cluster, point: str):
    dag_id, table_name = f"distributed_fault_{point}", f"dist.fault_{point}"
    armed = cluster.dags / "faults" / f"{table_name}.{point}"
    armed.write_text("")
    run_id = cluster.trigger(dag_id, DATES[point])
    reached = armed.with_name(armed.name + ".reached")
    pid = int(wait_until(lambda: reached.exists() and reached.read_text(), 240, f"the {point} point"))
    killed = cluster.worker_of(pid)
    cluster.kill_worker(killed)
    try:
        state = cluster.wait_for(dag_id, run_id, timeout=240)
    finally:
        cluster.restart_component(killed)
    assert state == "success"

    tries = cluster.tries(dag_id, run_id, "insert_rows")
    assert [(t["try_number"], t["state"]) for t in tries] == [(1, "failed"), (2, "success")]
    assert worker_that_ran(cluster, tries[0]) == killed
    assert worker_that_ran(cluster, tries[1]) != killed
    result = cluster.api.xcom(dag_id, run_id, "insert_rows", "return_value")
    assert result["already_written"] is (point == "after_commit")

    table = cluster.catalog().load_table(table_name)
    ids = sorted(row["id"] for row in table.scan().to_arrow().to_pylist())
    assert ids == list(range(ROWS))
    assert len(table.snapshots()) == 1
    assert detached_snapshots(table) == []
    # before the commit, the killed try's data files were written and never committed: try 2 removed them
    assert orphan_data_files(table) == {}
    removed = [line for line in cluster.api.log_lines(dag_id, run_id, "insert_rows", 2) if "an earlier try" in line]
    if point == "before_commit":
        assert len(removed) == 1 and re.fullmatch(
            r"\s*removed \d+ files that an earlier try of this task instance wrote under the table's location and "
            r"never committed",
            removed[0],
        ), removed
    else:
        assert removed == []

    events = [e for e in run_events(cluster, dag_id, run_id) if e["job"]["name"] == f"{dag_id}.insert_rows"]
    by_try: dict[int, list[str]] = {}
    for event in events:
        by_try.setdefault(task_instance_facet(event)["try_number"], []).append(event["eventType"])
    # try 1's FAIL is the scheduler's, sent when it failed the try of the lost worker
    assert by_try == {1: ["START", "FAIL"], 2: ["START", "COMPLETE"]}
    assert len({e["run"]["runId"] for e in events}) == 2
