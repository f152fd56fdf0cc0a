"""Column lineage speed: this engine against sqlglot.lineage in the same run and environment.

    .venv/bin/python benchmarks/lineage_speed.py

Cases: (a) every statement of the test corpus, (b) a CTAS with 3 chained CTEs of 300 columns each over a
300-column table, (c) a 50-table join chain. Ratios are ours / sqlglot `lineage(None, …, trim_selects=False)`
(its fastest setting); vs_default is sqlglot's default setting (trim_selects=True) / ours on (b).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sqlglot.lineage import lineage as sqlglot_lineage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dags"))  # the demo platform, learning_platform

from airflow_lineage_governance.lineage import column_lineage  # noqa: E402
from learning_platform.tables import lineage_schema  # noqa: E402
from tests.lineage.corpus import corpus  # noqa: E402


def best_of(action: Callable[[], object], repeats: int) -> float:
    """Returns the median of `repeats` timings of `action`, in seconds."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def wide_case(width: int = 300) -> tuple[str, dict]:
    columns = [f"c{i}" for i in range(width)]
    schema = {"raw": {"wide": {c: "int" for c in columns}}}
    first = ", ".join(f"w.{c} + 1 as {c}" for c in columns)
    second = ", ".join(f"a.{c} * 2 as {c}" for c in columns)
    third = ", ".join(f"b.{c} as {c}" for c in columns)
    final = ", ".join(f"c.{c}" for c in columns)
    sql = (f"create table out.wide as with a as (select {first} from raw.wide w where w.c0 > 0), "
           f"b as (select {second} from a), c as (select {third} from b) select {final} from c")
    return sql, schema


def chain_case(tables: int = 50) -> tuple[str, dict]:
    schema = {"raw": {f"t{i}": {"id": "int", "next_id": "int", "value": "int"} for i in range(tables)}}
    joins = " ".join(f"join raw.t{i} t{i} on t{i}.id = t{i - 1}.next_id" for i in range(1, tables))
    values = ", ".join(f"t{i}.value as v{i}" for i in range(tables))
    return f"create table out.chain as select {values} from raw.t0 t0 {joins}", schema


def ours(sql: str, schema: dict) -> object:
    return column_lineage(sql, schema)


def sqlglot_fast(sql: str, schema: dict) -> object:
    return sqlglot_lineage(None, sql, schema, dialect="duckdb", trim_selects=False)


def sqlglot_default(sql: str, schema: dict) -> object:
    return sqlglot_lineage(None, sql, schema, dialect="duckdb")


def main() -> None:
    platform = lineage_schema()
    statements = corpus()
    # sqlglot reads INSERT outputs by the SELECT's names; both are timed on the same text.
    corpus_ours = best_of(lambda: [ours(s, platform) for s in statements], 15)
    corpus_sqlglot = best_of(lambda: [sqlglot_fast(s, platform) for s in statements], 15)
    wide_sql, wide_schema = wide_case()
    wide_ours = best_of(lambda: ours(wide_sql, wide_schema), 5)
    wide_sqlglot = best_of(lambda: sqlglot_fast(wide_sql, wide_schema), 5)
    wide_default = best_of(lambda: sqlglot_default(wide_sql, wide_schema), 1)
    chain_sql, chain_schema = chain_case()
    chain_ours = best_of(lambda: ours(chain_sql, chain_schema), 7)
    chain_sqlglot = best_of(lambda: sqlglot_fast(chain_sql, chain_schema), 7)

    print(f"(a) corpus, {len(statements)} statements: ours {corpus_ours * 1000:.1f} ms, "
          f"sqlglot trim_selects=False {corpus_sqlglot * 1000:.1f} ms")
    print(f"(b) 3 chained CTEs x 300 columns: ours {wide_ours * 1000:.1f} ms, sqlglot trim_selects=False "
          f"{wide_sqlglot * 1000:.1f} ms, sqlglot default {wide_default * 1000:.1f} ms")
    print(f"(c) 50-table join chain: ours {chain_ours * 1000:.1f} ms, sqlglot trim_selects=False "
          f"{chain_sqlglot * 1000:.1f} ms")
    print(f"RESULT lineage_speed corpus_ratio={corpus_ours / corpus_sqlglot:.2f} "
          f"wide_ratio={wide_ours / wide_sqlglot:.2f} chain_ratio={chain_ours / chain_sqlglot:.2f} "
          f"vs_default={wide_default / wide_ours:.1f}")


if __name__ == "__main__":
    main()
