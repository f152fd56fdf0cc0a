"""What the distributed tests read back: a table's rows and files, a run's lineage events, which worker ran a
task instance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyiceberg.table import Table

from tests.distributed.cluster import Cluster


def data_files_on_disk(table: Table) -> set[str]:
    """Returns the Parquet files under the table's data folder, as `file:` URIs without the scheme."""
    root = Path(table.location().removeprefix("file:").removeprefix("//")) / "data"
    return {str(path) for path in root.rglob("*.parquet")}


def referenced_data_files(table: Table) -> set[str]:
    """Returns the data files any snapshot of the table references (its manifests, through pyiceberg)."""
    found = table.inspect.all_files().column("file_path").to_pylist() if table.snapshots() else []
    return {path.removeprefix("file:").removeprefix("//") for path in found}


def orphan_data_files(table: Table) -> dict[str, int]:
    """Returns each data file under the table's location that no snapshot references, with its row count."""
    return {
        path: pq.ParquetFile(path).metadata.num_rows
        for path in sorted(data_files_on_disk(table) - referenced_data_files(table))
    }


def detached_snapshots(table: Table) -> list[int]:
    """Returns the ids of the table's snapshots that are not in its current history (main's ancestry)."""
    current = table.current_snapshot()
    ancestry = set()
    while current is not None:
        ancestry.add(current.snapshot_id)
        current = table.snapshot_by_id(current.parent_snapshot_id) if current.parent_snapshot_id else None
    return [s.snapshot_id for s in table.snapshots() if s.snapshot_id not in ancestry]


def run_events(cluster: Cluster, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """Returns the task events Marquez holds for one DAG run, oldest first."""
    return [
        e
        for e in cluster.events()
        if e["job"]["name"].startswith(f"{dag_id}.")
        and ((e["run"].get("facets") or {}).get("airflow") or {}).get("dagRun", {}).get("run_id") == run_id
    ]


def task_instance_facet(event: dict[str, Any]) -> dict[str, Any]:
    return dict(event["run"]["facets"]["airflow"]["taskInstance"])


def worker_that_ran(cluster: Cluster, task_try: dict[str, Any]) -> str:
    """Returns the stack worker whose log shows it executing a task instance's try (the try's log path, which
    names the DAG, run, task, map index and attempt)."""
    mapped = f"map_index={task_try['map_index']}/" if task_try["map_index"] >= 0 else ""
    log_path = (
        f"log_path='dag_id={task_try['dag_id']}/run_id={task_try['dag_run_id']}/"
        f"task_id={task_try['task_id']}/{mapped}attempt={task_try['try_number']}.log'"
    )
    logs = {n: (cluster.home / "stack" / f"worker-{n}.log").read_text(errors="replace") for n in (1, 2)}
    ran = [f"worker-{n}" for n, text in logs.items() if log_path in text]
    assert len(ran) == 1, (log_path, ran)
    return ran[0]
