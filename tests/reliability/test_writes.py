"""Crash mid-write and concurrent writers, through the operator's own write path in real subprocesses."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest

from tests.reliability.conftest import ROWS, BenchCatalog

pytestmark = pytest.mark.reliability
REPO = Path(__file__).resolve().parents[2]
FIGURES = REPO / ".cache" / "reliability"


def writer(bench: BenchCatalog, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.writer", bench.argument, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_started(process: subprocess.Popen) -> None:
    assert process.stdout.readline().strip() == "started", process.stderr.read()


def table_sum(bench: BenchCatalog, name: str) -> tuple[int, int]:
    table = bench.open().load_table(name).scan().to_arrow()
    return table.num_rows, pc.sum(table.column("value")).as_py() or 0


def referenced_files(bench: BenchCatalog, name: str) -> set[str]:
    table = bench.open().load_table(name)
    files = set()
    for snapshot in table.snapshots():
        for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files():
            files.add(task.file.file_path.removeprefix("file://"))  # a REST catalog's tables: file:///
    return files


def record(name: str, figures: dict) -> None:
    FIGURES.mkdir(parents=True, exist_ok=True)
    (FIGURES / f"{name}.json").write_text(json.dumps(figures, indent=2))


def test_sigkill_at_random_points_leaves_the_table_whole(bench_catalog):
    bench, _ = bench_catalog
    written_after = time.time()
    base = ROWS * (ROWS - 1) // 2
    full = writer(bench, "ctas", "1")
    wait_started(full)
    started = time.perf_counter()
    assert full.wait(timeout=120) == 0, full.stderr.read()
    duration = time.perf_counter() - started
    rng = random.Random(2026)
    outcomes = {"unchanged": 0, "written": 0}
    current = 1
    for attempt in range(2, 22):
        process = writer(bench, "ctas", str(attempt))
        wait_started(process)
        time.sleep(rng.uniform(0, duration))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        rows, total = table_sum(bench, "bench.dst")  # the catalog always loads, the table always reads
        assert rows == ROWS
        if total == base + ROWS * attempt:
            outcomes["written"] += 1
            current = attempt
        else:
            assert total == base + ROWS * current, "the table holds a mix of two writes"
            outcomes["unchanged"] += 1
    # On the REST server the warehouse is the session's: only this test's table files count.
    data_files = {
        str(p)
        for p in bench.warehouse.rglob("*.parquet")
        if "/bench/dst/" in str(p) and p.stat().st_mtime >= written_after
    }
    orphans = len(data_files - referenced_files(bench, "bench.dst"))
    record(
        bench.figures_name("sigkill"),
        {"kills": 20, **outcomes, "orphan_data_files": orphans, "uninterrupted_write_seconds": round(duration, 2)},
    )
    assert outcomes["unchanged"] + outcomes["written"] == 20


def test_four_writers_insert_every_row_exactly_once(bench_catalog):
    bench, _ = bench_catalog
    started = time.perf_counter()
    processes = [writer(bench, "insert", str(worker), "25") for worker in range(4)]
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-2000:]
    seconds = time.perf_counter() - started
    table = bench.open().load_table("bench.log").scan().to_arrow()
    ids = table.column("id").to_pylist()
    assert len(ids) == 4 * 25 * 1000 and len(set(ids)) == len(ids)
    record(
        bench.figures_name("concurrent_inserts"),
        {"writers": 4, "batches_each": 25, "rows": len(ids), "seconds": round(seconds, 1)},
    )


def test_two_concurrent_ctas_one_wins_whole(bench_catalog):
    bench, _ = bench_catalog
    base = ROWS * (ROWS - 1) // 2
    processes = [writer(bench, "ctas", k) for k in ("100", "200")]
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
    rows, total = table_sum(bench, "bench.dst")
    assert rows == ROWS and total in (base + ROWS * 100, base + ROWS * 200)
