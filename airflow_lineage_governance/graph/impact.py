"""Impact (downstream) and provenance (upstream) of a column: walks of the lineage graph, INDIRECT included.

An INDIRECT edge into a table means every row of it can change, so the walk goes on from all its columns.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.errors import UnknownColumnError


@dataclass
class Impact:
    """What a change to one column can reach."""

    column: str
    values: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    columns_reached: list[str] = field(default_factory=list)
    paths: dict[str, list[Edge]] = field(default_factory=dict)
    owners: dict[str, str | None] = field(default_factory=dict)
    score: float = 0.0

    def to_dict(self) -> dict[str, object]:
        """Returns the impact as the CLI's `--json` prints it."""
        return {"column": self.column, "values": self.values, "rows": self.rows,
                "columns_reached": self.columns_reached,
                "paths": {c: [e.to_dict() for e in path] for c, path in self.paths.items()},
                "owners": self.owners, "score": round(self.score, 3)}


def _table(column: str) -> str:
    return column.rsplit(".", 1)[0]


def _check_known(lineage: LineageGraph, column: str) -> None:
    if column.count(".") != 2:
        raise UnknownColumnError(column, "name it as namespace.table.column")
    if not lineage.knows(column):
        raise UnknownColumnError(column, "check the name, or that the jobs reading it sent their events")


def _walk(start: str, step: Callable[[str], list[tuple[str, Edge]]]) -> dict[str, list[Edge]]:
    paths: dict[str, list[Edge]] = {start: []}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for reached, edge in step(node):
            if reached not in paths:
                paths[reached] = [*paths[node], edge]
                queue.append(reached)
    del paths[start]
    return paths


def downstream(lineage: LineageGraph, column: str, owners: Mapping[str, str | None] | None = None,
               weight: Callable[[str], float] | None = None) -> Impact:
    """Returns the columns whose values can change (DIRECT paths), the tables whose rows can change (any
    INDIRECT edge into a table), every column reached in all with the path that reaches it first, the owners
    of the tables reached, and the blast-radius score (the sum of `weight(table)` over columns reached).
    Raises UnknownColumnError when no event mentions the column."""
    _check_known(lineage, column)
    rows: dict[str, None] = {}

    def every_edge(node: str) -> list[tuple[str, Edge]]:
        steps = []
        for edge in lineage.out_edges(node):
            if edge.into_table:
                rows[edge.target] = None
                steps.extend((c, edge) for c in lineage.columns_of(edge.target))
            else:
                steps.append((edge.target, edge))
        return steps

    def direct_edges(node: str) -> list[tuple[str, Edge]]:
        return [(e.target, e) for e in lineage.out_edges(node) if e.type == "DIRECT" and not e.into_table]

    paths = _walk(column, every_edge)
    values = sorted(_walk(column, direct_edges))
    reached = sorted(paths)
    tables = sorted({_table(c) for c in reached} | set(rows))
    owners = owners or {}
    score = sum((weight or (lambda _: 1.0))(_table(c)) for c in reached)
    return Impact(column, values, sorted(rows), reached, {c: paths[c] for c in reached},
                  {t: owners.get(t) for t in tables}, score)


@dataclass
class Provenance:
    """Where one column's values and rows come from."""

    column: str
    sources: list[str] = field(default_factory=list)
    paths: dict[str, list[Edge]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """Returns the provenance as the CLI's `--json` prints it."""
        return {"column": self.column, "sources": self.sources,
                "paths": {c: [e.to_dict() for e in path] for c, path in self.paths.items()}}


def upstream(lineage: LineageGraph, column: str) -> Provenance:
    """Returns every column the column depends on, through its own edges and the edges that shape its
    table's rows, each with the path (source first) that reaches it. Raises UnknownColumnError."""
    _check_known(lineage, column)

    def step(node: str) -> list[tuple[str, Edge]]:
        edges = [*lineage.in_edges(node), *lineage.in_edges(_table(node))]
        return [(e.source, e) for e in edges]

    paths = _walk(column, step)
    sources = sorted(paths)
    return Provenance(column, sources, {c: list(reversed(paths[c])) for c in sources})
