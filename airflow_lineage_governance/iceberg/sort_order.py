"""A table's sort order as the ORDER BY DuckDB sorts a write's rows by."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyiceberg.manifest import DataFile
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import (
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from pyiceberg.types import DoubleType, FloatType, StringType, TimestamptzType

from airflow_lineage_governance.iceberg.data_files import ResultStream


@dataclass(frozen=True)
class SortPlan:
    """How a write sorts its rows to follow a table's sort order."""

    order_by: str
    """DuckDB's ORDER BY keys over the table's columns; empty when the write keeps DuckDB's order."""
    sort_order_id: int | None
    """The sort order every file the write makes is sorted by, recorded on the files; None when only a leading
    part of the order (or none of it) could be applied."""


def sort_plan(schema: Schema, order: SortOrder) -> SortPlan:
    """Return the ORDER BY that sorts rows of `schema` as `order` sorts them, as far as DuckDB can.

    An identity field sorts by its column: strings and binary values byte by byte, -0.0 before 0.0, NaN after every
    number; a year, month, day or hour field by its column truncated to that unit (UTC for a timestamp with time
    zone); nulls first or last as each field says; a void field sorts nothing. A truncate field sorts by its column,
    which orders the truncated values too but not the fields after it, so it ends the keys. A field of another
    transform (bucket), or of a column inside a struct, ends them before it. When the keys end early the rows are
    sorted by the fields before, and the files claim no sort order.

    Args:
        schema: The table's current schema.
        order: The table's default sort order.

    Returns:
        The ORDER BY keys and the id of the order the files may record.
    """
    keys: list[str] = []
    fields = [field for field in order.fields if not isinstance(field.transform, VoidTransform)]
    for position, field in enumerate(fields):
        key = _keys(schema, field)
        if key is None:
            return SortPlan(", ".join(keys), None)
        keys.extend(key)
        if isinstance(field.transform, TruncateTransform) and position < len(fields) - 1:
            return SortPlan(", ".join(keys), None)
    return SortPlan(", ".join(keys), order.order_id if order.fields else None)


def _keys(schema: Schema, field: SortField) -> list[str] | None:
    """Return the ORDER BY keys of one sort field, or None when DuckDB cannot sort by it."""
    column = next((f for f in schema.fields if f.field_id == field.source_id), None)
    if column is None:  # a field inside a struct, or a column no longer in the schema
        return None
    name = '"' + column.name.replace('"', '""') + '"'
    transform = field.transform
    if isinstance(transform, (YearTransform, MonthTransform, DayTransform, HourTransform)):
        unit = {YearTransform: "year", MonthTransform: "month", DayTransform: "day", HourTransform: "hour"}
        utc = f"timezone('UTC', {name})" if isinstance(column.field_type, TimestamptzType) else name
        value = f"date_trunc('{unit[type(transform)]}', {utc})"
    elif isinstance(transform, (IdentityTransform, TruncateTransform)):
        value = f'{name} COLLATE "binary"' if isinstance(column.field_type, StringType) else name
    else:
        return None
    descending = field.direction == SortDirection.DESC
    nulls = "NULLS FIRST" if field.null_order == NullOrder.NULLS_FIRST else "NULLS LAST"
    keys = [f"{value} {'DESC' if descending else 'ASC'} {nulls}"]
    if isinstance(column.field_type, (FloatType, DoubleType)) and isinstance(transform, IdentityTransform):
        # DuckDB holds -0.0 equal to 0.0; Iceberg sorts it first.
        keys.append(f"signbit({name}) {'ASC' if descending else 'DESC'}")
    return keys


SORT_ORDER_POSITION = 15
"""Where pyiceberg 0.12's DataFile keeps its `sort_order_id` (a read-only property over the record's values)."""


def sorted_stream(stream: ResultStream, metadata: TableMetadata) -> tuple[ResultStream, int | None]:
    """Return the stream sorted as the table's sort order says, and the order id its files may record.

    Args:
        stream: The write's rows, in the table's columns.
        metadata: The table's metadata, as the write's transaction holds it.

    Returns:
        The stream sorted by DuckDB (unchanged for an unsorted table, or a stream DuckDB does not make), and the
        sort order id every file of it is sorted by (None when not sorted by the whole order).
    """
    plan = sort_plan(metadata.schema(), metadata.sort_order())
    if not plan.order_by or stream.ordered is None:
        return stream, None
    return stream.ordered(plan.order_by), plan.sort_order_id


def mark_sorted(files: Iterable[DataFile], sort_order_id: int | None) -> None:
    """Record on each data file the sort order its rows follow (nothing when `sort_order_id` is None)."""
    if sort_order_id is None:
        return
    for data_file in files:
        data_file[SORT_ORDER_POSITION] = sort_order_id
