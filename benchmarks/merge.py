"""MERGE of 1% changed rows into a 1,000,000-row table partitioned by day over 30 days, the changes falling in 2
of the 30 partitions: the operator's copy-on-write MERGE (iceberg/rewrite.py: only the partitions the ON condition
bounds are read and rewritten) against the same MERGE as a full-table rewrite (read every row, DuckDB MERGE,
overwrite the whole table), same run, same data, on two copies of the table.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/merge.py [repeats]

Repeats default to 9: one run's ratio moves by about a quarter at 5 repeats. Prints each timing, checks both copies
end equal, and ends with `RESULT merge ratio=<full/ours> rewritten_share=<files rewritten / files>` (medians over the
repeats).
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.iceberg.catalog import open_local_catalog  # noqa: E402
from airflow_lineage_governance.iceberg.partitions import parse_partition_by  # noqa: E402
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement  # noqa: E402
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace  # noqa: E402

ROWS = 1_000_000
DAYS = 30
CHANGED_DAYS = (9, 19)
CHANGED = ROWS // 100
FIRST_DAY = dt.date(2026, 9, 1)
MERGE = """MERGE INTO bench.{table} AS t USING bench.changes AS s ON t.id = s.id AND t.day = s.day
WHEN MATCHED THEN UPDATE SET amount = s.amount, status = s.status
WHEN NOT MATCHED THEN INSERT (id, day, learner_id, amount, status)
VALUES (s.id, s.day, s.learner_id, s.amount, s.status)"""


def facts(rows: int) -> pa.Table:
    """Returns the table's rows: ids in order, each day holding a 30th of them."""
    rng = np.random.default_rng(7)
    days = np.arange(rows) * DAYS // rows
    return pa.table(
        {
            "id": np.arange(rows, dtype=np.int64),
            "day": pa.array([FIRST_DAY + dt.timedelta(days=int(d)) for d in range(DAYS)], pa.date32()).take(days),
            "learner_id": rng.integers(0, 50_000, rows),
            "amount": rng.random(rows) * 100,
            "status": pa.array(rng.choice(["succeeded", "failed", "refunded"], rows)),
        }
    )


def changes(table: pa.Table) -> pa.Table:
    """Returns 1% of the table's row count as changes on two days: nine in ten update a row, one in ten is new."""
    rng = np.random.default_rng(8)
    per_day = ROWS // DAYS
    updated = CHANGED * 9 // 10
    ids = np.concatenate(
        [
            rng.choice(np.arange(d * per_day, (d + 1) * per_day), updated // len(CHANGED_DAYS), replace=False)
            for d in CHANGED_DAYS
        ]
    )
    existing = table.take(pa.array(ids))
    new = CHANGED - updated
    new_days = pa.array([FIRST_DAY + dt.timedelta(days=CHANGED_DAYS[i % 2]) for i in range(new)], pa.date32())
    inserted = pa.table(
        {
            "id": np.arange(ROWS, ROWS + new, dtype=np.int64),
            "day": new_days,
            "learner_id": rng.integers(0, 50_000, new),
            "amount": rng.random(new) * 100,
            "status": pa.array(["succeeded"] * new),
        }
    )
    updated_rows = existing.set_column(3, "amount", pa.array(rng.random(len(existing)) * 100)).set_column(
        4, "status", pa.array(["refunded"] * len(existing))
    )
    return pa.concat_tables([updated_rows, inserted])


def full_rewrite(catalog, name: str) -> float:
    """Returns the seconds of the MERGE as a full-table rewrite: read all, DuckDB MERGE, overwrite all."""
    started = time.perf_counter()
    table = catalog.load_table(("bench", name))
    connection = duckdb.connect()
    connection.execute("CREATE SCHEMA bench")
    connection.register("_all", table.scan().to_arrow())
    connection.execute(f"CREATE TABLE bench.{name} AS SELECT * FROM _all")
    connection.register("_changes", catalog.load_table(("bench", "changes")).scan().to_arrow())
    connection.execute("CREATE TABLE bench.changes AS SELECT * FROM _changes")
    connection.execute(MERGE.format(table=name))
    rows = connection.sql(f"SELECT * FROM bench.{name}").to_arrow_table()
    with table.transaction() as transaction:
        transaction.overwrite(rows.cast(table.schema().as_arrow()))
    return time.perf_counter() - started


def ours(catalog, name: str, key: str) -> tuple[float, int, int]:
    """Returns the seconds of the operator's copy-on-write MERGE, the data files it rewrote and the files the
    table held."""
    started = time.perf_counter()
    run = rewrite_statement(
        catalog,
        target=f"bench.{name}",
        dml=MERGE.format(table=name),
        sources=["bench.changes"],
        snapshot_properties={WRITE_KEY: key},
    )
    seconds = time.perf_counter() - started
    counts = run.write.counts
    assert counts is not None
    return seconds, counts.files_rewritten, counts.files_in_table


def rows_of(catalog, name: str) -> pa.Table:
    """Returns the table's rows by id, in the Arrow types of its schema (pyiceberg hands text over as string or
    large_string as its files were written)."""
    table = catalog.load_table(("bench", name))
    return table.scan().to_arrow().cast(table.schema().as_arrow()).sort_by("id")


def main(repeats: int = 9) -> None:
    with tempfile.TemporaryDirectory() as folder:
        catalog = open_local_catalog(Path(folder))
        data = facts(ROWS)
        spec = parse_partition_by(["day"])
        for name in ("full", "cow"):
            create_or_replace(catalog, f"bench.{name}", data, {}, partition_by=spec)
        create_or_replace(catalog, "bench.changes", changes(data), {})
        fulls, cows, shares = [], [], []
        # One round first, not counted: both paths then run with their libraries loaded and DuckDB warm, as in a
        # worker that has run a task before (the operator has parsed the statement with sqlglot by then).
        full_rewrite(catalog, "full")
        ours(catalog, "cow", "bench/warm-up")
        for attempt in range(repeats):
            full = full_rewrite(catalog, "full")
            cow, rewritten, files = ours(catalog, "cow", f"bench/{attempt}")
            fulls.append(full)
            cows.append(cow)
            shares.append(rewritten / files)
            print(
                f"run {attempt + 1}: full-table rewrite {full:.3f} s; copy-on-write {cow:.3f} s "
                f"({rewritten} of {files} data files rewritten)"
            )
        assert rows_of(catalog, "full").equals(rows_of(catalog, "cow")), "the two copies differ"
        print(
            f"{ROWS:,} rows over {DAYS} day partitions, {CHANGED:,} changed rows on {len(CHANGED_DAYS)} days; "
            "both copies equal after the runs"
        )
        ratio = statistics.median(fulls) / statistics.median(cows)
        print(f"RESULT merge ratio={ratio:.2f} rewritten_share={statistics.median(shares):.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
