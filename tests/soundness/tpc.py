"""The TPC-H and TPC-DS queries as CTAS statements over namespaced tables, from the JSON that
scripts/tpc/build.sh dumps out of DuckDB's tpch and tpcds extensions (`make tpc-corpus`)."""

from __future__ import annotations

import datetime as dt
import json
import random
from functools import cache
from pathlib import Path

import duckdb
import pyarrow as pa
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
    starts = sorted(
        {
            table.this.meta["start"]
            for table in tree.find_all(exp.Table)
            if not table.db and table.name.lower() in tables and table.name.lower() not in ctes
        }
    )
    for start in reversed(starts):
        text = f"{text[:start]}{name}.{text[start:]}"
    return f"CREATE TABLE tpc.{name}_q{number} AS {text}"


def generate(name: str, rows: int = 12, seed: int = 5) -> dict[str, pa.Table]:
    """Returns generated rows for every table of the suite, keyed `<suite>.<table>`, typed as the suite declares:
    integer keys drawn from a small range (so joins meet), the first column unique, every string tagged by its
    column (`suite.table.column#n`, as the harness's data tags them), dates and decimals spread out."""
    connection = duckdb.connect()
    tables: dict[str, pa.Table] = {}
    for table, columns in suite(name)["tables"].items():
        rng = random.Random(f"{seed}/{name}/{table}")
        raw: dict[str, list[object]] = {}
        for index, (column, kind) in enumerate(columns.items()):
            order = rng.sample(range(rows * 4), rows)
            if "INT" in kind:
                raw[column] = list(range(1, rows + 1)) if index == 0 else [rng.randint(1, rows) for _ in order]
            elif kind.startswith(("DECIMAL", "DOUBLE", "FLOAT")):
                raw[column] = [round(1 + value * 1.37, 2) for value in order]
            elif kind == "DATE":
                raw[column] = [dt.date(1992, 1, 1) + dt.timedelta(days=value * 97) for value in order]
            else:
                raw[column] = [f"{name}.{table}.{column}#{i}" for i in range(rows)]
        connection.register("raw", pa.table(raw))
        casts = ", ".join(f'CAST("{column}" AS {kind}) AS "{column}"' for column, kind in columns.items())
        tables[f"{name}.{table}"] = connection.sql(f"SELECT {casts} FROM raw").to_arrow_table()
        connection.unregister("raw")
    connection.close()
    return tables
