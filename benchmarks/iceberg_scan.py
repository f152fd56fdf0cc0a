"""Iceberg read path: a GROUP BY over a 1,000,000-row, 8-column table through the operator's read path (DuckDB
scanning the snapshot's Parquet files) against pyiceberg `scan().to_arrow()` registered in DuckDB, same run.

The table is written by the operator's own write path (as an upstream IcebergSqlOperator task would write it).
Each timing covers reading and querying on an open DuckDB connection; opening the connection (about 16 ms
here, the same for both) is outside both.

    .venv/bin/python benchmarks/iceberg_scan.py
"""

from __future__ import annotations

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
from airflow_lineage_governance.iceberg.read import expose_table, sandboxed_connection  # noqa: E402
from airflow_lineage_governance.iceberg.write import create_or_replace  # noqa: E402

ROWS = 1_000_000
QUERY = "select category, count(*) as n, sum(amount) as total, avg(score) as score from bench.facts group by category"


def facts(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    return pa.table(
        {
            "id": np.arange(rows, dtype=np.int64),
            "learner_id": rng.integers(0, 50_000, rows),
            "course_id": rng.integers(0, 500, rows),
            "category": pa.array(rng.choice(["data", "cloud", "security", "design"], rows)),
            "amount": rng.random(rows) * 100,
            "score": rng.random(rows),
            "status": pa.array(rng.choice(["succeeded", "failed"], rows)),
            "at": pa.array(rng.integers(1_700_000_000_000_000, 1_760_000_000_000_000, rows), type=pa.timestamp("us")),
        }
    )


def ours(catalog, connection) -> list:
    expose_table(connection, catalog, "bench.facts")
    return connection.execute(QUERY).fetchall()


def to_arrow(catalog, connection) -> list:
    connection.execute("create schema bench")
    connection.register("facts_arrow", catalog.load_table("bench.facts").scan().to_arrow())
    connection.execute("create view bench.facts as select * from facts_arrow")
    return connection.execute(QUERY).fetchall()


def median_time(action, catalog, repeats: int = 9) -> float:
    timings = []
    for _ in range(repeats):
        # Ours on the connection every statement gets (UTC, NaN never assumed absent); the peer on DuckDB's defaults.
        connection = sandboxed_connection() if action is ours else duckdb.connect()
        started = time.perf_counter()
        action(catalog, connection)
        timings.append(time.perf_counter() - started)
        connection.close()
    return statistics.median(timings)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        catalog = open_local_catalog(folder)
        create_or_replace(catalog, "bench.facts", facts(ROWS), {})
        a, b = sorted(ours(catalog, sandboxed_connection())), sorted(to_arrow(catalog, duckdb.connect()))
        assert [r[:2] for r in a] == [r[:2] for r in b], "both paths must give the same answer"
        ours_time = median_time(ours, catalog)
        arrow_time = median_time(to_arrow, catalog)
    print(
        f"{ROWS:,} rows x 8 columns, GROUP BY: operator read path {ours_time:.3f} s, "
        f"pyiceberg to_arrow + DuckDB {arrow_time:.3f} s"
    )
    print(f"RESULT iceberg_scan ratio={arrow_time / ours_time:.2f}")


if __name__ == "__main__":
    main()
