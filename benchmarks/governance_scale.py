"""Governance of an event source at scale: synthetic COMPLETE events for 10,000 jobs x 10 runs (100,000 events, about
1M edges), answered as the CLI answers `--events`: read into a lineage store in memory.

    .venv/bin/python benchmarks/governance_scale.py [--jobs 10000]

Measures, in one run: `json.loads` of every line (the floor); then reading the source into a store in memory +
propose + the lineage checks (understated, unaccounted, missing metadata); then impact queries on 1,000 random
columns. Prints the peak memory of the process. Lineage with time at scale is `benchmarks/store_scale.py`'s.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.errors import LineageGovernanceError  # noqa: E402
from airflow_lineage_governance.governance.store_session import StoredGovernance  # noqa: E402

JOBS, RUNS, COLUMNS, SOURCES = 10_000, 10, 4, 200
REPEATS = 3  # the floor and the pass are each the median of this many runs
NS = "iceberg://bench"


def transformation(kind: str, subtype: str) -> dict:
    return {"type": kind, "subtype": subtype, "description": "", "masking": False}


def field(table: str, column: str, kind: str, subtype: str) -> dict:
    return {"namespace": NS, "name": table, "field": column, "transformations": [transformation(kind, subtype)]}


def event(job: int, run: int, rng: random.Random) -> dict:
    table = f"out.t{job}"
    upstream = [
        f"src.s{rng.randrange(SOURCES)}"
        if job < 100 or rng.random() < 0.3
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
    dataset = [field(upstream[0], "c0", "INDIRECT", "JOIN"), field(upstream[1], "c0", "INDIRECT", "FILTER")]
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-10-{run + 1:02d}T02:00:00+00:00",
        "run": {"runId": f"{job:08d}-{run:04d}"},
        "job": {"namespace": "bench", "name": f"dag.job{job}"},
        "inputs": [{"namespace": NS, "name": name} for name in upstream],
        "outputs": [
            {
                "namespace": NS,
                "name": table,
                "facets": {
                    "schema": {"fields": [{"name": f"c{i}", "type": "long"} for i in range(COLUMNS)]},
                    "columnLineage": {"fields": fields, "dataset": dataset},
                },
            }
        ],
        "producer": "https://example.invalid/bench",
    }


def write_events(path: Path, jobs: int) -> int:
    rng = random.Random(7)
    edges = 0
    with path.open("w") as handle:
        for run in range(RUNS):
            for job in range(jobs):
                data = event(job, run, rng)
                edges += COLUMNS * 2 + 2
                handle.write(json.dumps(data) + "\n")
    return edges


def write_governance(folder: Path) -> tuple[Path, Path]:
    """Writes lineage.toml and metadata.toml: every source table's columns classified, one in 23 personal."""
    rules, metadata = folder / "lineage.toml", folder / "metadata.toml"
    rules.write_text(f'namespace = "{NS}"\n')
    metadata.write_text(
        "".join(
            f'[tables."src.s{i}"]\nowner = "owner"\nsource = true\ntier = 2\ncolumns = {{ '
            + ", ".join(f'c{c} = "{rng_class(i, c)}"' for c in range(COLUMNS))
            + " }\n"
            for i in range(SOURCES)
        )
    )
    return rules, metadata


def main(jobs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        edges = write_events(path, jobs)
        rules_path, metadata_path = write_governance(Path(folder))
        size = path.stat().st_size
        floors = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            with path.open("rb") as handle:
                parsed = sum(1 for line in handle if json.loads(line))
            floors.append(time.perf_counter() - started)
        floor = statistics.median(floors)

        catalog = [f"src.s{i}" for i in range(SOURCES)] + [f"out.t{j}" for j in range(jobs)] + ["out.orphan"]
        passes = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            with StoredGovernance.from_events(path, rules_path=rules_path, metadata_path=metadata_path) as governance:
                proposals = governance.proposals()
                findings = governance.findings(catalog)
                report = governance.report()
            passes.append(time.perf_counter() - started)
        whole = statistics.median(passes)

        rng = random.Random(11)
        columns = [
            f"src.s{rng.randrange(SOURCES)}.c{rng.randrange(COLUMNS)}"
            if rng.random() < 0.2
            else f"out.t{rng.randrange(jobs)}.c{rng.randrange(COLUMNS)}"
            for _ in range(1000)
        ]
        timings = []
        with StoredGovernance.from_events(path, rules_path=rules_path, metadata_path=metadata_path) as governance:
            held = len(governance.graph().edges())
            for column in columns:
                begun = time.perf_counter()
                try:
                    governance.impact(column)
                except LineageGovernanceError:
                    pass  # a source column no job happened to read: answered with the one sentence
                timings.append(time.perf_counter() - begun)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    p50, p95 = statistics.median(timings) * 1000, sorted(timings)[949] * 1000
    kinds = {str(kind): sum(1 for f in findings if f.kind == kind) for kind in {f.kind for f in findings}}
    print(
        f"{parsed:,} events ({size / 1e6:.0f} MB, {edges:,} edges; {held:,} in the graph of the latest runs); "
        f"json.loads floor {floor:.2f} s; read into a store in memory + propose + checks {whole:.2f} s (median; "
        f"runs {', '.join(f'{p:.2f}' for p in passes)}) ({report.events:,} events, {len(proposals):,} proposals, "
        f"findings {kinds})"
    )
    print(f"impact on 1,000 random columns: p50 {p50:.2f} ms, p95 {p95:.2f} ms; peak memory {peak_mb:.0f} MB")
    print(f"RESULT governance_scale ratio={whole / floor:.2f} impact_p50_ms={p50:.2f}")


def rng_class(table: int, column: int) -> str:
    return "personal" if (table * 7 + column) % 23 == 0 else "internal"


if __name__ == "__main__":
    options = argparse.ArgumentParser()
    options.add_argument("--jobs", type=int, default=JOBS, help="jobs, each run RUNS times")
    main(options.parse_args().jobs)
