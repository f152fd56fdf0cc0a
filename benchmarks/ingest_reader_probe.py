"""How fast DuckDB's own JSON reader reads an events file's parts, against `json.loads` of the same lines.

    .venv/bin/python benchmarks/ingest_reader_probe.py EVENTS_FILE [--threads 2]

The ingest's goal is at most twice `json.loads` over the events; its preparing in Python alone takes two to three
times that. This probe measures what an ingest deriving its rows in the database would start from, on DuckDB in
memory: reading every line into typed columns (the run's id, DAG run and try, the job, the event's type and time,
each input's and output's name and version, each output's column lineage and schema as JSON text), one row per
dataset read or written (`run_datasets`' rows), and a key of each COMPLETE's outputs' lineage (the lineages the
ingest derives once). It stores nothing and checks nothing the ingest checks (names, ids, hostile lines). Prints
the seconds of each step and a RESULT line with their ratio to `json.loads`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.store_scale import loads_floor  # noqa: E402  (the store benchmark's floor, the same way)

EVENTS = (
    "SELECT eventType AS event_type, eventTime AS event_time, run.runId AS run_id, "
    "run.facets.airflow.dagRun.run_id AS dag_run_id, run.facets.airflow.taskInstance.try_number AS try_number, "
    "job.namespace AS job_namespace, job.name AS job_name, inputs, outputs FROM read_ndjson(?, columns = {"
    "eventType: 'VARCHAR', eventTime: 'VARCHAR', run: 'STRUCT(runId VARCHAR, facets STRUCT(airflow STRUCT(dagRun "
    "STRUCT(run_id VARCHAR), taskInstance STRUCT(try_number INTEGER))))', job: 'STRUCT(namespace VARCHAR, name "
    "VARCHAR)', inputs: 'STRUCT(namespace VARCHAR, name VARCHAR, facets STRUCT(version STRUCT(datasetVersion "
    "VARCHAR)))[]', outputs: 'STRUCT(namespace VARCHAR, name VARCHAR, facets STRUCT(version STRUCT(datasetVersion "
    "VARCHAR), columnLineage JSON, schema JSON))[]'}, maximum_object_size = 100000000)"
)
DATASETS = (
    "SELECT run_id, event_type, 'input' AS role, d.namespace, d.name, d.facets.version.datasetVersion AS snapshot "
    "FROM (SELECT run_id, event_type, unnest(inputs) AS d FROM events) UNION ALL SELECT run_id, event_type, 'output', "
    "d.namespace, d.name, d.facets.version.datasetVersion FROM (SELECT run_id, event_type, unnest(outputs) AS d FROM "
    "events)"
)
LINEAGE_KEYS = (
    "SELECT run_id, hash(list(CAST(d.facets.columnLineage AS VARCHAR) || CAST(d.facets.schema AS VARCHAR))) AS key "
    "FROM (SELECT run_id, unnest(outputs) AS d FROM events WHERE event_type = 'COMPLETE') GROUP BY run_id"
)


def main(argv: list[str]) -> None:
    """Time each step, then `json.loads`, and print them with a RESULT line."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("events", type=Path)
    options.add_argument("--threads", type=int, default=2, help="DuckDB's threads (the machine's cores)")
    args = options.parse_args(argv)
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"SET threads = {args.threads}")
    steps: dict[str, float] = {}
    for name, sql, params in [
        ("read", f"CREATE TABLE events AS {EVENTS}", [str(args.events)]),
        ("datasets", f"CREATE TABLE datasets AS {DATASETS}", []),
        ("lineage_keys", f"CREATE TABLE lineage_keys AS {LINEAGE_KEYS}", []),
    ]:
        started = time.perf_counter()
        connection.execute(sql, params)
        steps[name] = time.perf_counter() - started
    [(events,)] = connection.execute("SELECT count(*) FROM events").fetchall()
    [(datasets,)] = connection.execute("SELECT count(*) FROM datasets").fetchall()
    [(completes, lineages)] = connection.execute("SELECT count(*), count(DISTINCT key) FROM lineage_keys").fetchall()
    connection.close()
    floor = loads_floor(args.events)
    total = sum(steps.values())
    print(
        f"{events:,} events: read {steps['read']:.1f} s, {datasets:,} datasets {steps['datasets']:.1f} s, "
        f"{completes:,} COMPLETEs' {lineages:,} lineages keyed {steps['lineage_keys']:.1f} s; json.loads {floor:.1f} s"
    )
    print(
        f"RESULT ingest_reader_probe events={events} threads={args.threads} read_ratio_vs_json_loads="
        f"{steps['read'] / floor:.2f} all_ratio_vs_json_loads={total / floor:.2f} json_loads_s={floor:.1f} "
        f"distinct_lineages={lineages}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
