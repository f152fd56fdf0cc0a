"""The impact questions of `benchmarks/store_scale.py`, one by one: each one's time and size, the slowest listed, and
the answers written to (or compared with) a JSON file, so two versions of the code are held to the same answers.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/store_impact_probe.py STORE [--jobs 10000] [--queries 200]
        [--write ANSWERS.json | --compare ANSWERS.json] [--slowest 10]

STORE is a DuckDB file or a PostgreSQL URL; the columns and times are the benchmark's (the same seed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.store_scale import impact_question  # noqa: E402


def main(argv: list[str]) -> None:
    from airflow_lineage_governance.store.errors import ColumnNotInStoreError
    from airflow_lineage_governance.store.lineage_store import LineageStore

    options = argparse.ArgumentParser()
    options.add_argument("store")
    options.add_argument("--jobs", type=int, default=10_000)
    options.add_argument("--queries", type=int, default=200)
    options.add_argument("--write")
    options.add_argument("--compare")
    options.add_argument("--slowest", type=int, default=10)
    options.add_argument("--wide", type=int, help="walk by level until more columns than this are reached")
    options.add_argument("--timings", help="a file to write each question's milliseconds and columns reached to")
    args = options.parse_args(argv)
    rng = random.Random(11)
    asked = []
    for _ in range(args.queries):
        asked.append(impact_question(rng, args.jobs))
    if args.wide is not None:
        from airflow_lineage_governance.store import queries

        queries.WIDE = {"duckdb": args.wide, "postgres": args.wide}
    answers: dict[str, object] = {}
    timings = []
    with LineageStore.open(args.store, read_only=True) as store:
        for column, at in asked:
            started = time.perf_counter()
            try:
                found: object = store.impact(column, at).to_dict()
            except ColumnNotInStoreError:
                found = None
            seconds = time.perf_counter() - started
            reached = len(found["columns_reached"]) if isinstance(found, dict) else 0
            timings.append((seconds, str(column), at.isoformat(), reached))
            answers[f"{column}@{at.isoformat()}"] = found
    ordered = sorted(t[0] for t in timings)
    print(
        f"p50 {statistics.median(ordered) * 1000:.1f} ms p99 {ordered[int(len(ordered) * 0.99)] * 1000:.1f} ms "
        f"sum {sum(ordered):.2f} s"
    )
    for seconds, column, at, reached in sorted(timings, reverse=True)[: args.slowest]:
        print(f"{seconds * 1000:8.1f} ms  {column} at {at}: {reached:,} columns reached")
    if args.timings:
        Path(args.timings).write_text(
            "".join(f"{column} {at} {seconds * 1000:.1f} {reached}\n" for seconds, column, at, reached in timings)
        )
    if args.write:
        Path(args.write).write_text(json.dumps(answers, sort_keys=True))
    if args.compare:
        expected = json.loads(Path(args.compare).read_text())
        differ = [key for key in expected if expected[key] != answers.get(key)]
        print(f"{len(expected) - len(differ)} of {len(expected)} answers the same; differ: {differ[:5]}")


if __name__ == "__main__":
    main(sys.argv[1:])
