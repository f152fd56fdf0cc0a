"""The nightly governance report from a kept lineage store against the same report from every event read anew.

    .venv/bin/python benchmarks/nightly_store.py [--jobs 1000] [--days 100]

The history of benchmarks/history_scale.py (one COMPLETE per job per day, a FAIL before each retried one), the last
day being "tonight". The peer reads every event of the source into a DuckDB store in memory
(`StoredGovernance.from_events`, what `--events` does), then `nightly_report` over it. The kept store's nightly
(DuckDB file): `store sync` of tonight's events into a store holding the earlier days (the events a Marquez source is
asked for after the watermark), then `nightly_report` over the store (`StoredGovernance.nightly`). Both reports are
held equal but for the read counts, which differ by design. The first sync of the earlier days is timed too (once per
store, not per night). Prints one RESULT line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.governance.nightly import nightly_report  # noqa: E402
from airflow_lineage_governance.governance.store_session import StoredGovernance  # noqa: E402
from airflow_lineage_governance.store.sync import sync  # noqa: E402
from benchmarks.history_scale import START, event, failure, retried  # noqa: E402

READ_COUNTS = ("events_read", "events_duplicated", "event_source")


def day_events(jobs: int, day: int) -> list[dict]:
    """Returns the events of one day: each job's COMPLETE, after the FAIL of its first try when it was retried."""
    found = []
    for job in range(jobs):
        complete = event(job, day, jobs)
        if retried(job, day):
            found.append(failure(complete))
        found.append(complete)
    return found


def write(path: Path, events: list[dict]) -> None:
    with path.open("a") as handle:
        for raw in events:
            handle.write(json.dumps(raw) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--days", type=int, default=100)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="nightly-store-"))
    (folder / "lineage.toml").write_text('namespace = "iceberg://bench"\n')
    (folder / "metadata.toml").write_text("")
    files = {"rules_path": folder / "lineage.toml", "metadata_path": folder / "metadata.toml"}
    earlier, tonight, everything = folder / "earlier.jsonl", folder / "tonight.jsonl", folder / "events.jsonl"
    for day in range(args.days):
        events = day_events(args.jobs, day)
        write(tonight if day == args.days - 1 else earlier, events)
        write(everything, events)
    lines = sum(1 for _ in everything.open())
    last = START + timedelta(days=args.days - 1)
    verdict = {
        "target_dag_id": "dag",
        "target_run_id": f"scheduled__{last.date()}",
        "finished": True,
        "backend_problem": None,
        "task_states": {f"job{job}": "success" for job in range(args.jobs)},
        "missing": [],
    }
    catalog = [f"out.t{job}" for job in range(args.jobs)]
    now = last + timedelta(hours=2)
    options = {"dag_id": "g", "run_id": "r", "logical_date": last.isoformat(), "now": now}

    started = time.perf_counter()
    with StoredGovernance.from_events(everything, job_namespaces=["bench"], **files) as governance:
        in_memory = nightly_report(verdict, governance.nightly(str(everything)), catalog, **options)
    memory_s = time.perf_counter() - started

    store = str(folder / "lineage-store.duckdb")
    started = time.perf_counter()
    first = sync(store, earlier, create=True)
    first_sync_s = time.perf_counter() - started

    started = time.perf_counter()
    synced = sync(store, tonight)
    with StoredGovernance.open(store, job_namespaces=["bench"], **files) as governance:
        from_store = nightly_report(verdict, governance.nightly(str(tonight), synced), catalog, **options)
    store_s = time.perf_counter() - started

    mine, theirs = from_store.to_dict(), in_memory.to_dict()
    for report in (mine, theirs):
        for key in READ_COUNTS:
            report["coverage"].pop(key)
    assert mine == theirs, "the kept store's report differs from the one over every event read anew"
    print(
        f"{lines:,} events ({args.jobs:,} jobs x {args.days} days, {everything.stat().st_size / 1e6:.0f} MB); "
        f"first sync of {first.added:,} earlier events {first_sync_s:.2f} s"
    )
    print(
        f"nightly over every event read into a store in memory {memory_s:.2f} s; nightly on the kept store (sync "
        f"{synced.added:,} new events, report from the store) {store_s:.2f} s; "
        f"{len(from_store.findings):,} findings, equal but for {', '.join(READ_COUNTS)}"
    )
    print(
        f"RESULT nightly_store events={lines} kept_vs_read_anew={store_s / memory_s:.2f} "
        f"first_sync_s={first_sync_s:.1f} at={datetime.now(UTC):%Y-%m-%d}"
    )


if __name__ == "__main__":
    main()
