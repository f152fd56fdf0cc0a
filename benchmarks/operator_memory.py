"""An 8,000,000-row CTAS through `IcebergSqlOperator.execute` under a 256 MB DuckDB memory limit, against DuckDB's
own `COPY (same query) TO` a Parquet folder under the same limit and threads, each in a child process of its own
that measures its peak RSS growth (VmHWM after less VmRSS before, the peak reset through /proc/self/clear_refs).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/operator_memory.py [--rows N] [--memory-limit 256MB] [--threads 2]

The operator runs as a task runs it: its Airflow connection from the environment, its START and COMPLETE facets
read around `execute`, the memory limit and threads given as the operator's own arguments. Prints
`RESULT operator_memory rows=<rows> seconds=<operator> copy_seconds=<COPY> ratio=<operator/COPY>
rss_mb=<operator> copy_rss_mb=<COPY's> memory_limit=<limit>`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from streamed_write import QUERY, SOURCE, _reset_peak, _rss  # noqa: E402

SQL = "create or replace table bench.copy as " + QUERY


def prepare(folder: Path, rows: int) -> None:
    """Create bench.src, the rows the CTAS copies."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog
    from airflow_lineage_governance.iceberg.resources import Resources
    from airflow_lineage_governance.iceberg.run import run_statement
    from airflow_lineage_governance.kinds import StatementKind

    run_statement(
        open_local_catalog(folder),
        kind=StatementKind.CREATE_TABLE_AS,
        target="bench.src",
        query=SOURCE.format(rows=rows),
        sources=[],
        resources=Resources("1GB", 2),
    )


def run_operator(folder: Path, memory_limit: str, threads: int) -> dict[str, float]:
    """Run the CTAS through the operator in this process; return its rows, seconds and peak RSS growth."""
    from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
    from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

    extra = {**local_catalog_properties(folder), "catalog_name": "default"}
    os.environ["AIRFLOW_CONN_ICEBERG_DEFAULT"] = json.dumps({"conn_type": "iceberg_catalog", "extra": extra})
    os.environ.setdefault("AIRFLOW_HOME", str(folder / "airflow"))
    operator = IcebergSqlOperator(task_id="copy", sql=SQL, duckdb_memory_limit=memory_limit, duckdb_threads=threads)
    ti = SimpleNamespace(dag_id="bench", run_id="run", task_id="copy", map_index=-1, try_number=1)
    open_local_catalog(folder).load_table("bench.src")
    baseline = _reset_peak()
    started = time.perf_counter()
    operator.get_openlineage_facets_on_start()
    begun = time.perf_counter()
    result = operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})
    executed = time.perf_counter()
    operator.get_openlineage_facets_on_complete(ti)
    seconds = time.perf_counter() - started
    rows = int(open_local_catalog(folder).load_table("bench.copy").current_snapshot().summary["total-records"])
    assert result is not None
    return {
        "rows": rows,
        "seconds": seconds,
        "start_facets": begun - started,
        "execute": executed - begun,
        "rss": _rss()[1] - baseline,
    }


def run_copy(folder: Path, memory_limit: str, threads: int) -> dict[str, float]:
    """Run DuckDB's COPY of the same query over the same read in this process; return its rows, seconds, growth."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog
    from airflow_lineage_governance.iceberg.read import expose_tables, sandboxed_connection
    from airflow_lineage_governance.iceberg.resources import Resources, spill_folder

    catalog = open_local_catalog(folder)
    resources = Resources(memory_limit, threads, str(folder))
    catalog.load_table("bench.src")
    baseline = _reset_peak()
    started = time.perf_counter()
    with spill_folder(resources) as spill:
        connection = sandboxed_connection(resources=resources, spill=spill)
        expose_tables(connection, catalog, ["bench.src"])
        out = folder / "copy"
        connection.execute(
            f"COPY ({QUERY}) TO '{out}' (FORMAT parquet, OVERWRITE, FILE_SIZE_BYTES '128MiB', ROW_GROUP_SIZE 122880)"
        )
        rows = connection.execute(f"SELECT count(*) FROM read_parquet('{out}/*.parquet')").fetchall()[0][0]
        connection.close()
    return {"rows": rows, "seconds": time.perf_counter() - started, "rss": _rss()[1] - baseline}


def _child(folder: Path, case: str, args: argparse.Namespace) -> dict[str, float]:
    command = [sys.executable, __file__, "--case", case, "--folder", str(folder)]
    command += ["--memory-limit", args.memory_limit, "--threads", str(args.threads)]
    answer = subprocess.run(command, capture_output=True, text=True)
    if answer.returncode:
        sys.exit(f"case {case} failed:\n{answer.stderr[-3000:]}")
    return json.loads(answer.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    """Prepare the rows, run both cases in child processes and print the RESULT line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--memory-limit", default="256MB")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--case")
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.case:
        run = run_operator if args.case == "operator" else run_copy
        print(json.dumps(run(Path(args.folder), args.memory_limit, args.threads)))
        return
    with tempfile.TemporaryDirectory() as folder:
        prepare(Path(folder), args.rows)
        copy = _child(Path(folder), "copy", args)
        ours = _child(Path(folder), "operator", args)
    print(
        f"operator: START facets {ours['start_facets']:.2f} s, execute {ours['execute']:.2f} s, "
        f"COMPLETE facets {ours['seconds'] - ours['start_facets'] - ours['execute']:.2f} s"
    )
    print(
        f"RESULT operator_memory rows={ours['rows']} seconds={ours['seconds']:.2f} "
        f"copy_seconds={copy['seconds']:.2f} ratio={ours['seconds'] / copy['seconds']:.2f} "
        f"rss_mb={ours['rss'] / 2**20:.0f} copy_rss_mb={copy['rss'] / 2**20:.0f} memory_limit={args.memory_limit}"
    )


if __name__ == "__main__":
    main()
