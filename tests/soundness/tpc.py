"""The TPC-H and TPC-DS queries as CTAS statements over namespaced tables, from the JSON that
scripts/tpc/build.sh dumps out of DuckDB's tpch and tpcds extensions (`make tpc-corpus`)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import sqlglot
from sqlglot import exp

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "build" / "tpc"


@cache
def suite(name: str) -> dict[str, dict]:
    """Returns the dumped suite `name` (tpch or tpcds): its queries by number and its tables' columns."""
    path = CORPUS / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `make tpc-corpus` (scripts/tpc/build.sh) first")
    return json.loads(path.read_text())


def schema(name: str) -> dict[str, dict[str, dict[str, str]]]:
    """Returns the suite's tables in the engine's JSON form, under the namespace `name`."""
    return {name: suite(name)["tables"]}


def numbers(name: str) -> list[int]:
    """Returns the suite's query numbers in order."""
    return sorted(int(number) for number in suite(name)["queries"])


def ctas(name: str, number: int) -> str:
    """Returns query `number` of the suite, as DuckDB's extension writes it, as `CREATE TABLE tpc.<suite>_q<N> AS
    <query>`, each table the suite defines named with the namespace `name` (a CTE keeps its own name). The text is
    changed only where a table is named (sqlglot finds where), so the names DuckDB gives are those of the real
    query."""
    text = suite(name)["queries"][str(number)].strip().rstrip(";")
    tree = sqlglot.parse_one(text, read="duckdb")
    tables = set(suite(name)["tables"])
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    starts = sorted({table.this.meta["start"] for table in tree.find_all(exp.Table)
                     if not table.db and table.name.lower() in tables and table.name.lower() not in ctes})
    for start in reversed(starts):
        text = f"{text[:start]}{name}.{text[start:]}"
    return f"CREATE TABLE tpc.{name}_q{number} AS {text}"
