"""Partition specs as DAG authors write them (`"day(paid_at)"`, `"country"`, `"bucket[16](learner_id)"`).

They are read without pyiceberg so a DAG file can be checked when it is parsed; `partition_spec_fields` turns them into
pyiceberg transforms when a task writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from airflow_lineage_governance.iceberg.errors import IcebergError

APPEND = "append"
OVERWRITE_PARTITIONS = "overwrite_partitions"
WRITE_MODES = (APPEND, OVERWRITE_PARTITIONS)
"""How an INSERT writes: appends its rows, or replaces the partitions its rows fall in."""
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IDENTITY = re.compile(rf"^\s*(?:identity\s*\(\s*)?({_NAME})\s*\)?\s*$", re.I)
_TIME = re.compile(rf"^\s*(years?|months?|days?|hours?)\s*\(\s*({_NAME})\s*\)\s*$", re.I)
# bucket[16](id), truncate[4](name), and Spark's bucket(16, id), truncate(4, name).
_WIDTH = re.compile(
    rf"^\s*(bucket|truncate)\s*(?:\[\s*(\d+)\s*\]\s*\(\s*({_NAME})\s*\)|"
    rf"\(\s*(\d+)\s*,\s*({_NAME})\s*\))\s*$",
    re.I,
)


class PartitionSpecError(IcebergError):
    """Raised when a partition_by entry is not a transform this provider writes, or names no column of the table."""


@dataclass(frozen=True)
class PartitionField:
    """One partition field.

    The transform (identity, year, month, day, hour, bucket, truncate), its width for bucket and truncate, and the
    source column.
    """

    transform: str
    column: str
    width: int | None = None

    @property
    def name(self) -> str:
        """Return the partition field's name: the column for identity, else `column_transform`."""
        return self.column if self.transform == "identity" else f"{self.column}_{self.transform}"

    def __str__(self) -> str:
        if self.transform == "identity":
            return self.column
        width = f"[{self.width}]" if self.width is not None else ""
        return f"{self.transform}{width}({self.column})"


def parse_partition_field(text: str, table: str = "the target") -> PartitionField:
    """Return the partition field `text` writes.

    Raises PartitionSpecError naming it when it is none of `column`, `identity(column)`, `year|month|day|hour(column)`,
    `bucket[N](column)`, `truncate[N](column)`.
    """
    if not isinstance(text, str):
        raise PartitionSpecError(
            table,
            f"the partition_by entry {text!r} is not a text",
            'write each entry as a text such as "day(paid_at)" or "country"',
        )
    if found := _TIME.match(text):
        return PartitionField(found.group(1).lower().rstrip("s"), found.group(2).lower())
    if found := _WIDTH.match(text):
        width = int(found.group(2) or found.group(4))
        if width < 1:
            raise PartitionSpecError(
                table,
                f"the partition_by entry {text!r} has a width of 0",
                "give bucket and truncate a width of 1 or more",
            )
        return PartitionField(found.group(1).lower(), (found.group(3) or found.group(5)).lower(), width)
    if found := _IDENTITY.match(text):
        return PartitionField("identity", found.group(1).lower())
    raise PartitionSpecError(
        table,
        f"the partition_by entry {text!r} is not a partition transform",
        "write a column, year(col), month(col), day(col), hour(col), bucket[N](col) or truncate[N](col)",
    )


def check_write_mode(write_mode: str, table: str = "the target") -> str:
    """Return `write_mode` when it is one of WRITE_MODES; raise PartitionSpecError naming it otherwise."""
    if write_mode not in WRITE_MODES:
        raise PartitionSpecError(
            table,
            f"write_mode {write_mode!r} is not one of {', '.join(WRITE_MODES)}",
            "give write_mode='append' or write_mode='overwrite_partitions'",
        )
    return write_mode


def parse_partition_by(entries: Iterable[str] | str | None, table: str = "the target") -> tuple[PartitionField, ...]:
    """Return the partition fields of an operator's `partition_by` (none for None).

    Raises PartitionSpecError for an entry that is not a transform, or for two entries with the same field name.
    """
    if entries is None:
        return ()
    if isinstance(entries, str):
        entries = [entries]
    fields = tuple(parse_partition_field(entry, table) for entry in entries)
    names = [field.name for field in fields]
    for name in names:
        if names.count(name) > 1:
            raise PartitionSpecError(
                table,
                f"partition_by names the partition field {name} twice",
                "give each column one transform of each kind",
            )
    return fields


def check_columns(fields: Sequence[PartitionField], columns: Iterable[str], table: str) -> None:
    """Raise PartitionSpecError naming the first partition field whose column the table (or result) does not have.

    Nothing is written then.
    """
    known = {column.lower() for column in columns}
    for field in fields:
        if field.column not in known:
            raise PartitionSpecError(
                table,
                f"partition_by names the column {field.column}, which the statement does not write",
                "partition by one of the SELECT's columns; nothing was written",
            )


def pyiceberg_transform(field: PartitionField) -> Any:
    """Return pyiceberg's transform of the field (imported when a task writes, not when a DAG is parsed)."""
    from pyiceberg import transforms

    simple = {
        "identity": transforms.IdentityTransform,
        "year": transforms.YearTransform,
        "month": transforms.MonthTransform,
        "day": transforms.DayTransform,
        "hour": transforms.HourTransform,
    }
    if field.transform in simple:
        return simple[field.transform]()
    if field.transform == "bucket":
        return transforms.BucketTransform(field.width or 1)
    return transforms.TruncateTransform(field.width or 1)


def spec_entries(spec: Any, schema: Any) -> tuple[PartitionField, ...]:
    """Return a pyiceberg PartitionSpec's fields as PartitionFields (columns by name in `schema`).

    A transform this provider does not write (void) is left out.
    """
    found = []
    for field in spec.fields:
        column = str(schema.find_column_name(field.source_id)).lower()
        transform = str(field.transform)
        try:
            found.append(parse_partition_field(column if transform == "identity" else f"{transform}({column})"))
        except PartitionSpecError:
            continue
    return tuple(found)
