"""Column lineage speed: this engine against sqlglot.lineage in the same run and environment.

    .venv/bin/python benchmarks/lineage_speed.py

Cases: (a) every statement of the test corpus, (b) a CTAS with 3 chained CTEs of 300 columns each over a
300-column table, (c) a 50-table join chain, (d) `SELECT *` over two 300-column tables joined USING their key.
Ratios are ours / sqlglot `lineage(None, …, trim_selects=False)` (its fastest setting), ours including DuckDB's
binding; the two are timed in alternation, so that load from other processes falls on both alike. vs_default is
sqlglot's default setting (trim_selects=True) / ours on (b).
bind_p50_ms is the median time DuckDB takes to bind one corpus statement (Binder.bind, the connection made).

    .venv/bin/python benchmarks/lineage_speed.py --cpu

times the same alternation in CPU time of the process (`time.process_time`), which other processes' load disturbs
less than wall time, with more runs of each, and leaves out sqlglot's default setting and bind_p50_ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from sqlglot.lineage import lineage as sqlglot_lineage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dags"))  # the demo platform, learning_platform

from airflow_lineage_governance.lineage import column_lineage  # noqa: E402
from airflow_lineage_governance.lineage.binding import binder  # noqa: E402
from airflow_lineage_governance.lineage.engine import query_text_of  # noqa: E402
from airflow_lineage_governance.lineage.schema import normalized  # noqa: E402
from airflow_lineage_governance.lineage.statement import parse_statement  # noqa: E402
from learning_platform.tables import lineage_schema  # noqa: E402
from tests.support.corpus import corpus  # noqa: E402


def timed(action: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    """Returns the time one call of `action` takes on `clock`, in seconds."""
    started = clock()
    action()
    return clock() - started


def best_of(action: Callable[[], object], repeats: int) -> float:
    """Returns the median of `repeats` timings of `action`, in seconds."""
    return statistics.median(timed(action) for _ in range(repeats))


def alternating(
    first: Callable[[], object],
    second: Callable[[], object],
    repeats: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """Returns the medians of `repeats` timings of `first` and of `second` on `clock`, each run of one followed by
    one of the other."""
    pairs = [(timed(first, clock), timed(second, clock)) for _ in range(repeats)]
    return statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs)


def bind_p50(statements: list[str], schema: dict) -> float:
    """Returns the median time DuckDB's binder takes over one statement's query, in seconds (the binder of the
    schema set made before: it is made once per schema set and reused)."""
    timings = []
    for sql in statements:
        parsed = parse_statement(sql)
        text = query_text_of(parsed)
        if text is None:
            continue
        bind = partial(binder(normalized(schema), parsed.target).bind, text, parsed.target)
        bind()
        timings.append(statistics.median(timed(bind) for _ in range(9)))
    return statistics.median(timings)


def wide_case(width: int = 300) -> tuple[str, dict]:
    columns = [f"c{i}" for i in range(width)]
    schema = {"raw": {"wide": {c: "int" for c in columns}}}
    first = ", ".join(f"w.{c} + 1 as {c}" for c in columns)
    second = ", ".join(f"a.{c} * 2 as {c}" for c in columns)
    third = ", ".join(f"b.{c} as {c}" for c in columns)
    final = ", ".join(f"c.{c}" for c in columns)
    sql = (
        f"create table out.wide as with a as (select {first} from raw.wide w where w.c0 > 0), "
        f"b as (select {second} from a), c as (select {third} from b) select {final} from c"
    )
    return sql, schema


def chain_case(tables: int = 50) -> tuple[str, dict]:
    schema = {"raw": {f"t{i}": {"id": "int", "next_id": "int", "value": "int"} for i in range(tables)}}
    joins = " ".join(f"join raw.t{i} t{i} on t{i}.id = t{i - 1}.next_id" for i in range(1, tables))
    values = ", ".join(f"t{i}.value as v{i}" for i in range(tables))
    return f"create table out.chain as select {values} from raw.t0 t0 {joins}", schema


def star_case(width: int = 300) -> tuple[str, dict]:
    """Return a star over two joined 300-column tables (301 output columns, the key once) and its schema."""
    left = {"id": "int", **{f"a{i}": "int" for i in range(width)}}
    right = {"id": "int", **{f"b{i}": "varchar" for i in range(width)}}
    schema = {"raw": {"wide_left": left, "wide_right": right}}
    return (
        "create table out.star as select * from raw.wide_left l join raw.wide_right r using (id) where l.a0 > 0",
        schema,
    )


def ours(sql: str, schema: dict) -> object:
    return column_lineage(sql, schema)


def sqlglot_fast(sql: str, schema: dict) -> object:
    return sqlglot_lineage(None, sql, schema, dialect="duckdb", trim_selects=False)


def sqlglot_default(sql: str, schema: dict) -> object:
    return sqlglot_lineage(None, sql, schema, dialect="duckdb")


def cpu_main() -> None:
    """Print the ratios in CPU time: 25 corpus passes, 9 wide and 41 chain runs of each, alternated."""
    clock = time.process_time
    platform = lineage_schema()
    statements = corpus()
    corpus_ours, corpus_sqlglot = alternating(
        lambda: [ours(s, platform) for s in statements],
        lambda: [sqlglot_fast(s, platform) for s in statements],
        25,
        clock,
    )
    wide_sql, wide_schema = wide_case()
    wide_ours, wide_sqlglot = alternating(
        lambda: ours(wide_sql, wide_schema), lambda: sqlglot_fast(wide_sql, wide_schema), 9, clock
    )
    chain_sql, chain_schema = chain_case()
    chain_ours, chain_sqlglot = alternating(
        lambda: ours(chain_sql, chain_schema), lambda: sqlglot_fast(chain_sql, chain_schema), 41, clock
    )
    star_sql, star_schema = star_case()
    star_ours, star_sqlglot = alternating(
        lambda: ours(star_sql, star_schema), lambda: sqlglot_fast(star_sql, star_schema), 9, clock
    )
    print(
        f"CPU time: corpus ours {corpus_ours * 1000:.1f} ms, sqlglot {corpus_sqlglot * 1000:.1f} ms; wide ours "
        f"{wide_ours * 1000:.1f} ms, sqlglot {wide_sqlglot * 1000:.1f} ms; chain ours {chain_ours * 1000:.1f} ms, "
        f"sqlglot {chain_sqlglot * 1000:.1f} ms; star ours {star_ours * 1000:.1f} ms, sqlglot "
        f"{star_sqlglot * 1000:.1f} ms"
    )
    print(
        f"RESULT lineage_speed_cpu corpus_ratio={corpus_ours / corpus_sqlglot:.2f} "
        f"wide_ratio={wide_ours / wide_sqlglot:.2f} chain_ratio={chain_ours / chain_sqlglot:.2f} "
        f"star_ratio={star_ours / star_sqlglot:.2f}"
    )


def main() -> None:
    platform = lineage_schema()
    statements = corpus()
    # sqlglot reads INSERT outputs by the SELECT's names; both are timed on the same text.
    corpus_ours, corpus_sqlglot = alternating(
        lambda: [ours(s, platform) for s in statements], lambda: [sqlglot_fast(s, platform) for s in statements], 15
    )
    wide_sql, wide_schema = wide_case()
    wide_ours, wide_sqlglot = alternating(
        lambda: ours(wide_sql, wide_schema), lambda: sqlglot_fast(wide_sql, wide_schema), 7
    )
    wide_default = best_of(lambda: sqlglot_default(wide_sql, wide_schema), 1)
    chain_sql, chain_schema = chain_case()
    chain_ours, chain_sqlglot = alternating(
        lambda: ours(chain_sql, chain_schema), lambda: sqlglot_fast(chain_sql, chain_schema), 9
    )
    star_sql, star_schema = star_case()
    star_ours, star_sqlglot = alternating(
        lambda: ours(star_sql, star_schema), lambda: sqlglot_fast(star_sql, star_schema), 7
    )
    binding = bind_p50(statements, platform)

    print(
        f"(a) corpus, {len(statements)} statements: ours {corpus_ours * 1000:.1f} ms, "
        f"sqlglot trim_selects=False {corpus_sqlglot * 1000:.1f} ms"
    )
    print(
        f"(b) 3 chained CTEs x 300 columns: ours {wide_ours * 1000:.1f} ms, sqlglot trim_selects=False "
        f"{wide_sqlglot * 1000:.1f} ms, sqlglot default {wide_default * 1000:.1f} ms"
    )
    print(
        f"(c) 50-table join chain: ours {chain_ours * 1000:.1f} ms, sqlglot trim_selects=False "
        f"{chain_sqlglot * 1000:.1f} ms"
    )
    print(
        f"(d) star over two joined 300-column tables: ours {star_ours * 1000:.1f} ms, sqlglot trim_selects=False "
        f"{star_sqlglot * 1000:.1f} ms"
    )
    print(
        f"RESULT lineage_speed corpus_ratio={corpus_ours / corpus_sqlglot:.2f} "
        f"wide_ratio={wide_ours / wide_sqlglot:.2f} chain_ratio={chain_ours / chain_sqlglot:.2f} "
        f"star_ratio={star_ours / star_sqlglot:.2f} vs_default={wide_default / wide_ours:.1f} "
        f"bind_p50_ms={binding * 1000:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Column lineage speed against sqlglot.lineage.")
    parser.add_argument("--cpu", action="store_true", help="time in the process's CPU time, not wall time")
    if parser.parse_args().cpu:
        cpu_main()
    else:
        main()
