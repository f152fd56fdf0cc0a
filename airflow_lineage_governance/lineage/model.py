"""The data model of column lineage: dependencies, output columns and a statement's lineage."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from airflow_lineage_governance.kinds import DIRECT_RANK, EdgeType, StatementKind, Subtype
from airflow_lineage_governance.refs import ColumnRef, TableRef


@dataclass(frozen=True)
class Dependency:
    """One source column's part in an output column, or in every row of the target."""

    source: ColumnRef
    type: EdgeType
    subtype: Subtype
    masking: bool = False
    description: str = field(default="", compare=False)

    @property
    def table(self) -> TableRef:
        """Return the source's table."""
        return self.source.table

    @property
    def column(self) -> str:
        """Return the source's column name."""
        return self.source.field

    def sort_key(self) -> tuple[str, str, str, bool]:
        """Return the order dependencies are listed in: by the source's dotted name, then type and subtype."""
        return str(self.source), self.type, self.subtype, self.masking

    def to_dict(self) -> dict[str, object]:
        """Return the dependency as plain JSON-ready data."""
        return {
            "source": str(self.source),
            "type": str(self.type),
            "subtype": str(self.subtype),
            "masking": self.masking,
            "description": self.description,
        }


@dataclass(frozen=True)
class OutputColumn:
    """A column the statement writes, with every source column its values depend on.

    `expression` is the column's SQL with literals as `?`, rendered on first use (rendering every column of
    a wide statement costs more than reading its lineage).
    """

    name: str
    inputs: tuple[Dependency, ...]
    render: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def expression(self) -> str:
        """Returns the output's expression, literals masked."""
        return self.render() if self.render else ""

    def to_dict(self) -> dict[str, object]:
        """Return the column as plain JSON-ready data."""
        return {
            "name": self.name,
            "expression": self.expression,
            "inputs": [dependency.to_dict() for dependency in self.inputs],
        }


@dataclass(frozen=True)
class ColumnLineage:
    """What one CTAS or INSERT ... SELECT writes, column by column, and what shapes its rows."""

    target: TableRef
    kind: StatementKind
    columns: tuple[OutputColumn, ...]
    rows: tuple[Dependency, ...]
    sources: tuple[TableRef, ...]
    types: tuple[str, ...] = field(default=(), compare=False)
    """DuckDB's type of each output column, in order, as it binds the query (empty when the statement's query is
    not bound as one SELECT: a MERGE, UPDATE or DELETE)."""

    def column(self, name: str) -> OutputColumn:
        """Return the output column called `name`; raise KeyError when the statement writes none."""
        for output in self.columns:
            if output.name == name:
                return output
        raise KeyError(f"{self.target} has no output column {name}")

    @property
    def edge_count(self) -> int:
        """Return the number of column-level and row-level edges."""
        return sum(len(output.inputs) for output in self.columns) + len(self.rows)

    def to_dict(self) -> dict[str, object]:
        """Return the lineage as plain JSON-ready data."""
        return {
            "target": str(self.target),
            "kind": str(self.kind),
            "sources": [str(source) for source in self.sources],
            "columns": [output.to_dict() for output in self.columns],
            "rows": [dependency.to_dict() for dependency in self.rows],
        }


def merge(dependencies: Iterable[Dependency]) -> tuple[Dependency, ...]:
    """Return the dependencies with one DIRECT entry per source and one INDIRECT entry per source and subtype, sorted.

    A source's DIRECT entry has the strongest subtype, masked only when every path masks it.
    """
    if not isinstance(dependencies, (list, tuple)):
        dependencies = list(dependencies)
    if len(dependencies) <= 1:
        return tuple(dependencies)
    direct: dict[ColumnRef, Dependency] = {}
    indirect: dict[tuple[ColumnRef, Subtype], Dependency] = {}
    for dependency in dependencies:
        if dependency.type == EdgeType.DIRECT:
            known = direct.get(dependency.source)
            if known is None:
                direct[dependency.source] = dependency
                continue
            stronger = max(known, dependency, key=lambda d: DIRECT_RANK[d.subtype])
            direct[dependency.source] = replace(stronger, masking=known.masking and dependency.masking)
        else:
            key = (dependency.source, dependency.subtype)
            known = indirect.get(key)
            if known is None:
                indirect[key] = dependency
            elif known.masking and not dependency.masking:
                indirect[key] = replace(known, masking=False)
    return tuple(sorted([*direct.values(), *indirect.values()], key=Dependency.sort_key))
