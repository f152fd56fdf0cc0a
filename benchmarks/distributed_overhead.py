"""The operator's own time per task on two Celery workers against LocalExecutor: the same DAG of twenty
concurrent IcebergSqlOperator CTAS tasks (benchmarks/dags/overhead_fanout.py) run through a real scheduler on each
executor, over the same services (PostgreSQL, Redis, the Iceberg REST catalog: tests/distributed/cluster.py, which
starts Airflow through scripts/airflow_stack.py), and the time of each phase read from the task logs, where the
operator writes it (`Operator time of this try: ...`): parse, lineage, run (pin the reads, run the statement on
DuckDB), commit (write the data files, commit them) and event (the COMPLETE event's facets). Airflow's own cost
(task process start-up, DAG file import, scheduling) is not in these figures.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/distributed_overhead.py [runs]

Prints the median of each phase per executor over every task of `runs` DAG runs (default 2), and ends with
`RESULT distributed_overhead parse=... lineage=... run=... commit=... event=... overall=...`, each the ratio
Celery / LocalExecutor of the medians (overall: of each task's summed phases).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.operators.summary import OVERHEAD  # noqa: E402
from tests.distributed.cluster import Cluster, running_cluster  # noqa: E402

DAGS = Path(__file__).resolve().parent / "dags"
DAG_ID = "overhead_fanout"
PHASES = ("parse", "lineage", "run", "commit", "event")
PHASE = re.compile(r"(\w+) ([0-9.]+) ms")


def phases_of(lines: list[str]) -> dict[str, float]:
    """Returns the milliseconds of each phase the operator's log lines give."""
    found: dict[str, float] = {}
    for line in lines:
        if line.startswith(OVERHEAD):
            found.update({name: float(ms) for name, ms in PHASE.findall(line.split(":", 1)[1])})
    return found


def measure(cluster: Cluster, runs: int) -> tuple[list[dict[str, float]], int]:
    """Runs the DAG `runs` times, one run after another; returns the phases of each task whose log gives every
    phase, and how many tasks' logs lack one (the COMPLETE event's facets are built in a process the OpenLineage
    listener forks, which it ends after `[openlineage] execution_timeout`)."""
    measured, incomplete = [], 0
    for number in range(runs):
        run_id = cluster.trigger(DAG_ID, f"2026-05-{number + 1:02d}T00:00:00Z")
        state = cluster.wait_for(DAG_ID, run_id, timeout=900)
        if state != "success":
            raise SystemExit(f"the {DAG_ID} run {run_id} ended {state}; see the logs in {cluster.home}")
        for task_id in cluster.api.task_instances(DAG_ID, run_id):
            phases = phases_of(cluster.api.log_lines(DAG_ID, run_id, task_id))
            if all(phase in phases for phase in PHASES):
                measured.append(phases)
            else:
                incomplete += 1
    if not measured:
        raise SystemExit(f"no task's log gives every phase; see the logs in {cluster.home}")
    return measured, incomplete


def medians(measured: list[dict[str, float]]) -> dict[str, float]:
    """Returns the median of each phase, and of each task's phases summed (`overall`)."""
    found = {phase: statistics.median(task[phase] for task in measured) for phase in PHASES}
    found["overall"] = statistics.median(sum(task[phase] for phase in PHASES) for task in measured)
    return found


def main(runs: int = 2) -> None:
    results = {}
    for executor in ("local", "celery"):
        with tempfile.TemporaryDirectory(prefix=f"overhead-{executor}-") as folder:
            with running_cluster(Path(folder), executor=executor, with_marquez=False, dags_from=DAGS) as cluster:
                before = os.getloadavg()[0]
                measured, incomplete = measure(cluster, runs)
                after = os.getloadavg()[0]
        results[executor] = medians(measured)
        shown = ", ".join(f"{name} {ms:.1f} ms" for name, ms in results[executor].items())
        lacking = f", {incomplete} without every phase left out" if incomplete else ""
        print(
            f"{executor}: {len(measured)} tasks{lacking}, median per task: {shown} "
            f"(1-minute load {before:.2f} -> {after:.2f})"
        )
    ratios = " ".join(f"{name}={results['celery'][name] / results['local'][name]:.2f}" for name in results["local"])
    print(f"RESULT distributed_overhead {ratios}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
