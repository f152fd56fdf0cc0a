"""The rows a MERGE, UPDATE or DELETE ... RETURNING gives back, as JSON values DuckDB renders."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.types import quoted
from airflow_lineage_governance.refs import TableRef

_RETURNED = "__iceberg_returned"


@dataclass(frozen=True)
class ReturnedRows:
    """The rows a statement's RETURNING gave: its column names (as DuckDB names them) and one list per row."""

    columns: tuple[str, ...]
    rows: list[list[Any]]

    def as_json(self) -> dict[str, Any]:
        """Return the rows as the task's XCom holds them: `{"columns": [...], "rows": [[...], ...]}`."""
        return {"columns": list(self.columns), "rows": self.rows}


def returned_rows(
    connection: duckdb.DuckDBPyConnection, returned: pa.Table, limit: int, target: TableRef
) -> ReturnedRows:
    """Render the rows a RETURNING gave as JSON values, each as DuckDB's `to_json` writes it.

    A DECIMAL goes as its text (a JSON number would round it); NaN and the infinities, which JSON has no numbers
    for, as the text DuckDB casts them to (`nan`, `inf`, `-inf`).

    Args:
        connection: the statement's DuckDB connection (its session settings render timestamps with time zone).
        returned: the rows, as DuckDB handed them.
        limit: the most rows the caller takes.
        target: the table the statement writes, for the error sentence.

    Returns:
        The column names and the rows.

    Raises:
        IcebergWriteError: when there are more rows than `limit` (the statement is then not committed).
    """
    if returned.num_rows > limit:
        raise IcebergWriteError(
            target,
            f"its RETURNING gives {returned.num_rows} rows, more than the "
            f"{limit} the returning_max_rows setting lets a task hand on",
            "narrow the statement, drop RETURNING, or raise [lineage_governance] "
            "returning_max_rows; nothing was written",
        )
    names = tuple(returned.column_names)
    if returned.num_rows == 0:
        return ReturnedRows(names, [])
    positional = returned.rename_columns([f"c{i}" for i in range(returned.num_columns)])
    connection.register(_RETURNED, positional)
    try:
        rendered = ", ".join(
            f"to_json(CAST({quoted(field.name)} AS VARCHAR))"
            if pa.types.is_decimal(field.type)
            else f"to_json({quoted(field.name)})"
            for field in positional.schema
        )
        texts = connection.sql(f"SELECT {rendered} FROM {quoted(_RETURNED)}").fetchall()
    finally:
        connection.unregister(_RETURNED)
    return ReturnedRows(names, [[_value(text) for text in row] for row in texts])


def _value(text: str | None) -> Any:
    """Returns the JSON value DuckDB wrote, its NaN and infinities as the text DuckDB casts them to."""
    return None if text is None else json.loads(text, parse_constant=_constant)


def _constant(name: str) -> str:
    return {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(name, name)
