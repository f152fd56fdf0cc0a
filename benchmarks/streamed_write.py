"""Streamed writes under a DuckDB memory limit: 8,000,000 rows x 9 columns written by a CTAS, an INSERT, a
MERGE that rewrites a 4,000,000-row partition, and the CTAS through IcebergSqlOperator's render and execute(),
each beside DuckDB's own `COPY (same query) TO` a Parquet folder under the same memory limit and threads. Each case
runs in a child process of its own, which measures its peak RSS growth (VmHWM after the case less VmRSS before it,
the peak reset through /proc/self/clear_refs).

    .venv/bin/python benchmarks/streamed_write.py [--rows N] [--memory-limit 256MB] [--threads 2] [--cases merge]

The COPY writes with the compression codec the table's writes use (Iceberg's default, zstd), so both sides write
the same bytes; a second COPY with DuckDB's default codec (snappy, about twice the bytes) is timed beside them.
Prints one line per case: `RESULT streamed_write case=<ctas|insert|merge|operator_ctas> rows=<rows written>
seconds=<ours> copy_seconds=<DuckDB's COPY, same codec> ratio=<ours/COPY> default_codec_copy_seconds=<DuckDB's
COPY, snappy> default_codec_ratio=<ours/that COPY> rss_mb=<ours> copy_rss_mb=<COPY's>`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SOURCE = """SELECT range AS id, range % 100003 AS learner_id, (range % 997)::INTEGER AS course_id,
  ['video', 'quiz', 'reading', 'project'][(range % 4)::INTEGER + 1] AS category,
  ((range % 10000) / 100)::DECIMAL(10, 2) AS amount,
  CASE WHEN range % 7 = 0 THEN 'refunded' ELSE 'succeeded' END AS status,
  ((range * 2654435761) % 1000003) / 1000003.0 AS score,
  TIMESTAMP '2026-01-01' + to_seconds(range % 86400) AS at,
  DATE '2026-01-01' + (range % 2)::INTEGER AS day
FROM range({rows})"""
QUERY = "SELECT s.id, s.learner_id, s.course_id, s.category, s.amount, s.status, s.score, s.at, s.day FROM bench.src s"
MERGE = """MERGE INTO bench.parts t USING bench.changes c ON t.id = c.id
WHEN MATCHED THEN UPDATE SET amount = c.amount"""
CASES = ("ctas", "insert", "merge", "operator_ctas")
OPERATOR_CTAS = "CREATE TABLE bench.through_operator AS " + QUERY
REWRITTEN = "SELECT t.* FROM bench.parts t WHERE t.day = DATE '2026-01-01'"


def _rss() -> tuple[int, int]:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) * 1024, int(status["VmHWM"].split()[0]) * 1024


def _reset_peak() -> int:
    Path("/proc/self/clear_refs").write_text("5")
    return _rss()[0]


def prepare(folder: Path, rows: int) -> None:
    """Creates bench.src (the rows), bench.parts (the same rows, partitioned by day) and bench.changes (1% of the
    keys of the first day), all streamed by the provider's own write."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog
    from airflow_lineage_governance.iceberg.partitions import parse_partition_by
    from airflow_lineage_governance.iceberg.resources import Resources
    from airflow_lineage_governance.iceberg.run import run_statement
    from airflow_lineage_governance.kinds import StatementKind

    catalog = open_local_catalog(folder)
    resources = Resources("1GB", 2)
    ctas = StatementKind.CREATE_TABLE_AS
    run_statement(
        catalog, kind=ctas, target="bench.src", query=SOURCE.format(rows=rows), sources=[], resources=resources
    )
    run_statement(
        catalog,
        kind=ctas,
        target="bench.parts",
        query=QUERY,
        sources=["bench.src"],
        partition_by=parse_partition_by(["day"], "bench.parts"),
        resources=resources,
    )
    run_statement(
        catalog,
        kind=ctas,
        target="bench.changes",
        sources=["bench.src"],
        resources=resources,
        query="SELECT s.id, s.amount + 1 AS amount FROM bench.src s WHERE s.id % 200 = 0",
    )
    run_statement(
        catalog,
        kind=ctas,
        target="bench.empty",
        query=QUERY + " WHERE false",
        sources=["bench.src"],
        resources=resources,
    )


def run_case(folder: Path, case: str, memory_limit: str, threads: int, codec: str = "") -> dict[str, float]:
    """Runs one case in this process and returns its rows, seconds and peak RSS growth (bytes).

    A COPY case writes with `codec` (DuckDB's default when empty)."""
    import duckdb

    from airflow_lineage_governance.iceberg.catalog import open_local_catalog
    from airflow_lineage_governance.iceberg.read import expose_tables, sandboxed_connection
    from airflow_lineage_governance.iceberg.resources import Resources, spill_folder
    from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
    from airflow_lineage_governance.iceberg.run import run_statement
    from airflow_lineage_governance.kinds import StatementKind

    catalog = open_local_catalog(folder)
    resources = Resources(memory_limit, threads, str(folder))
    tables = {name: catalog.load_table(name) for name in ("bench.src", "bench.parts", "bench.empty")}
    duckdb.connect().close()
    if case == "operator_ctas":  # a task's process has imported Airflow and the DAG file's operator before it runs
        _connect_operator(folder)
    baseline = _reset_peak()
    started = time.perf_counter()
    if case == "ctas":
        run = run_statement(
            catalog,
            kind=StatementKind.CREATE_TABLE_AS,
            target="bench.copy",
            query=QUERY,
            sources=["bench.src"],
            resources=resources,
        )
        rows = run.write.rows
    elif case == "insert":
        run = run_statement(
            catalog,
            kind=StatementKind.INSERT,
            target="bench.empty",
            query=QUERY,
            sources=["bench.src"],
            resources=resources,
            insert_columns=[f.name for f in tables["bench.empty"].schema().fields],
        )
        rows = run.write.rows
    elif case == "merge":
        run = rewrite_statement(
            catalog, target="bench.parts", dml=MERGE, sources=["bench.changes"], resources=resources
        )
        seconds = time.perf_counter() - started
        rows = sum(
            task.file.record_count
            for task in catalog.load_table("bench.parts").scan(row_filter="day = '2026-01-01'").plan_files()
        )
        return {"rows": rows, "seconds": seconds, "rss": _rss()[1] - baseline, "changed": run.write.rows}
    elif case == "operator_ctas":  # the CTAS as a task runs it: IcebergSqlOperator, rendered, then execute()
        rows = _through_operator(folder, memory_limit, threads)
    else:  # copy_ctas, copy_insert, copy_merge, copy_operator_ctas: DuckDB's own COPY of the same rows
        query = REWRITTEN if case == "copy_merge" else QUERY
        with spill_folder(resources) as spill:
            connection = sandboxed_connection(resources=resources, spill=spill)
            expose_tables(connection, catalog, ["bench.src", "bench.parts"])
            out = folder / f"copy-{case}"
            compression = f", COMPRESSION {codec}" if codec else ""
            connection.execute(
                f"COPY ({query}) TO '{out}' (FORMAT parquet, OVERWRITE, FILE_SIZE_BYTES '128MiB', "
                f"ROW_GROUP_SIZE 122880{compression})"
            )
            rows = connection.execute(f"SELECT count(*) FROM read_parquet('{out}/*.parquet')").fetchall()[0][0]
            connection.close()
    seconds = time.perf_counter() - started
    return {"rows": rows, "seconds": seconds, "rss": _rss()[1] - baseline}


def _connect_operator(folder: Path) -> None:
    """Point the operator's default connection at the benchmark's catalog and import what a task's process has
    imported before it runs: the task runner, the DAG file's operator and the OpenLineage provider's listener (loaded
    with the provider's plugin when OpenLineage is on)."""
    import os

    from airflow_lineage_governance.iceberg.catalog import local_catalog_properties

    extra = {**local_catalog_properties(folder), "catalog_name": "default"}
    os.environ.setdefault("AIRFLOW_HOME", str(folder / "airflow"))
    os.environ["AIRFLOW_CONN_ICEBERG_DEFAULT"] = json.dumps({"conn_type": "iceberg_catalog", "extra": extra})
    import airflow.providers.openlineage.plugins.listener  # noqa: F401
    import airflow.providers.openlineage.plugins.openlineage  # noqa: F401
    import airflow.sdk.execution_time.task_runner  # noqa: F401

    import airflow_lineage_governance.operators.iceberg_sql  # noqa: F401


def _through_operator(folder: Path, memory_limit: str, threads: int) -> int:
    """Run the CTAS through IcebergSqlOperator (render, then execute) and return the rows it wrote."""
    from collections import defaultdict
    from types import SimpleNamespace

    import jinja2

    from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

    operator = IcebergSqlOperator(
        task_id="ctas", sql=OPERATOR_CTAS, duckdb_memory_limit=memory_limit, duckdb_threads=threads
    )
    ti = SimpleNamespace(dag_id="bench", run_id="run", task_id="ctas", map_index=-1, try_number=1)
    operator.render_template_fields({}, jinja2.Environment())
    return int(operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})["rows"])


def _child(folder: Path, case: str, args: argparse.Namespace, codec: str = "") -> dict[str, float]:
    answer = subprocess.run(
        [
            sys.executable,
            __file__,
            "--case",
            case,
            "--folder",
            str(folder),
            "--memory-limit",
            args.memory_limit,
            "--threads",
            str(args.threads),
            "--codec",
            codec,
        ],
        capture_output=True,
        text=True,
    )
    if answer.returncode:
        sys.exit(f"case {case} failed:\n{answer.stderr}")
    return json.loads(answer.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--memory-limit", default="256MB")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES), help="the cases to run, by name, comma-separated")
    parser.add_argument("--case")
    parser.add_argument("--folder")
    parser.add_argument("--codec", default="")
    args = parser.parse_args()
    cases = args.cases.split(",")
    if unknown := [case for case in cases if case not in CASES]:
        parser.error(f"no case named {', '.join(unknown)}: choose among {', '.join(CASES)}")
    if args.case:
        print(json.dumps(run_case(Path(args.folder), args.case, args.memory_limit, args.threads, args.codec)))
        return
    from pyiceberg.table import TableProperties

    codec = str(TableProperties.PARQUET_COMPRESSION_DEFAULT)
    with tempfile.TemporaryDirectory() as folder:
        prepare(Path(folder), args.rows)
        for case in cases:
            default_copy = _child(Path(folder), f"copy_{case}", args)
            copy = _child(Path(folder), f"copy_{case}", args, codec)
            ours = _child(Path(folder), case, args)
            print(
                f"RESULT streamed_write case={case} rows={ours['rows']} seconds={ours['seconds']:.2f} "
                f"copy_seconds={copy['seconds']:.2f} ratio={ours['seconds'] / copy['seconds']:.2f} "
                f"copy_codec={codec} default_codec_copy_seconds={default_copy['seconds']:.2f} "
                f"default_codec_ratio={ours['seconds'] / default_copy['seconds']:.2f} "
                f"rss_mb={ours['rss'] / 2**20:.0f} copy_rss_mb={copy['rss'] / 2**20:.0f} "
                f"memory_limit={args.memory_limit} threads={args.threads}",
                flush=True,
            )


if __name__ == "__main__":
    main()
