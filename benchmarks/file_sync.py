"""`store sync` of an events file that grew by one night: read from where the last sync stopped, against the same
sync with the store's place forgotten (the file read whole again, as every sync read it before the place was kept).

    .venv/bin/python benchmarks/file_sync.py [--jobs 1000] [--days 100]

The history of benchmarks/history_scale.py (one COMPLETE per job per day, a FAIL before each retried one) in one
JSON Lines file synced into a DuckDB store, then one more day appended. Each way syncs that day into a copy of the
store; both must store the same events. Prints one RESULT line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.store.lineage_store import LineageStore  # noqa: E402
from airflow_lineage_governance.store.sync import source_key, sync  # noqa: E402
from benchmarks.nightly_store import day_events  # noqa: E402


def append(path: Path, events: list[dict]) -> None:
    """Appends the events to the file, one line each, as the OpenLineage file transport writes them."""
    with path.open("a") as handle:
        handle.writelines(json.dumps(e) + "\n" for e in events)


def events_in(location: str) -> int:
    with LineageStore.open(location, read_only=True) as store:
        return int(store.stats()["rows"]["events"])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--days", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="file-sync-") as folder:
        root = Path(folder)
        path = root / "events.jsonl"
        for day in range(args.days):
            append(path, day_events(args.jobs, day))
        base = str(root / "base.duckdb")
        started = time.perf_counter()
        first = sync(base, path, create=True)
        first_seconds = time.perf_counter() - started
        append(path, day_events(args.jobs, args.days))
        timings = {}
        for way in ("from_place", "whole_file"):
            location = str(root / f"{way}.duckdb")
            shutil.copy(base, location)
            if way == "whole_file":
                with LineageStore.open(location) as store:
                    store.engine.execute(
                        "UPDATE source_watermarks SET read_to_byte = NULL WHERE source = ?", [source_key(path)]
                    )
            started = time.perf_counter()
            found = sync(location, path)
            timings[way] = (time.perf_counter() - started, found.read, found.added)
        assert events_in(str(root / "from_place.duckdb")) == events_in(str(root / "whole_file.duckdb"))
    place, whole = timings["from_place"], timings["whole_file"]
    print(
        f"RESULT file_sync jobs={args.jobs} days={args.days} events={first.read} file_mb={path_mb(first.read_to_byte)} "
        f"first_sync_s={first_seconds:.2f} next_night_from_place_s={place[0]:.2f} (read {place[1]}, added {place[2]}) "
        f"next_night_whole_file_s={whole[0]:.2f} (read {whole[1]}, added {whole[2]}) "
        f"speedup={whole[0] / place[0]:.1f}x"
    )


def path_mb(size: int | None) -> str:
    return f"{(size or 0) / 1e6:.1f}"


if __name__ == "__main__":
    main(sys.argv[1:])
