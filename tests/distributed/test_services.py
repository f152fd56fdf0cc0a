"""The broker and the metadata database going away mid-run: queued tasks still run, no task is lost."""

from __future__ import annotations

import time

from tests.distributed.cluster import Cluster, wait_until

DAG_ID = "distributed_mapped"


def queued_or_running(cluster: Cluster, run_id: str) -> bool:
    states = {ti["state"] for ti in cluster.api.task_instances(DAG_ID, run_id).values()}
    return bool(states & {"queued", "running"})


def test_a_redis_restart_loses_no_queued_task(cluster: Cluster):
    run_id = cluster.trigger(DAG_ID, "2026-05-01T00:00:00Z")
    wait_until(lambda: queued_or_running(cluster, run_id), 120, "a queued task")
    cluster.redis.stop()
    time.sleep(3)
    cluster.redis.start()
    assert cluster.wait_for(DAG_ID, run_id, timeout=300) == "success"
    assert len(cluster.catalog().load_table("dist.mapped").scan().to_arrow()) == 25


def test_a_postgresql_outage_loses_no_task(cluster: Cluster):
    run_id = cluster.trigger(DAG_ID, "2026-05-02T00:00:00Z")
    wait_until(lambda: queued_or_running(cluster, run_id), 120, "a queued task")
    cluster.postgres.stop()
    time.sleep(5)
    cluster.postgres.start()
    assert cluster.wait_for(DAG_ID, run_id, timeout=400) == "success"
    assert len(cluster.catalog().load_table("dist.mapped").scan().to_arrow()) == 25
