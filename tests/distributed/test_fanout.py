"""Twenty IcebergSqlOperator tasks writing one partitioned table at once, on two Celery workers."""

from __future__ import annotations

from collections import Counter

from pyiceberg.table import Table

from tests.distributed.checks import detached_snapshots, orphan_data_files, worker_that_ran
from tests.distributed.cluster import Cluster

DAG_ID = "distributed_fanout"
INSERTS = 14
MERGED = {
    "merge_0": (0, 3),
    "merge_1": (4, 6),
    "merge_2": (7, 9),
    "merge_3": (30, 39),
    "merge_4": (40, 49),
    "merge_5": (50, 59),
}
WRITERS = [f"insert_{i}" for i in range(INSERTS)] + list(MERGED)


def expected_rows() -> dict[int, tuple[int, int]]:
    """Returns id -> (part, value) of the table after every writer ran once."""
    rows = {n: (n // 10, 0) for n in range(60)}
    for low, high in MERGED.values():
        for n in range(low, high + 1):
            rows[n] = (rows[n][0], rows[n][1] + 1)
    for i in range(INSERTS):
        rows.update({1000 + i * 10 + n: (10 + i % 4, i) for n in range(10)})
    return rows


def snapshots_after(table: Table, snapshot_id: int) -> list[dict[str, str]]:
    """Returns the summaries of the snapshots committed after `snapshot_id`, oldest first."""
    ordered = sorted(table.snapshots(), key=lambda s: s.sequence_number)
    later = [s for s in ordered if s.sequence_number > table.snapshot_by_id(snapshot_id).sequence_number]
    return [dict(s.summary.additional_properties) if s.summary else {} for s in later]


def test_twenty_concurrent_writers_land_every_row_once_in_twenty_commits(cluster: Cluster):
    run_id = cluster.trigger(DAG_ID, "2026-03-01T00:00:00Z")
    assert cluster.wait_for(DAG_ID, run_id, timeout=420) == "success"
    instances = cluster.api.task_instances(DAG_ID, run_id)
    # the operator retried every commit conflict itself: no task needed a second try
    assert {task: ti["try_number"] for task, ti in instances.items()} == {task: 1 for task in ["seed", *WRITERS]}

    table = cluster.catalog().load_table("dist.fanout")
    rows = table.scan().to_arrow().to_pylist()
    assert Counter(row["id"] for row in rows).most_common(1)[0][1] == 1
    assert {row["id"]: (row["part"], row["value"]) for row in rows} == expected_rows()
    assert [field.name for field in table.spec().fields] == ["part"]

    seed = cluster.api.xcom(DAG_ID, run_id, "seed", "return_value")
    later = snapshots_after(table, int(seed["snapshot_id"]))
    assert len(later) == 20
    assert sorted(summary["airflow.write_key"].split("/")[1] for summary in later) == sorted(WRITERS)
    assert detached_snapshots(table) == []
    # every conflict retry removed the files of its failed attempt: each data file is one a snapshot references
    assert orphan_data_files(table) == {}

    ran_on = Counter(worker_that_ran(cluster, ti) for ti in instances.values())
    assert set(ran_on) == {"worker-1", "worker-2"}, ran_on
