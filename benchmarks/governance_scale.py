"""Governance at scale: synthetic COMPLETE events for 10,000 jobs x 10 runs (100,000 events, about 1M edges).

    .venv/bin/python benchmarks/governance_scale.py
    .venv/bin/python benchmarks/governance_scale.py --history [--events 1000000]   # lineage with time

Measures, in one run: `json.loads` of every line (the floor); then reading + graph + propose + understated +
unaccounted; then impact queries on 1,000 random columns. Prints the peak memory of the process.

`--history` measures lineage with time instead (benchmarks/history_scale.py): 10,000 jobs, one COMPLETE per job
per day over 100 days (1,000,000 events; `--events N` for fewer, N/100 jobs).
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.governance.checks import unaccounted  # noqa: E402
from airflow_lineage_governance.governance.classify import propose, understated  # noqa: E402
from airflow_lineage_governance.governance.config import Metadata, Rules, TableMetadata  # noqa: E402
from airflow_lineage_governance.graph.build import build_graph  # noqa: E402
from airflow_lineage_governance.graph.events import FileEventSource, paused_collection, read_events  # noqa: E402
from airflow_lineage_governance.graph.impact import column_asked, downstream  # noqa: E402
from airflow_lineage_governance.refs import TableRef  # noqa: E402

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


def write_events(path: Path) -> int:
    rng = random.Random(7)
    edges = 0
    with path.open("w") as handle:
        for run in range(RUNS):
            for job in range(JOBS):
                data = event(job, run, rng)
                edges += COLUMNS * 2 + 2
                handle.write(json.dumps(data) + "\n")
    return edges


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        edges = write_events(path)
        size = path.stat().st_size
        floors = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            with path.open("rb") as handle:
                parsed = sum(1 for line in handle if json.loads(line))
            floors.append(time.perf_counter() - started)
        floor = statistics.median(floors)

        rules = Rules(namespace=NS)
        sources = {
            TableRef(("src",), f"s{i}"): TableMetadata(
                TableRef(("src",), f"s{i}"), "owner", True, 2, {f"c{c}": rng_class(i, c) for c in range(COLUMNS)}
            )
            for i in range(SOURCES)
        }
        metadata = Metadata(sources)
        declared = metadata.declared()
        passes = []
        for _ in range(REPEATS):
            events = graph = proposals = None  # the previous pass's data is freed before the next is timed
            started = time.perf_counter()
            with paused_collection():  # as Governance.load runs the pass
                events, report = read_events(FileEventSource(path))
                graph = build_graph(events, NS)
                proposals = propose(graph, declared, rules)
                found = understated(proposals, rules)
                missing = unaccounted([*sources, *graph.outputs, "out.orphan"], metadata, graph)
            passes.append(time.perf_counter() - started)
        whole = statistics.median(passes)

        rng = random.Random(11)
        columns = [
            f"src.s{rng.randrange(SOURCES)}.c{rng.randrange(COLUMNS)}"
            if rng.random() < 0.2
            else f"out.t{rng.randrange(JOBS)}.c{rng.randrange(COLUMNS)}"
            for _ in range(1000)
        ]
        timings = []
        for column in columns:
            begun = time.perf_counter()
            downstream(graph, column_asked(column))
            timings.append(time.perf_counter() - begun)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    p50, p95 = statistics.median(timings) * 1000, sorted(timings)[949] * 1000
    print(
        f"{parsed:,} events ({size / 1e6:.0f} MB, {edges:,} edges; {len(graph.edges()):,} in the graph of the "
        f"latest runs); json.loads floor {floor:.2f} s; read + graph + propose + understated + unaccounted "
        f"{whole:.2f} s (median; runs {', '.join(f'{p:.2f}' for p in passes)}) ({report.events:,} events, "
        f"{len(proposals):,} proposals, {len(found)} understated, "
        f"{len(missing)} unaccounted)"
    )
    print(f"impact on 1,000 random columns: p50 {p50:.2f} ms, p95 {p95:.2f} ms; peak memory {peak_mb:.0f} MB")
    print(f"RESULT governance_scale ratio={whole / floor:.2f} impact_p50_ms={p50:.2f}")


def rng_class(table: int, column: int) -> str:
    return "personal" if (table * 7 + column) % 23 == 0 else "internal"


if __name__ == "__main__":
    if "--history" in sys.argv:
        from benchmarks.history_scale import main as history_main

        history_main(sys.argv[1:])
    else:
        main()
