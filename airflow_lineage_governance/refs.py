"""Names of tables and columns as typed values.

`TableRef` (namespace tuple + name, like a pyiceberg identifier) and `ColumnRef` (table + field). Parsed from and
printed to OpenLineage dataset names here and nowhere else: a dataset name is the dotted identifier (`crm.learners`,
`a.b.events`), a column's text form is the dataset name, a dot and the field (`crm.learners.email`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from airflow_lineage_governance.errors import InvalidNameError


class TableRef(NamedTuple):
    """A catalog table: its namespace (one or more levels) and its name."""

    namespace: tuple[str, ...]
    name: str

    @classmethod
    def parse(cls, text: str) -> TableRef:
        """Return the table a dotted name (`db.table`, `a.b.table`) names.

        Raises InvalidNameError when the text has no namespace or an empty part.
        """
        parts = text.split(".")
        if len(parts) < 2 or not all(parts):
            raise InvalidNameError(f"{text!r} does not name a table; write it as namespace.table")
        return cls(tuple(parts[:-1]), parts[-1])

    @classmethod
    def of(cls, identifier: Sequence[str]) -> TableRef:
        """Return the table of a pyiceberg identifier tuple `(*namespace, name)`; raise InvalidNameError."""
        if len(identifier) < 2 or not all(identifier):
            raise InvalidNameError(f"{'.'.join(identifier)!r} does not name a table; write it as namespace.table")
        return cls(tuple(identifier[:-1]), identifier[-1])

    @property
    def identifier(self) -> tuple[str, ...]:
        """Return the pyiceberg identifier `(*namespace, name)`."""
        return (*self.namespace, self.name)

    @property
    def namespace_name(self) -> str:
        """Return the namespace as one dotted name."""
        return ".".join(self.namespace)

    def column(self, field: str) -> ColumnRef:
        """Return the table's column `field`."""
        return ColumnRef(self, field)

    def __str__(self) -> str:
        return ".".join((*self.namespace, self.name))


class ColumnRef(NamedTuple):
    """A column of a catalog table."""

    table: TableRef
    field: str

    @classmethod
    def parse(cls, text: str) -> ColumnRef:
        """Return the column a dotted name (`db.table.column`, `a.b.table.column`) names; the last part is the column.

        Raises InvalidNameError when the text has fewer than three parts or an empty one.
        """
        table, _, field = text.rpartition(".")
        if not field or table.count(".") < 1:
            raise InvalidNameError(f"{text!r} does not name a column; write it as namespace.table.column")
        return cls(TableRef.parse(table), field)

    def __str__(self) -> str:
        return f"{self.table}.{self.field}"
