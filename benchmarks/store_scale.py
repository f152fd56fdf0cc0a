"""The lineage store at scale, per engine: ingest of the scale benchmark's history (one COMPLETE per job per run of its
DAG over 100 days, jobs = events / 100 up to 10,000 run daily, beyond that 10,000 jobs run events / 1,000,000 times a
day; a failed first try before one job-run in seven, and schema changes; benchmarks/history_scale.py) against
`json.loads` of every line, the store's size on disk (after `vacuum`) against the JSON Lines, the first impact answer
in a new process (opening the store read-only), as-of impact of random columns at random times, every edge as of
random times, the edges into one random table as of random times (what fed the table then), trace back and forward of
random output snapshots (p50, p99), and what the nightly governance checks ask of the store (each job's run now for
the design diff, the tables written now, the events of the last DAG run) in one go; each step's peak memory (RSS) in
its own process.

    .venv/bin/python benchmarks/store_scale.py [--events 1000000] [--engines duckdb,postgres] [--queries 1000]
        [--keep FOLDER] [--postgres-settings "shared_buffers=4GB max_wal_size=4GB"]

PostgreSQL is a server of its own started for the run (scripts/postgres/start.sh on a free loopback port, stopped
by its pid; `--postgres-settings` adds server settings). Prints one RESULT line per engine.

With `--keep FOLDER`, the generated history (`events.jsonl`), the DuckDB store and the PostgreSQL server's cluster
stay in FOLDER after the run, and a later run with the same FOLDER (and `--events`) asks its questions of the stores
kept there instead of ingesting again (a store of an older schema is upgraded first, as `store init` does): the
RESULT line then has no ingest figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import history_scale  # noqa: E402

if TYPE_CHECKING:
    from airflow_lineage_governance.refs import ColumnRef


STORE_VARIABLE = "STORE_SCALE_STORE"
"""The environment variable a step's process reads its store from: a PostgreSQL URL holds the server's password, which
a process's arguments would show to every user of the machine (`ps`)."""


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def impact_question(rng: random.Random, jobs: int) -> tuple[ColumnRef, datetime]:
    """Returns the next impact question of the benchmark's seeded draw: a column (a source's one time in five, else
    a job's output's) and a time within the history."""
    from airflow_lineage_governance.refs import ColumnRef, TableRef

    at = history_scale.START + timedelta(days=rng.uniform(0, history_scale.DAYS))
    table = (
        TableRef(("src",), f"s{rng.randrange(history_scale.SOURCES)}")
        if rng.random() < 0.2
        else TableRef(("out",), f"t{rng.randrange(jobs)}")
    )
    return ColumnRef(table, f"c{rng.randrange(history_scale.COLUMNS)}"), at


def worker(args: argparse.Namespace) -> None:
    """Runs one step in this process and prints its figures as JSON."""
    begun = time.perf_counter()
    from airflow_lineage_governance.graph.events import FileEventSource
    from airflow_lineage_governance.refs import TableRef
    from airflow_lineage_governance.store.errors import ColumnNotInStoreError
    from airflow_lineage_governance.store.ingest import dataset_id
    from airflow_lineage_governance.store.lineage_store import LineageStore

    location = os.environ[STORE_VARIABLE]
    if args.worker == "upgrade":
        with LineageStore.open(location) as store:
            store.vacuum()
            print(json.dumps({"version": store.version, "size": store.engine.size_bytes()}))
        return
    if args.worker == "ingest":
        with LineageStore.open(location, create=True) as store:
            started = time.perf_counter()
            report = store.ingest(FileEventSource(args.events_file), batch_size=args.batch_size)
            seconds = time.perf_counter() - started
            store.vacuum()
            size = store.engine.size_bytes()
        print(json.dumps({"seconds": seconds, "stored": report.stored, "size": size, "peak_mb": peak_mb()}))
        return
    jobs, runs = history_scale.shape_of(args.events)
    rng = random.Random(11)
    timings = []
    first = None
    with LineageStore.open(location, read_only=True) as store:
        for index in range(args.queries):
            column, at = impact_question(rng, jobs)
            started = time.perf_counter()
            try:
                store.impact(column, at)
            except ColumnNotInStoreError:
                pass  # a source column no job happened to read: answered with the one sentence
            timings.append(time.perf_counter() - started)
            if index == 0:
                first = time.perf_counter() - begun
        impact_peak = peak_mb()  # the questions below make larger answers: every edge at a time, whole traces
        as_of = []
        for _ in range(args.as_of_queries):
            at = history_scale.START + timedelta(days=rng.uniform(0, history_scale.DAYS))
            started = time.perf_counter()
            store.edges_as_of(at)
            as_of.append(time.perf_counter() - started)
        table_as_of = []
        for _ in range(args.table_as_of_queries):
            at = history_scale.START + timedelta(days=rng.uniform(0, history_scale.DAYS))
            table = TableRef(("out",), f"t{rng.randrange(jobs)}")
            started = time.perf_counter()
            store.edges_as_of(at, into=table)
            table_as_of.append(time.perf_counter() - started)
        traces: dict[str, list[float]] = {"back": [], "forward": []}
        for index in range(args.trace_queries * 2):
            table = TableRef(("out",), f"t{rng.randrange(jobs)}")
            written = store.engine.query(
                "SELECT snapshot FROM run_datasets WHERE dataset_id = ? AND role = 'output' ORDER BY snapshot",
                [dataset_id(table)],
            )
            snapshot = str(rng.choice(written)[0])
            direction = "back" if index % 2 == 0 else "forward"
            started = time.perf_counter()
            if direction == "back":
                store.trace_back(table, snapshot)
            else:
                store.trace_forward(table, snapshot)
            traces[direction].append(time.perf_counter() - started)
        started = time.perf_counter()
        store.observed_jobs()
        store.written_tables()
        store.run_events("dag", history_scale.dag_run_id(history_scale.DAYS - 1, 0, runs))
        checks_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "first_s": first,
                "p50_ms": statistics.median(timings) * 1000,
                "p99_ms": sorted(timings)[min(len(timings) - 1, int(len(timings) * 0.99))] * 1000,
                "as_of_first_ms": as_of[0] * 1000,
                "as_of_p50_ms": statistics.median(as_of) * 1000,
                "as_of_p99_ms": sorted(as_of)[min(len(as_of) - 1, int(len(as_of) * 0.99))] * 1000,
                **{f"table_as_of_{name}_ms": figure for name, figure in percentiles(table_as_of).items()},
                **{
                    f"trace_{direction}_{name}_ms": figure
                    for direction, timings in traces.items()
                    for name, figure in percentiles(timings).items()
                },
                "checks_s": checks_s,
                "impact_peak_mb": impact_peak,
                "peak_mb": peak_mb(),
            }
        )
    )


def percentiles(timings: list[float]) -> dict[str, float]:
    """Returns the median and 99th percentile of the timings, in milliseconds."""
    ordered = sorted(timings)
    return {
        "p50": statistics.median(ordered) * 1000,
        "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
    }


def loads_floor(path: Path) -> float:
    """Returns the seconds `json.loads` takes over every line of the file."""
    started = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - started


def run_step(store: str, *args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, STORE_VARIABLE: store},
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(argv: list[str]) -> None:
    options = argparse.ArgumentParser()
    options.add_argument(
        "--events",
        type=int,
        default=1_000_000,
        help="events in all (jobs = events / 100, at most 10,000, run more often a day beyond)",
    )
    options.add_argument("--engines", default="duckdb,postgres")
    options.add_argument("--queries", type=int, default=1000)
    options.add_argument("--as-of-queries", type=int, default=50, help="edges_as_of (every edge at a time) asked")
    options.add_argument(
        "--table-as-of-queries", type=int, default=500, help="edges_as_of into one random table at a random time"
    )
    options.add_argument("--trace-queries", type=int, default=200, help="trace back and trace forward, each")
    options.add_argument("--batch-size", type=int, default=20000)
    options.add_argument(
        "--postgres-settings",
        default="",
        help="more settings of the PostgreSQL server started, as NAME=VALUE words (scripts/postgres/start.sh)",
    )
    options.add_argument(
        "--history",
        help="the generated history's JSON Lines: written there when missing, else read (of the same --events)",
    )
    options.add_argument(
        "--keep", help="a folder keeping the history and the stores between runs: a store found there is not ingested"
    )
    options.add_argument("--worker", choices=("ingest", "queries", "upgrade"))
    options.add_argument("--events-file")
    args = options.parse_args(argv)
    if args.worker:
        worker(args)
        return
    jobs, runs = history_scale.shape_of(args.events)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep) if args.keep else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = Path(args.history) if args.history else folder / "events.jsonl"
        if not path.exists():
            history_scale.write_events(path, jobs, failures=True, runs=runs)
        size = path.stat().st_size
        with path.open("rb") as handle:
            parsed = sum(1 for _ in handle)
        print(
            f"{parsed:,} events ({size / 1e6:.0f} MB of JSON Lines; {jobs:,} jobs x {runs} runs a day x "
            f"{history_scale.DAYS} days)"
        )
        floor = 0.0  # json.loads of every line, measured once before the first ingest
        for engine in args.engines.split(","):
            server = None
            ingested_mark = folder / f"{engine}-ingested.json"
            if engine == "duckdb":
                store = str(folder / "lineage-store.duckdb")
            else:
                server = folder / "postgres" if args.keep else Path(tempfile.mkdtemp(prefix="lineage-store-pg-"))
                secret = folder / "postgres-password"
                if not secret.exists():
                    secret.write_text(secrets.token_hex(16))
                password, port = secret.read_text(), free_port()
                subprocess.run(
                    ["bash", str(ROOT / "scripts/postgres/start.sh"), str(server), str(port)],
                    check=True,
                    env={
                        "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
                        "LINEAGE_STORE_PG_PASSWORD": password,
                        "LINEAGE_STORE_PG_SETTINGS": args.postgres_settings,
                    },
                    capture_output=True,
                )
                store = f"postgresql://lineage:{password}@127.0.0.1:{port}/lineage"
            try:
                ingested: dict[str, float] | None = None
                if args.keep and ingested_mark.exists():
                    kept = run_step(store, "--worker", "upgrade")
                else:
                    if not floor:
                        floor = loads_floor(path)
                        print(f"json.loads floor {floor:.2f} s")
                    ingested = run_step(
                        store,
                        "--worker",
                        "ingest",
                        "--events-file",
                        str(path),
                        "--batch-size",
                        str(args.batch_size),
                    )
                    ingested_mark.write_text(json.dumps(ingested))
                    kept = ingested
                asked = run_step(
                    store,
                    "--worker",
                    "queries",
                    "--events",
                    str(args.events),
                    "--queries",
                    str(args.queries),
                    "--as-of-queries",
                    str(args.as_of_queries),
                    "--table-as-of-queries",
                    str(args.table_as_of_queries),
                    "--trace-queries",
                    str(args.trace_queries),
                )
            finally:
                if server is not None:
                    subprocess.run(["bash", str(ROOT / "scripts/postgres/stop.sh"), str(server)], check=True)
                    if not args.keep:
                        shutil.rmtree(server, ignore_errors=True)
            report(engine, args, parsed, size, floor, ingested, {**asked, "size": kept["size"]})


def report(
    engine: str,
    args: argparse.Namespace,
    parsed: int,
    size: int,
    floor: float,
    ingested: dict[str, float] | None,
    asked: dict[str, float],
) -> None:
    """Prints an engine's figures, and its RESULT line (without ingest figures when the store was kept from before)."""
    stored = (
        f"ingest {ingested['seconds']:.1f} s ({ingested['stored']:,.0f} events, peak {ingested['peak_mb']:.0f} MB)"
        if ingested is not None
        else "store kept from an earlier run (not ingested; upgraded and vacuumed)"
    )
    print(
        f"{engine}: {stored}; store {asked['size'] / 1e6:.0f} MB on disk; first impact in a new process "
        f"{asked['first_s']:.2f} s; impact of {args.queries:,} "
        f"random columns at random times p50 {asked['p50_ms']:.1f} ms, p99 {asked['p99_ms']:.1f} ms; every edge as "
        f"of {args.as_of_queries:,} random times p50 {asked['as_of_p50_ms']:.1f} ms, p99 "
        f"{asked['as_of_p99_ms']:.1f} ms (the process's first {asked['as_of_first_ms']:.1f} ms); the edges into one "
        f"random table as of {args.table_as_of_queries:,} random "
        f"times p50 {asked['table_as_of_p50_ms']:.1f} ms, p99 {asked['table_as_of_p99_ms']:.1f} ms; trace back of "
        f"{args.trace_queries:,} random snapshots p50 "
        f"{asked['trace_back_p50_ms']:.1f} ms, p99 {asked['trace_back_p99_ms']:.1f} ms, trace forward p50 "
        f"{asked['trace_forward_p50_ms']:.1f} ms, p99 {asked['trace_forward_p99_ms']:.1f} ms; the checks' "
        f"questions {asked['checks_s']:.2f} s (peak {asked['peak_mb']:.0f} MB, {asked['impact_peak_mb']:.0f} MB after "
        "the impact questions)"
    )
    ingest_figures = f"ingest_ratio_vs_json_loads={ingested['seconds'] / floor:.2f} " if ingested is not None else ""
    print(
        f"RESULT store_scale engine={engine} events={parsed} {ingest_figures}"
        f"size_ratio_vs_jsonl={asked['size'] / size:.3f} "
        f"first_impact_s={asked['first_s']:.2f} impact_p50_ms={asked['p50_ms']:.1f} "
        f"impact_p99_ms={asked['p99_ms']:.1f} as_of_p50_ms={asked['as_of_p50_ms']:.1f} "
        f"as_of_p99_ms={asked['as_of_p99_ms']:.1f} as_of_first_ms={asked['as_of_first_ms']:.1f} "
        f"table_as_of_p50_ms={asked['table_as_of_p50_ms']:.1f} "
        f"table_as_of_p99_ms={asked['table_as_of_p99_ms']:.1f} trace_back_p99_ms={asked['trace_back_p99_ms']:.1f} "
        f"trace_forward_p99_ms={asked['trace_forward_p99_ms']:.1f} checks_s={asked['checks_s']:.2f} "
        + (f"ingest_peak_mb={ingested['peak_mb']:.0f} " if ingested is not None else "")
        + f"impact_peak_mb={asked['impact_peak_mb']:.0f} query_peak_mb={asked['peak_mb']:.0f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
