"""DAG parsing cost: importing the repo's DAG files (dags/platform_nightly.py, dags/lineage_governance.py) in a
fresh interpreter after `import airflow.sdk`, against DAG files of the same shape made of EmptyOperators. The
scheduler's DAG processor and every task start pay this import.

    .venv/bin/python benchmarks/dag_parse.py [RUNS]

Prints the median import time of each file (RUNS fresh interpreters each, default 9), the heavy modules each
import loads, and `RESULT dag_parse ratio=<ours/empty>` (sum of the two medians over the two EmptyOperator
medians). Goal: ratio <= 1.10.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DAGS = REPO / "dags"
HEAVY = ("pyiceberg", "duckdb", "pyarrow", "sqlglot", "networkx", "openlineage.client")

EMPTY_PLATFORM = """
from datetime import datetime, timedelta
from pathlib import Path
from airflow.sdk import DAG, task
from airflow.providers.standard.operators.empty import EmptyOperator

SQL = Path(__file__).parent / "sql"
with DAG(dag_id="platform_nightly_empty", schedule="0 2 * * *", start_date=datetime(2026, 9, 1), catchup=False,
         default_args={"retries": 1, "retry_delay": timedelta(seconds=5)}, tags=["platform"]) as dag:
    pipelines = {name: EmptyOperator(task_id=name) for name in (
        "birthday_offers", "course_performance", "daily_revenue", "learner_activity", "marketing_audience",
        "review_corpus")}

    @task(task_id="marketing_export")
    def marketing_export() -> int:
        return 0

    pipelines["marketing_audience"] >> marketing_export()
"""

EMPTY_GOVERNANCE = """
from datetime import datetime
from airflow.sdk import DAG, task
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG(dag_id="lineage_governance_empty", schedule="0 2 * * *", start_date=datetime(2026, 9, 1), catchup=False,
         tags=["governance"]) as dag:
    wait = EmptyOperator(task_id="wait_for_lineage")

    @task
    def run_checks() -> dict:
        return {}

    @task
    def write_report(report: dict) -> str:
        return ""

    wait >> write_report(run_checks())
"""

PROBE = """
import json, runpy, sys, time
sys.path.insert(0, {dags!r})
import airflow.sdk
started = time.perf_counter()
runpy.run_path({path!r})
seconds = time.perf_counter() - started
print(json.dumps({{"seconds": seconds, "heavy": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def import_time(path: Path, dags: Path) -> tuple[float, list[str]]:
    """Returns the seconds a fresh interpreter spends importing the DAG file, and the heavy modules it loaded."""
    code = PROBE.format(dags=str(dags), path=str(path), heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=dags)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["heavy"]


def median_time(path: Path, dags: Path, runs: int) -> tuple[float, list[str]]:
    """Returns the median import time over `runs` interpreters (interleaving is the caller's) and the heavy
    modules."""
    times, heavy = [], []
    for _ in range(runs):
        seconds, heavy = import_time(path, dags)
        times.append(seconds)
    return statistics.median(times), heavy


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder)
        (empty / "platform_nightly_empty.py").write_text(EMPTY_PLATFORM)
        (empty / "lineage_governance_empty.py").write_text(EMPTY_GOVERNANCE)
        pairs = [
            (DAGS / "platform_nightly.py", empty / "platform_nightly_empty.py"),
            (DAGS / "lineage_governance.py", empty / "lineage_governance_empty.py"),
        ]
        ours_total = empty_total = 0.0
        for ours, peer in pairs:
            import_time(ours, DAGS)  # warm the file system cache and bytecode for both
            import_time(peer, DAGS)
            ours_s, heavy = median_time(ours, DAGS, runs)
            peer_s, _ = median_time(peer, DAGS, runs)
            ours_total += ours_s
            empty_total += peer_s
            print(
                f"{ours.name}: {ours_s * 1000:.0f} ms (heavy modules loaded: {', '.join(heavy) or 'none'}); "
                f"EmptyOperator twin {peer_s * 1000:.0f} ms; medians of {runs}"
            )
    print(f"RESULT dag_parse ratio={ours_total / empty_total:.2f}")


if __name__ == "__main__":
    main()
