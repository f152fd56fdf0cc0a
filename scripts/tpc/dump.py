"""Dumps the TPC-H and TPC-DS queries and table schemas from DuckDB's tpch and tpcds extensions to JSON.

Run by scripts/tpc/build.sh inside build/tpc-venv (duckdb 1.5.5 with the extensions' wheels): loads each
extension from its wheel's file, creates the empty tables (`CALL dbgen(sf=0)`, `CALL dsdgen(sf=0)`), and writes
`{"queries": {"1": sql, ...}, "tables": {table: {column: type}}}` to OUT_DIR/{tpch,tpcds}.json.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import duckdb

SUITES = {"tpch": ("dbgen", "tpch_queries"), "tpcds": ("dsdgen", "tpcds_queries")}


def extension_file(suite: str) -> Path:
    """Returns the extension binary the wheel `duckdb-extension-<suite>` holds for this duckdb version."""
    package = importlib.import_module(f"duckdb_extension_{suite}")
    root = Path(package.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    return root / f"{suite}.duckdb_extension"


def dump(suite: str) -> dict[str, object]:
    """Returns the suite's queries by number and its tables' columns with their types, in column order."""
    generate, queries = SUITES[suite]
    connection = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    connection.execute(f"LOAD '{extension_file(suite)}'")
    connection.execute(f"CALL {generate}(sf=0)")
    tables: dict[str, dict[str, str]] = {}
    for table, column, kind in connection.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall():
        tables.setdefault(table, {})[column] = kind
    found = {
        str(number): text
        for number, text in connection.execute(f"SELECT query_nr, query FROM {queries}() ORDER BY query_nr").fetchall()
    }
    connection.close()
    return {"duckdb": duckdb.__version__, "queries": found, "tables": tables}


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for suite in SUITES:
        path = out / f"{suite}.json"
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(dump(suite), indent=1, sort_keys=True))
        partial.replace(path)


if __name__ == "__main__":
    main(sys.argv[1])
