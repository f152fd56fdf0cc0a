"""Mapped IcebergSqlOperator tasks on two workers, their lineage per map index, and the nightly governance DAG
reading every worker's events through Marquez."""

from __future__ import annotations

import json

from tests.distributed.checks import run_events, task_instance_facet
from tests.distributed.cluster import Cluster

DAG_ID = "distributed_mapped"
LOGICAL_DATE = "2026-03-02T00:00:00Z"
MAPPED = {"insert_by_sql": 3, "insert_by_kwargs": 2}


def test_each_map_index_writes_once_and_sends_its_own_lineage(cluster: Cluster):
    run_id = cluster.trigger(DAG_ID, LOGICAL_DATE)
    assert cluster.wait_for(DAG_ID, run_id, timeout=300) == "success"
    rows = cluster.catalog().load_table("dist.mapped").scan().to_arrow().to_pylist()
    expected = {(n + 100 * k, f"sql_{k}") for k in range(3) for n in range(5)}
    expected |= {(n + 1000 + 100 * k, f"kwargs_{k}") for k in range(2) for n in range(5)}
    assert sorted((row["id"], row["origin"]) for row in rows) == sorted(expected)

    events = run_events(cluster, DAG_ID, run_id)
    for task_id, count in MAPPED.items():
        completes = [e for e in events if e["job"]["name"] == f"{DAG_ID}.{task_id}" and e["eventType"] == "COMPLETE"]
        assert sorted(task_instance_facet(e)["map_index"] for e in completes) == list(range(count))
        assert len({e["run"]["runId"] for e in completes}) == count
        for event in completes:
            assert [o["name"] for o in event["outputs"]] == ["dist.mapped"]
            fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
            assert sorted(fields) == ["id", "origin"]
            assert fields["id"]["inputFields"][0]["name"] == "dist.numbers"


def test_the_governance_dag_accounts_for_every_map_index(cluster: Cluster):
    run_id = cluster.trigger("distributed_governance", LOGICAL_DATE)
    assert cluster.wait_for("distributed_governance", run_id, timeout=360) == "success"
    written = list((cluster.reports / "distributed_governance").glob("*/governance-report.json"))
    assert len(written) == 1, written
    report = json.loads(written[0].read_text())
    assert report["coverage"]["target_dag_id"] == "distributed_mapped"
    assert report["coverage"]["tasks_succeeded"] == report["coverage"]["tasks_with_lineage"] == 1 + sum(MAPPED.values())
    assert report["findings"] == []
