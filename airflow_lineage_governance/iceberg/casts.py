"""Casting a statement's result to the types its table holds, by DuckDB, inside the statement's connection.

An INSERT's values to the target's column types, a CTAS's to the Iceberg types that hold its DuckDB types.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
from duckdb.sqltypes import DuckDBPyType
from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, PrimitiveType

from airflow_lineage_governance.iceberg.data_files import (
    BATCH_ROWS,
    Compression,
    DuckDBFileWriter,
    ResultStream,
    write_parquet,
)
from airflow_lineage_governance.iceberg.errors import IcebergWriteError, without_values
from airflow_lineage_governance.iceberg.types import (
    NoIcebergTypeError,
    duckdb_type,
    iceberg_schema,
    quoted,
    result_type,
)
from airflow_lineage_governance.refs import TableRef

RESULT = "__statement_result"
"""The name under which the wrapping SELECT reads the statement's SELECT."""


@dataclass(frozen=True)
class Cast:
    """One column the write takes from DuckDB.

    Its name in the table, its Iceberg type, and the position of the statement's SELECT column it is cast from (None:
    NULL, a column the INSERT does not name).
    """

    name: str
    kind: IcebergType
    source: int | None


def source_names(casts: Sequence[Cast], width: int) -> list[str]:
    """Return the names under which the wrapping SELECT reads the statement's SELECT's `width` columns.

    The table's column each is cast to (so DuckDB's errors name it), else, where two would differ only by case (DuckDB's
    names do not), c1, c2, … by position.
    """
    by_position = {cast.source: cast.name for cast in casts if cast.source is not None}
    names = [by_position.get(position, f"c{position + 1}") for position in range(width)]
    if len({name.casefold() for name in names}) < width:
        return [f"c{position + 1}" for position in range(width)]
    return names


def _source(cast: Cast, names: Sequence[str]) -> str:
    return "NULL" if cast.source is None else f"q.{quoted(names[cast.source])}"


def cast_expression(cast: Cast, names: Sequence[str]) -> str:
    """Return the DuckDB expression that casts the SELECT's column (read as `names`) to the column's type.

    In the form Arrow takes it.
    """
    expression = f"CAST({_source(cast, names)} AS {duckdb_type(cast.kind)})"
    handed = result_type(cast.kind)
    return expression if handed == duckdb_type(cast.kind) else f"CAST({expression} AS {handed})"


def _over_result(selected: Sequence[str], names: Sequence[str]) -> str:
    """Return a SELECT of `selected` over the statement's SELECT, its columns read as `names` by position."""
    return f"SELECT {', '.join(selected)} FROM {RESULT} AS q({', '.join(map(quoted, names))})"


def cast_select(casts: Sequence[Cast], width: int) -> str:
    """Return the SELECT over the statement's SELECT (`width` columns) that gives the table's columns in order.

    Each column is cast by DuckDB to its type.
    """
    names = source_names(casts, width)
    return _over_result([f"{cast_expression(cast, names)} AS {quoted(cast.name)}" for cast in casts], names)


def failed_cast_select(casts: Sequence[Cast], width: int) -> str:
    """Return the SELECT that counts, for each cast column the SELECT gives, the values DuckDB cannot cast."""
    names = source_names(casts, width)
    counts = [
        f"count(*) FILTER (WHERE {_source(cast, names)} IS NOT NULL AND "
        f"TRY_CAST({_source(cast, names)} AS {duckdb_type(cast.kind)}) IS NULL)"
        for cast in casts
        if cast.source is not None
    ]
    return _over_result(counts or ["0"], names)


def ctas_casts(target: TableRef, columns: Sequence[str], types: Sequence[DuckDBPyType]) -> tuple[Schema, list[Cast]]:
    """Return the schema a CTAS creates and the casts to it.

    Each column is of the Iceberg type that holds its DuckDB type. Raises IcebergWriteError when two columns share a
    name, or no Iceberg type holds a column's type: the sentence names the column, its DuckDB type and the CAST to
    write.
    """
    repeated = next((name for name in columns if columns.count(name) > 1), None)
    if repeated is not None:
        raise IcebergWriteError(
            target,
            f"the SELECT gives more than one column the name {repeated}",
            "give each column its own name with AS; nothing was written",
        )
    try:
        schema = iceberg_schema(list(zip(columns, types, strict=True)))
    except NoIcebergTypeError as error:
        kind = error.duckdb_name
        within = "" if error.held == kind else f" (no Iceberg type holds its {error.held} exactly)"
        advice = f"write it as CAST(... AS {error.cast_to}) in the SELECT"
        if error.held == '"NULL"':
            advice = f"write it as CAST(NULL AS {error.cast_to}), or as the type the column should have, in the SELECT"
        raise IcebergWriteError(
            target,
            f"column {error.column} has the type {kind}, which an Iceberg table cannot hold{within}",
            f"{advice}; nothing was written",
        ) from None
    return schema, [Cast(field.name, field.field_type, position) for position, field in enumerate(schema.fields)]


def _position(target: TableRef, names: Sequence[str], name: str) -> str:
    """Return the table's column that the INSERT names `name`.

    The one spelt the same, else the only one spelt the same but for case (as DuckDB matches names). Raises
    IcebergWriteError when there is none.
    """
    if name in names:
        return name
    alike = [column for column in names if column.casefold() == name.casefold()]
    if len(alike) != 1:
        raise IcebergWriteError(
            target,
            f"the INSERT names the column {name}, which the table does not have",
            "name the table's own columns in the INSERT; nothing was written",
        )
    return alike[0]


def insert_casts(target: TableRef, schema: Schema, columns: Sequence[str], width: int) -> list[Cast]:
    """Return the casts that give every column of the table (`schema`) from the SELECT's `width` columns.

    Matched by position to the INSERT's `columns` (all the table's columns when it names none); the others are NULL.
    Raises IcebergWriteError when the counts differ, a column is named twice or is not the table's, or a required column
    is not named.
    """
    names = [field.name for field in schema.fields]
    named = [_position(target, names, name) for name in columns] if columns else names
    if len(named) != width:
        raise IcebergWriteError(
            target,
            f"the INSERT names {len(named)} columns and its SELECT gives {width}",
            "give the SELECT one column for each column the INSERT names; nothing was written",
        )
    repeated = next((name for name in named if named.count(name) > 1), None)
    if repeated is not None:
        raise IcebergWriteError(
            target,
            f"the INSERT names the column {repeated} more than once",
            "name each column once; nothing was written",
        )
    missing = next((field.name for field in schema.fields if field.required and field.name not in named), None)
    if missing is not None:
        raise IcebergWriteError(
            target,
            f"column {missing} is required (NOT NULL), and the INSERT gives it no value",
            "name it in the INSERT with a value for every row; nothing was written",
        )
    positions = {name: position for position, name in enumerate(named)}
    return [Cast(field.name, field.field_type, positions.get(field.name)) for field in schema.fields]


def _over(relation: duckdb.DuckDBPyRelation, select: str) -> duckdb.DuckDBPyRelation:
    """Return `select` run over the statement's SELECT (`relation`, as RESULT)."""
    selected = relation.query(RESULT, select)
    if selected is None:  # a SELECT always makes a relation
        raise duckdb.InvalidInputException("the wrapping SELECT made no relation")
    return selected


def engine_message(error: Exception) -> str:
    """Return DuckDB's message for `error` without values.

    DuckDB's Python binding fails to decode a message that quotes bytes which are not text (a BLOB's), and that message
    is withheld whole.
    """
    if isinstance(error, UnicodeDecodeError):
        return "DuckDB's message quoted bytes that are not text, withheld"
    return without_values(str(error))


def _failed_column(relation: duckdb.DuckDBPyRelation, casts: Sequence[Cast]) -> Cast | None:
    """Return the first cast column DuckDB cannot cast a value of (None when none is found, or the SELECT itself fails).

    One pass with TRY_CAST, then, as TRY_CAST fails a nested value inside its list or struct and keep the rest, one pass
    for each nested column.
    """
    width = len(relation.columns)
    sourced = [cast for cast in casts if cast.source is not None]
    try:
        failed = _over(relation, failed_cast_select(casts, width)).fetchall()[0]
    except (duckdb.Error, UnicodeDecodeError):
        return None
    column = next((cast for cast, count in zip(sourced, failed, strict=False) if count), None)
    if column is not None:
        return column
    names = source_names(casts, width)
    for cast in sourced:
        if isinstance(cast.kind, PrimitiveType):
            continue
        try:
            _over(relation, _over_result([f"count({cast_expression(cast, names)})"], names)).fetchall()
        except (duckdb.Error, UnicodeDecodeError):
            return cast
    return None


def _cast_error(
    target: TableRef, relation: duckdb.DuckDBPyRelation, casts: Sequence[Cast], error: Exception
) -> IcebergWriteError:
    """Return the error to raise when DuckDB fails to run the SELECT cast to the table's types.

    Naming the column whose value DuckDB cannot cast, when one is found.
    """
    message = engine_message(error)
    column = _failed_column(relation, casts)
    if column is None or column.source is None:
        return IcebergWriteError(
            target, f"DuckDB could not run the statement's SELECT ({message})", "fix the statement; nothing was written"
        )
    source = relation.types[column.source]
    return IcebergWriteError(
        target,
        f"column {column.name} cannot take the SELECT's {source} values as {duckdb_type(column.kind)} ({message})",
        "CAST them in the SELECT to a type that holds them, or leave out the rows that do not fit; nothing was written",
    )


def cast_result(target: TableRef, relation: duckdb.DuckDBPyRelation, casts: Sequence[Cast]) -> pa.Table:
    """Return the statement's SELECT (`relation`) as Arrow, every column cast by DuckDB to its column's type.

    Raises IcebergWriteError when DuckDB cannot run the SELECT, or cannot cast a value (naming the column).
    """
    try:
        result = _over(relation, cast_select(casts, len(relation.columns))).to_arrow_table()
    except (duckdb.Error, UnicodeDecodeError) as error:
        raise _cast_error(target, relation, casts, error) from None
    if result is None:
        raise IcebergWriteError(
            target, "DuckDB gave no result for the statement's SELECT", "fix the statement; nothing was written"
        )
    return result


def cast_stream(
    target: TableRef,
    relation: duckdb.DuckDBPyRelation,
    casts: Sequence[Cast],
    rows: int = BATCH_ROWS,
    staging: str | None = None,
    order_by: str = "",
) -> ResultStream:
    """Stream the statement's SELECT as Arrow record batches, every column cast by DuckDB to its column's type.

    DuckDB runs the SELECT anew on each call of the stream's `batches`. Iterating, or writing, raises
    IcebergWriteError when DuckDB cannot run the SELECT, or cannot cast a value (naming the column).

    Args:
        target: The table written, named in errors.
        relation: The statement's SELECT.
        casts: The cast of each output column to its column's type.
        rows: The rows in each record batch.
        staging: A folder the connection may write to; with it, the stream also has DuckDB's own writer of the
            result as one Parquet file there.
        order_by: ORDER BY keys over the cast columns (`sort_order.sort_plan`), which DuckDB sorts the rows by.

    Returns:
        The stream of the cast result.
    """
    try:
        selected = _over(relation, cast_select(casts, len(relation.columns)))
        if order_by:
            selected = selected.order(order_by)
        schema = selected.limit(0).to_arrow_table().schema
    except (duckdb.Error, UnicodeDecodeError) as error:
        raise _cast_error(target, relation, casts, error) from None

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            yield from selected.to_arrow_reader(rows)
        except (duckdb.Error, UnicodeDecodeError) as error:
            raise _cast_error(target, relation, casts, error) from None

    def write(
        folder: str,
        field_ids: dict[str, int],
        compression: Compression,
        file_bytes: int,
        pattern: str,
        partition_by: list[str],
    ) -> None:
        try:
            write_parquet(selected, folder, field_ids, compression, file_bytes, pattern, partition_by)
        except (duckdb.Error, UnicodeDecodeError) as error:
            raise _cast_error(target, relation, casts, error) from None

    def ordered(keys: str) -> ResultStream:
        return cast_stream(target, relation, casts, rows, staging, keys)

    writer = DuckDBFileWriter(staging, write) if staging is not None else None
    return ResultStream(schema, batches, writer, ordered)
