"""The history of the scale benchmarks: one COMPLETE per job per run of its DAG (10,000 jobs run daily over 100 days
is 1,000,000 events; run ten times a day, 10,000,000), each with input and output snapshots (version facets), an
`airflow` run facet with the try, and the SQL facet; each job's lineage changes every 30 to 60 days (a new shape), so
the history holds superseded edges. A run reads the snapshots its upstream tables' runs of the same slot wrote.

`benchmarks/store_scale.py` measures the lineage store on it (ingest, as-of impact, traces); the store's tests
generate their larger histories with it.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

DAYS, COLUMNS, SOURCES = 100, 4, 200
MOST_JOBS = 10_000
"""The most jobs a history has: a larger one runs them more often each day (thousands of tables, however long the
history)."""
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


def shape_of(events: int) -> tuple[int, int]:
    """Returns the jobs and the runs a day of a history of about `events` COMPLETEs over `DAYS` days."""
    jobs = min(max(events // DAYS, 1), MOST_JOBS)
    return jobs, max(events // (jobs * DAYS), 1)


def version(table: str, day: int, run: int = 0) -> str:
    return f"{abs(hash((table, day) if run == 0 else (table, day, run))) % 10**18}"


def slot(day: int, run: int = 0, runs: int = 1) -> datetime:
    """Returns when the DAG's `run`th run of `day` (of `runs` a day) is scheduled."""
    return START + timedelta(days=day, hours=run * 24 / runs)


def dag_run_id(day: int, run: int = 0, runs: int = 1) -> str:
    """Returns the Airflow run id of the DAG's `run`th run of `day` (of `runs` a day): its date, or with more than one
    run a day its date and time."""
    at = slot(day, run, runs)
    return f"scheduled__{at.date()}" if runs == 1 else f"scheduled__{at.isoformat()}"


def event(job: int, day: int, jobs: int, changes: bool = False, run: int = 0, runs: int = 1) -> dict:
    """Returns a job's COMPLETE of the `run`th of `runs` runs of one day; with `changes`, every third era of a job adds
    a column to its table (a schema change)."""
    era = (day + job % 30) // (30 + job % 31)
    upstream, fields, rows = shape(job, era, jobs)
    columns = COLUMNS + (1 if changes and era % 3 == 2 else 0)
    if columns > COLUMNS:
        fields = {**fields, f"c{COLUMNS}": fields["c0"]}
    table = f"out.t{job}"
    at = slot(day, run, runs) + timedelta(seconds=job % 3600)
    return {
        "eventType": "COMPLETE",
        "eventTime": at.isoformat(),
        "run": {
            "runId": f"0199{job:08x}-{day:04x}-7{run:03x}-8000-000000000000",
            "facets": {
                "airflow": {
                    "dagRun": {"run_id": dag_run_id(day, run, runs)},
                    "taskInstance": {"try_number": retried(job, day, run) + 1},
                }
            },
        },
        "job": {
            "namespace": "bench",
            "name": f"dag.job{job}",
            "facets": {"sql": {"query": f"INSERT INTO {table} SELECT ... FROM {upstream[0]} -- v{era}"}},
        },
        "inputs": [
            {"namespace": NS, "name": name, "facets": {"version": {"datasetVersion": version(name, day, run)}}}
            for name in upstream
        ],
        "outputs": [
            {
                "namespace": NS,
                "name": table,
                "facets": {
                    "version": {"datasetVersion": version(table, day, run)},
                    "schema": {"fields": [{"name": f"c{i}", "type": "long"} for i in range(columns)]},
                    "columnLineage": {"fields": fields, "dataset": rows},
                },
            }
        ],
        "producer": "https://example.invalid/bench",
    }


def retried(job: int, day: int, run: int = 0) -> int:
    """Returns 1 when the job's first try failed in that run (one job-run in seven), else 0."""
    return (job + day + run) % 7 // 6


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


def write_events(path: Path, jobs: int, failures: bool = False, runs: int = 1) -> None:
    """Writes every job's COMPLETE of each of `runs` runs of every day; with `failures`, a retried job-run's failed
    first try before it too, and schema changes (`event`'s `changes`)."""
    with path.open("w") as handle:
        for day in range(DAYS):
            for run in range(runs):
                for job in range(jobs):
                    complete = event(job, day, jobs, changes=failures, run=run, runs=runs)
                    if failures and retried(job, day, run):
                        handle.write(json.dumps(failure(complete)) + "\n")
                    handle.write(json.dumps(complete) + "\n")
