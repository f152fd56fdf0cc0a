"""Lineage with time at scale: one COMPLETE per job per day, 10,000 jobs over 100 days (1,000,000
events), each with input and output snapshots (version facets), an `airflow` run facet with the try, and the
SQL facet; each job's lineage changes every 30 to 60 days (a new shape), so the history holds superseded edges.

    .venv/bin/python benchmarks/governance_scale.py --history [--events 1000000]

Measures: `json.loads` of every line (the floor); reading every event into the indexed history (every COMPLETE
kept, with its evidence); as-of impact of 1,000 random columns at 1,000 random times (p50, p99); trace back of
1,000 random snapshots and trace forward of 1,000 others (p50, p99); peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.graph.asof import AsOf  # noqa: E402
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError  # noqa: E402
from airflow_lineage_governance.graph.events import (  # noqa: E402
    FileEventSource,
    keep_for_the_process,
    paused_collection,
    read_events,
)
from airflow_lineage_governance.graph.history import LineageHistory  # noqa: E402
from airflow_lineage_governance.graph.impact import downstream  # noqa: E402
from airflow_lineage_governance.graph.trace import trace_back, trace_forward  # noqa: E402
from airflow_lineage_governance.refs import ColumnRef, TableRef  # noqa: E402

DAYS, COLUMNS, SOURCES = 100, 4, 200
NS = "iceberg://bench"
START = datetime(2026, 7, 1, 2, tzinfo=UTC)


def field(table: str, column: str, kind: str, subtype: str) -> dict:
    return {
        "namespace": NS,
        "name": table,
        "field": column,
        "transformations": [{"type": kind, "subtype": subtype, "description": "", "masking": False}],
    }


def shape(job: int, era: int, jobs: int) -> tuple[list[str], dict, list]:
    """Returns a job's upstream tables and lineage in one era (a stretch of days its SQL did not change)."""
    rng = random.Random(job * 1000 + era)
    upstream = [
        f"src.s{rng.randrange(SOURCES)}"
        if job < jobs // 100 or rng.random() < 0.3
        else f"out.t{rng.randrange(max(job - 500, 0), job)}"
        for _ in range(2)
    ]
    fields = {
        f"c{i}": {
            "inputFields": [
                field(upstream[0], f"c{rng.randrange(COLUMNS)}", "DIRECT", "IDENTITY"),
                field(upstream[1], f"c{rng.randrange(COLUMNS)}", "DIRECT", "AGGREGATION"),
            ]
        }
        for i in range(COLUMNS)
    }
    rows = [field(upstream[0], "c0", "INDIRECT", "JOIN")]
    return upstream, fields, rows


def version(table: str, day: int) -> str:
    return f"{abs(hash((table, day))) % 10**18}"


def event(job: int, day: int, jobs: int, changes: bool = False) -> dict:
    """Returns a job's COMPLETE of one day; with `changes`, every third era of a job adds a column to its table
    (a schema change)."""
    era = (day + job % 30) // (30 + job % 31)
    upstream, fields, rows = shape(job, era, jobs)
    columns = COLUMNS + (1 if changes and era % 3 == 2 else 0)
    if columns > COLUMNS:
        fields = {**fields, f"c{COLUMNS}": fields["c0"]}
    table = f"out.t{job}"
    at = START + timedelta(days=day, seconds=job % 3600)
    return {
        "eventType": "COMPLETE",
        "eventTime": at.isoformat(),
        "run": {
            "runId": f"0199{job:08x}-{day:04x}-7000-8000-000000000000",
            "facets": {
                "airflow": {
                    "dagRun": {"run_id": f"scheduled__{at.date()}"},
                    "taskInstance": {"try_number": retried(job, day) + 1},
                }
            },
        },
        "job": {
            "namespace": "bench",
            "name": f"dag.job{job}",
            "facets": {"sql": {"query": f"INSERT INTO {table} SELECT ... FROM {upstream[0]} -- v{era}"}},
        },
        "inputs": [
            {"namespace": NS, "name": name, "facets": {"version": {"datasetVersion": version(name, day)}}}
            for name in upstream
        ],
        "outputs": [
            {
                "namespace": NS,
                "name": table,
                "facets": {
                    "version": {"datasetVersion": version(table, day)},
                    "schema": {"fields": [{"name": f"c{i}", "type": "long"} for i in range(columns)]},
                    "columnLineage": {"fields": fields, "dataset": rows},
                },
            }
        ],
        "producer": "https://example.invalid/bench",
    }


def retried(job: int, day: int) -> int:
    """Returns 1 when the job's first try failed that day (one job-day in seven), else 0."""
    return (job + day) % 7 // 6


def failure(complete: dict) -> dict:
    """Returns the FAIL event of the first try of a retried COMPLETE: ten minutes before, its own run id, the same
    datasets without their lineage."""
    at = datetime.fromisoformat(complete["eventTime"]) - timedelta(minutes=10)
    facets = complete["run"]["facets"]["airflow"]
    return {
        "eventType": "FAIL",
        "eventTime": at.isoformat(),
        "run": {
            "runId": complete["run"]["runId"][:-12] + "000000000001",
            "facets": {
                "airflow": {"dagRun": facets["dagRun"], "taskInstance": {"try_number": 1}},
                "errorMessage": {"message": "division by zero", "programmingLanguage": "SQL"},
            },
        },
        "job": complete["job"],
        "inputs": complete["inputs"],
        "outputs": [{"namespace": NS, "name": o["name"]} for o in complete["outputs"]],
        "producer": complete["producer"],
    }


def write_events(path: Path, jobs: int, failures: bool = False) -> None:
    """Writes every job's COMPLETE of every day; with `failures`, a retried job-day's failed first try before it
    too, and schema changes (`event`'s `changes`)."""
    with path.open("w") as handle:
        for day in range(DAYS):
            for job in range(jobs):
                complete = event(job, day, jobs, changes=failures)
                if failures and retried(job, day):
                    handle.write(json.dumps(failure(complete)) + "\n")
                handle.write(json.dumps(complete) + "\n")


def percentile(timings: list[float], share: float) -> float:
    return sorted(timings)[min(len(timings) - 1, int(len(timings) * share))] * 1000


def main(argv: list[str]) -> None:
    options = argparse.ArgumentParser()
    options.add_argument("--history", action="store_true")
    options.add_argument("--events", type=int, default=1_000_000, help="events in all (jobs = events / 100)")
    args = options.parse_args(argv)
    jobs = max(args.events // DAYS, 1)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        write_events(path, jobs)
        size = path.stat().st_size
        started = time.perf_counter()
        with path.open("rb") as handle:
            parsed = sum(1 for line in handle if json.loads(line))
        floor = time.perf_counter() - started

        started = time.perf_counter()
        with paused_collection():
            history = LineageHistory(NS)
            events, report = read_events(FileEventSource(path), on_complete=history.add)
        build = time.perf_counter() - started
        del events
        keep_for_the_process()  # as Governance.load does once the history is built

    rng = random.Random(11)
    impacts = []
    for _ in range(1000):
        at = START + timedelta(days=rng.uniform(0, DAYS))
        table = (
            TableRef(("src",), f"s{rng.randrange(SOURCES)}")
            if rng.random() < 0.2
            else TableRef(("out",), f"t{rng.randrange(jobs)}")
        )
        column = ColumnRef(table, f"c{rng.randrange(COLUMNS)}")
        begun = time.perf_counter()
        try:
            downstream(AsOf(history, at, timedelta(days=7)), column)
        except ColumnNotInLineageError:
            pass  # a source column no job happened to read: answered as fast, with the one sentence
        impacts.append(time.perf_counter() - begun)
    snapshots = list(history.writers)
    picks = [snapshots[rng.randrange(len(snapshots))] for _ in range(2000)]  # back, then forward
    del snapshots  # a list of 1,000,000 refs made after the freeze: every full collection would walk it
    traces = []
    for table, snapshot in picks[:1000]:
        begun = time.perf_counter()
        trace_back(history, table, snapshot)
        traces.append(time.perf_counter() - begun)
    forwards = []
    for table, snapshot in picks[1000:]:
        begun = time.perf_counter()
        trace_forward(history, table, snapshot)
        forwards.append(time.perf_counter() - begun)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    shapes = len({id(r.shape) for records in history.runs.values() for r in records})
    print(
        f"{parsed:,} events ({size / 1e6:.0f} MB; {jobs:,} jobs x {DAYS} days; {len(history):,} runs kept, "
        f"{shapes:,} distinct lineage shapes); json.loads floor {floor:.2f} s; read + indexed history "
        f"{build:.2f} s ({report.events:,} events)"
    )
    print(
        f"as-of impact, 1,000 random columns at random times: p50 {statistics.median(impacts) * 1000:.2f} ms, "
        f"p99 {percentile(impacts, 0.99):.2f} ms; trace back of 1,000 random snapshots: p50 "
        f"{statistics.median(traces) * 1000:.2f} ms, p99 {percentile(traces, 0.99):.2f} ms; trace forward of 1,000 "
        f"random snapshots: p50 {statistics.median(forwards) * 1000:.2f} ms, p99 {percentile(forwards, 0.99):.2f} "
        f"ms; peak memory {peak_mb:.0f} MB"
    )
    print(
        f"RESULT governance_history events={parsed} build_ratio={build / floor:.2f} "
        f"asof_impact_p50_ms={statistics.median(impacts) * 1000:.2f} "
        f"asof_impact_p99_ms={percentile(impacts, 0.99):.2f} "
        f"trace_p50_ms={statistics.median(traces) * 1000:.2f} trace_p99_ms={percentile(traces, 0.99):.2f} "
        f"trace_forward_p50_ms={statistics.median(forwards) * 1000:.2f} "
        f"trace_forward_p99_ms={percentile(forwards, 0.99):.2f} "
        f"peak_mb={peak_mb:.0f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
