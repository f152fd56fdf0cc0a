"""One query two ways: through the operator's read path, and on a native DuckDB table holding the layout's rows.

Rows are compared as multisets of canonical texts (NaN equals NaN and -0.0 equals 0.0, as DuckDB's own equality
says; an aware timestamp is compared in UTC), and the result columns' names and DuckDB types one by one.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import duckdb
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.read import expose_table, lock_down, sandboxed_connection
from tests.iceberg.equivalence.layouts import Layout


def canonical(value: Any) -> str:
    """Returns a text equal for two values exactly when DuckDB holds them equal (NaN = NaN, -0.0 = 0.0)."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value + 0.0)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return "tz " + value.astimezone(dt.UTC).replace(tzinfo=None).isoformat()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {canonical(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(canonical(item) for item in value) + "]"
    return repr(value)


def canonical_rows(rows: list[tuple[Any, ...]]) -> Counter[tuple[str, ...]]:
    return Counter(tuple(canonical(value) for value in row) for row in rows)


@dataclass(frozen=True)
class Outcome:
    """How one query compared: its rows (as multisets) and its result columns' names and types."""

    layout: str
    query: str
    path: str
    equal_rows: bool
    type_differences: tuple[str, ...] = ()
    description: str = ""
    """What differed, without data values: row counts only in one side, or the error the read path raised."""
    first_difference: str = field(default="", repr=False)
    """One row only the read path returned and one only the native table did (or the error's text)."""

    @property
    def equal(self) -> bool:
        return self.equal_rows and not self.type_differences

    def message(self) -> str:
        lines = [f"layout {self.layout} ({self.path}): {self.description or 'rows equal'}", f"  query: {self.query}"]
        lines += [f"  type: {difference}" for difference in self.type_differences]
        if self.first_difference:
            lines.append(f"  first difference: {self.first_difference}")
        return "\n".join(lines)


def utc_connection(connection: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    connection.execute("SET TimeZone = 'UTC'")
    return connection


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def native_connection(layout: Layout) -> duckdb.DuckDBPyConnection:
    """Returns a plain DuckDB connection holding the layout's rows in a native table of the same name."""
    connection = utc_connection(duckdb.connect())
    schema, _, name = layout.table.rpartition(".")
    connection.execute(f"CREATE SCHEMA {_quoted(schema)}")
    columns = ", ".join(f"{_quoted(column)} {kind}" for column, kind in layout.columns)
    target = f"{_quoted(schema)}.{_quoted(name)}"
    connection.execute(f"CREATE TABLE {target} ({columns})")
    connection.register("__layout_rows", layout.rows)
    try:
        # The declared types are the ones DuckDB gives the Arrow rows themselves: the insert converts nothing.
        arrow_types = [str(kind) for kind in connection.sql("SELECT * FROM __layout_rows").types]
        connection.execute(f"INSERT INTO {target} SELECT * FROM __layout_rows")
    finally:
        connection.unregister("__layout_rows")
    held = connection.sql(f"SELECT * FROM {target}")
    held_types = [str(kind) for kind in held.types]
    assert held_types == arrow_types, f"{layout.name}: the table holds {held_types}, the rows are {arrow_types}"
    assert held.columns == [column for column, _ in layout.columns]
    assert canonical_rows(held.fetchall()) == canonical_rows(list(zip(*layout.rows.to_pydict().values(), strict=True)))
    return connection


def _first(counter: Counter[tuple[str, ...]]) -> str:
    return "(" + ", ".join(next(iter(sorted(counter)))) + ")" if counter else "none"


def compare(catalog: Catalog, layout: Layout, query: str, native: duckdb.DuckDBPyConnection | None = None) -> Outcome:
    """Runs `query` through the read path (a fresh sandboxed connection, the table exposed and the connection locked
    down) and on the native table (`native`, else a new one); returns how the two compared. A query the native
    table refuses is a fault of the query, and raises."""
    native = native if native is not None else native_connection(layout)
    expected = native.sql(query)
    expected_types = [str(kind) for kind in expected.types]
    expected_rows = canonical_rows(expected.fetchall())

    connection = utc_connection(sandboxed_connection())
    path = "not exposed"
    try:
        read = expose_table(connection, catalog, layout.table)
        path = read.path
        lock_down(connection, [read])
        actual = connection.sql(query)
        actual_types = [str(kind) for kind in actual.types]
        actual_names = actual.columns
        actual_rows = canonical_rows(actual.fetchall())
    except duckdb.Error as error:
        return Outcome(
            layout.name,
            query,
            path,
            False,
            (),
            f"the read path raised {type(error).__name__}",
            str(error).splitlines()[0],
        )
    finally:
        connection.close()

    differences = []
    for i, (name, kind) in enumerate(zip(expected.columns, expected_types, strict=True)):
        got_name = actual_names[i] if i < len(actual_names) else None
        got_kind = actual_types[i] if i < len(actual_types) else None
        if (got_name, got_kind) != (name, kind):
            differences.append(f"column {i + 1} {name}: read path {got_kind} ({got_name}), native {kind}")
    if len(actual_types) > len(expected_types):
        differences.append(f"the read path returns {len(actual_types)} columns, native {len(expected_types)}")

    only_read, only_native = actual_rows - expected_rows, expected_rows - actual_rows
    if not only_read and not only_native:
        return Outcome(layout.name, query, path, True, tuple(differences))
    description = (
        f"{sum(only_read.values())} of {sum(actual_rows.values())} rows only in the read path, "
        f"{sum(only_native.values())} of {sum(expected_rows.values())} only in the native table"
    )
    first = f"read path {_first(only_read)}; native {_first(only_native)}"
    return Outcome(layout.name, query, path, False, tuple(differences), description, first)


def reference_differences(catalog: Catalog, layout: Layout) -> list[str]:
    """Returns how pyiceberg's own reader disagrees with the layout's known rows (empty when it holds them), so
    that the native table stands for what the Iceberg table holds."""
    scanned = catalog.load_table(layout.table).scan().to_arrow()
    problems = []
    if scanned.column_names != layout.rows.column_names:
        problems.append(f"pyiceberg reads the columns {scanned.column_names}, the layout {layout.rows.column_names}")
    names = layout.rows.column_names

    def rows(table: Any) -> Counter[tuple[str, ...]]:
        return Counter(tuple(canonical(row.get(name)) for name in names) for row in table.to_pylist())

    got, known = rows(scanned), rows(layout.rows)
    if got != known:
        problems.append(
            f"pyiceberg reads {sum((got - known).values())} rows the layout lacks, and misses "
            f"{sum((known - got).values())}: first {_first(got - known)} / {_first(known - got)}"
        )
    return problems
