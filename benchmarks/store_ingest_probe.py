"""Where a store's ingest spends its time: each batch's seconds, split into the Python side and each SQL statement.

    .venv/bin/python benchmarks/store_ingest_probe.py EVENTS_FILE [--lines 200000] [--engine postgres]
        [--batch-size 20000] [--no-digests] [--into STORE]

Ingests the first `--lines` lines of the JSON Lines file (0: the whole file, read where it is) into a new store
(PostgreSQL: a server of its own started for the run, scripts/postgres/start.sh, stopped by its pid), or into the
store `--into` names (a copy of a large one, to time batches at its size: changed, and not vacuumed), timing every
engine call by its statement. Prints per batch its seconds and its share in SQL, then the statements that took most
in all, and a RESULT line with the store's size once vacuumed (`size_mb`, as `store_scale.py` measures it). With
`--prepare-only`, times the preparing alone instead (every batch read, parsed and worked out in the calling thread,
none stored, as for a store of the current schema) beside `json.loads` of the same lines.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from airflow_lineage_governance.graph.events import FileEventSource  # noqa: E402
from airflow_lineage_governance.store.lineage_store import LineageStore  # noqa: E402

COUNTED = ("events", "completes", "column_edges", "table_writers", "runs")  # the rows the store holds at the end
DIGESTED = ("completes", "column_edges", "table_writers", "runs", "shape_edges", "datasets", "run_datasets")
SCRATCH = ("interval_cuts", "edges_rederived", "writers_rederived")  # the temporary tables a batch empties


class Timed:
    """An engine whose calls are timed, each under a short label of its statement."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.batch_sql = 0.0
        self.explain = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _timed(self, label: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            spent = time.perf_counter() - started
            self.seconds[label] += spent
            self.calls[label] += 1
            self.batch_sql += spent

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        if self.explain and not sql.startswith(
            ("CREATE", "TRUNCATE", "SET", "RESET", *(f"DELETE FROM {t}" for t in SCRATCH))
        ):
            started = time.perf_counter()
            if self.engine.dialect == "postgres":
                plan = self.engine.query("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                lines = [line for (line,) in plan]
            else:  # DuckDB's profile: one row of its kind and its text
                lines = self.engine.query("EXPLAIN ANALYZE " + sql, params)[0][1].splitlines()
            print(f"--- {time.perf_counter() - started:.2f} s {label(sql)}")
            print("\n".join(line[:200] for line in lines))
            return
        self._timed(label(sql), self.engine.execute, sql, params)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self._timed(label(sql), self.engine.query, sql, params)  # type: ignore[no-any-return]

    def insert(self, table: str, columns: Sequence[str], rows: Sequence[Any], returning: Sequence[str] = ()) -> Any:
        return self._timed(f"insert {table}", self.engine.insert, table, columns, rows, returning)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        within = self.engine.transaction()
        within.__enter__()
        try:
            yield
        except BaseException:
            within.__exit__(*sys.exc_info())
            raise
        self._timed("commit", within.__exit__, None, None, None)

    def lock(self, keys: Sequence[int]) -> None:
        self._timed("lock", self.engine.lock, keys)

    def tables(self) -> set[str]:
        return self._timed("tables", self.engine.tables)  # type: ignore[no-any-return]


def digest(engine: Any, table: str) -> str:
    """Return a short hash of the table's rows, in order (two ingests that derived the same rows print the same).

    Each row's columns are read in their names' order: two schemas that order a table's columns differently digest
    the same rows the same.
    """
    named = engine.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = current_schema() "
        "ORDER BY column_name",
        [table],
    )
    rows = sorted(engine.query(f"SELECT {', '.join(name for (name,) in named)} FROM {table}"), key=repr)
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:12]


def label(sql: str) -> str:
    words = re.sub(r"\s+", " ", sql).split(" ")
    return " ".join(words[:4])[:60]


def first_lines(path: Path, lines: int, into: Path) -> Path:
    """Return a copy of the first lines of the file in `into`; with 0 lines, the file itself (a copy may not fit)."""
    if lines == 0:
        return path
    with path.open("rb") as source, into.open("wb") as copy:
        for line in itertools.islice(source, lines):
            copy.write(line)
    return into


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres(folder: Path) -> Iterator[str]:
    password, port = secrets.token_hex(16), free_port()
    subprocess.run(
        ["bash", str(ROOT / "scripts/postgres/start.sh"), str(folder), str(port)],
        check=True,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LINEAGE_STORE_PG_PASSWORD": password},
        capture_output=True,
    )
    try:
        yield f"postgresql://lineage:{password}@127.0.0.1:{port}/lineage"
    finally:
        subprocess.run(["bash", str(ROOT / "scripts/postgres/stop.sh"), str(folder)], check=True)


def main(argv: list[str]) -> None:
    options = argparse.ArgumentParser()
    options.add_argument("events_file")
    options.add_argument("--lines", type=int, default=200_000, help="the first lines ingested; 0: the whole file")
    options.add_argument("--no-digests", action="store_true", help="leave out the tables' digests (large stores)")
    options.add_argument("--engine", default="postgres", choices=("postgres", "duckdb"))
    options.add_argument("--batch-size", type=int, default=20000)
    options.add_argument("--explain", type=int, default=-1, help="the batch whose statements are explained")
    options.add_argument(
        "--into", help="a store to ingest into (a DuckDB file or PostgreSQL URL; changed: give a copy), not a new one"
    )
    options.add_argument("--prepare-only", action="store_true", help="time the preparing of the batches alone")
    args = options.parse_args(argv)
    if args.prepare_only:
        prepare_only(Path(args.events_file), args.lines, args.batch_size)
        return
    scratch = Path(tempfile.mkdtemp(prefix="store-ingest-probe-"))
    server = Path(tempfile.mkdtemp(prefix="store-ingest-probe-pg-"))  # the postgres user must reach it
    try:
        events = first_lines(Path(args.events_file), args.lines, scratch / "events.jsonl")
        if args.into:
            servers = iter([args.into])
        elif args.engine == "postgres":
            servers = postgres(server)
        else:
            servers = iter([str(scratch / "store.duckdb")])
        location = next(servers)
        try:
            probe(location, events, args.batch_size, args.explain, digested=not args.no_digests, new=not args.into)
        finally:
            for _ in servers:
                pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(server, ignore_errors=True)


def prepare_only(path: Path, lines: int, batch_size: int) -> None:
    """Time `json.loads` of the first lines, then the ingest's preparing of them, no batch stored."""
    from airflow_lineage_governance.graph.events import ReadReport, paused_collection
    from airflow_lineage_governance.store import ingest as ingest_module
    from airflow_lineage_governance.store.schema import TABLES

    scratch = Path(tempfile.mkdtemp(prefix="store-ingest-probe-"))
    try:
        events = first_lines(path, lines, scratch / "events.jsonl")
        started = time.perf_counter()
        with events.open("rb") as handle:
            for line in handle:
                json.loads(line)
        floor = time.perf_counter() - started
        report, read, prepared = ingest_module.IngestReport(), ReadReport(), 0
        tables = {*TABLES, "event_blocks"}
        started = time.perf_counter()
        with paused_collection():
            for batch in ingest_module.prepared_batches(FileEventSource(events), batch_size, report, read, tables):
                prepared += len(batch.keys)
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"RESULT store_ingest_probe prepare_only events={prepared} seconds={seconds:.1f} json_loads_s={floor:.1f}")


def probe(
    location: str, events: Path, batch_size: int, explain: int, *, digested: bool = True, new: bool = True
) -> None:
    from airflow_lineage_governance.store import ingest as ingest_module

    with LineageStore.open(location, create=True) as store:
        timed = Timed(store.engine)
        original = ingest_module.store_batch
        per_batch: list[tuple[float, float]] = []

        def store_batch(engine: Any, prepared: Any, report: Any) -> None:
            timed.batch_sql = 0.0
            timed.explain = len(per_batch) == explain
            started = time.perf_counter()
            original(timed, prepared, report)
            per_batch.append((time.perf_counter() - started, timed.batch_sql))

        ingest_module.store_batch = store_batch  # type: ignore[assignment]
        started = time.perf_counter()
        report = ingest_module.ingest(store.engine, FileEventSource(events), batch_size=batch_size)
        seconds = time.perf_counter() - started
        ingest_module.store_batch = original
        counts = {table: store.engine.query(f"SELECT COUNT(*) FROM {table}")[0][0] for table in COUNTED}
        digests = {table: digest(store.engine, table) for table in DIGESTED} if digested else {}
        if new:  # as the benchmark measures a store: after `vacuum` (a store ingested into is left as it is)
            store.vacuum()
        size_mb = store.engine.size_bytes() / 1e6
    for number, (spent, sql) in enumerate(per_batch):
        print(f"batch {number:3d}: {spent:6.2f} s, SQL {sql:6.2f} s")
    in_batches = sum(spent for spent, _ in per_batch)
    waited = seconds - in_batches  # for the next batch, read, parsed and prepared in a thread beside the store
    print(f"ingest {seconds:.1f} s: store_batch {in_batches:.1f} s, waiting for a prepared batch {waited:.1f} s")
    print("digests: " + ", ".join(f"{table} {value}" for table, value in digests.items()))
    print("rows: " + ", ".join(f"{table} {count:,}" for table, count in counts.items()))
    for name, spent in sorted(timed.seconds.items(), key=lambda item: -item[1])[:30]:
        print(f"  {spent:7.2f} s {timed.calls[name]:6,} calls  {name}")
    print(
        f"RESULT store_ingest_probe events={report.stored} seconds={seconds:.1f} "
        f"sql={sum(timed.seconds.values()):.1f} first_batch={per_batch[0][0]:.2f} last_batch={per_batch[-1][0]:.2f} "
        f"size_mb={size_mb:.1f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
