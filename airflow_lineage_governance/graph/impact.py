"""Impact (downstream) and provenance (upstream) of a column: walks of the lineage graph, INDIRECT included.

An INDIRECT edge into a table means every row of it can change, so the walk goes on from all its columns. The
walk takes a LineageGraph or the history as of a time (graph/asof.py); with history, each reached column gets
the evidence of every hop of its path, the last run that wrote it, a confidence (`observed` only when every hop
is) and whether a hop is stale; edges of the asked column that only superseded runs stated are listed, stale. A
column on a cycle (a job that reads its own output) reaches itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.asof import AsOf, Evidence, view_of, weakest
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.history import RunRecord
from airflow_lineage_governance.kinds import Confidence, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef


@dataclass
class Impact:
    """What a change to one column can reach."""

    column: ColumnRef
    values: list[ColumnRef] = field(default_factory=list)
    rows: list[TableRef] = field(default_factory=list)
    columns_reached: list[ColumnRef] = field(default_factory=list)
    paths: dict[ColumnRef, list[Edge]] = field(default_factory=dict)
    owners: dict[TableRef, str | None] = field(default_factory=dict)
    score: float = 0.0
    reached: dict[ColumnRef, Reached] = field(default_factory=dict)
    retired: list[Evidence] = field(default_factory=list)
    reaches_itself: bool = False
    as_of: str | None = None

    def to_dict(self) -> dict[str, object]:
        """Returns the impact as the CLI's `--json` prints it (every ref as its dotted name): the columns and
        tables reached, paths, owners and score, then each reached column's evidence, confidence and staleness,
        the retired edges (stale), whether the column reaches itself, and the time answered as of."""
        return {"column": str(self.column), "values": [str(c) for c in self.values],
                "rows": [str(t) for t in self.rows], "columns_reached": [str(c) for c in self.columns_reached],
                "paths": {str(c): [e.to_dict() for e in path] for c, path in self.paths.items()},
                "owners": {str(t): owner for t, owner in self.owners.items()}, "score": round(self.score, 3),
                "reached": {str(c): r.to_dict() for c, r in self.reached.items()},
                "retired": [e.to_dict() for e in self.retired], "reaches_itself": self.reaches_itself,
                "as_of": self.as_of}


@dataclass(frozen=True)
class Reached:
    """How a column is reached: the evidence of every hop of its path, the path's confidence, whether a hop is
    stale, and the last run that wrote the column's table."""

    hops: list[Evidence]
    last_written_by: RunRecord | None = None

    @property
    def confidence(self) -> Confidence:
        """Returns `observed` only when every hop is observed, else the weakest hop's source."""
        return weakest(self.hops)

    @property
    def stale(self) -> bool:
        """Returns True when a hop's run is older than the answer's active-since window."""
        return any(h.stale for h in self.hops)

    def to_dict(self) -> dict[str, object]:
        """Returns the column's evidence as the CLI's JSON shows it."""
        written = self.last_written_by
        return {"confidence": str(self.confidence), "stale": self.stale, "hops": [h.to_dict() for h in self.hops],
                "last_written_by": written.to_dict() if written is not None else None}


def _reached(view: AsOf | None, paths: Mapping[ColumnRef, list[Edge]]) -> dict[ColumnRef, Reached]:
    """Returns the evidence of every path (from the view's records; each edge's own fields without history)."""
    found = {}
    for column, path in paths.items():
        if view is None:
            found[column] = Reached([Evidence(e, None) for e in path])
        else:
            found[column] = Reached([view.evidence(e) for e in path], view.last_write(column.table))
    return found


def column_asked(text: str) -> ColumnRef:
    """Returns the column a person's text names (`namespace.table.column`); raises ColumnNotInLineageError
    saying how to name it when the text names no column."""
    try:
        return ColumnRef.parse(text)
    except InvalidNameError:
        raise ColumnNotInLineageError(text, "name it as namespace.table.column") from None


def _check_known(lineage: LineageGraph | AsOf, column: ColumnRef) -> None:
    if not lineage.knows(column):
        raise ColumnNotInLineageError(column, "check the name, or that the jobs reading it sent their events")


def _walk(start: ColumnRef, step: Callable[[ColumnRef], list[tuple[ColumnRef, Edge]]]) -> dict[ColumnRef, list[Edge]]:
    """Returns every column reached from `start` with the first path that reaches it; `start` itself only when a
    cycle leads back to it (its path is the cycle)."""
    paths: dict[ColumnRef, list[Edge]] = {start: []}
    cycle: list[Edge] | None = None
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for reached, edge in step(node):
            if reached == start and cycle is None:
                cycle = [*paths[node], edge]
            elif reached not in paths:
                paths[reached] = [*paths[node], edge]
                queue.append(reached)
    del paths[start]
    if cycle is not None:
        paths[start] = cycle
    return paths


def downstream(lineage: LineageGraph | AsOf, column: ColumnRef, owners: Mapping[TableRef, str | None] | None = None,
               weight: Callable[[TableRef], float] | None = None) -> Impact:
    """Returns the columns whose values can change (DIRECT paths), the tables whose rows can change (any
    INDIRECT edge into a table), every column reached in all with the path that reaches it first, the owners
    of the tables reached, and the blast-radius score (the sum of `weight(table)` over columns reached); with
    history (an AsOf view, or a graph from graph_as_of), each column's evidence and the column's retired edges.
    The column itself is reached when a cycle leads back to it. Raises ColumnNotInLineageError when no event
    mentions the column."""
    _check_known(lineage, column)
    rows: dict[TableRef, None] = {}

    def every_edge(node: ColumnRef) -> list[tuple[ColumnRef, Edge]]:
        steps: list[tuple[ColumnRef, Edge]] = []
        for edge in lineage.out_edges(node):
            target = edge.target
            if isinstance(target, TableRef):
                rows[target] = None
                steps.extend((c, edge) for c in lineage.columns_of(target))
            else:
                steps.append((target, edge))
        return steps

    def direct_edges(node: ColumnRef) -> list[tuple[ColumnRef, Edge]]:
        return [(e.target, e) for e in lineage.out_edges(node)
                if e.type == EdgeType.DIRECT and isinstance(e.target, ColumnRef)]

    name = lineage.name_of
    paths = _walk(column, every_edge)
    values = sorted(_walk(column, direct_edges), key=name)
    reached = sorted(paths, key=name)
    tables = sorted({c.table for c in reached} | set(rows), key=name)
    known_owners = owners or {}
    score = sum((weight or (lambda _: 1.0))(c.table) for c in reached)
    ordered = {c: paths[c] for c in reached}
    view = view_of(lineage)
    return Impact(column, values, sorted(rows, key=name), reached, ordered, {t: known_owners.get(t) for t in tables},
                  score, _reached(view, ordered), view.retired_from(column) if view is not None else [],
                  column in paths, _as_of(view))


def _as_of(view: AsOf | None) -> str | None:
    return view.at.isoformat() if view is not None and view.at is not None else None



@dataclass
class Provenance:
    """Where one column's values and rows come from."""

    column: ColumnRef
    sources: list[ColumnRef] = field(default_factory=list)
    paths: dict[ColumnRef, list[Edge]] = field(default_factory=dict)
    reached: dict[ColumnRef, Reached] = field(default_factory=dict)
    reaches_itself: bool = False
    as_of: str | None = None

    def to_dict(self) -> dict[str, object]:
        """Returns the provenance as the CLI's `--json` prints it (every ref as its dotted name), with each
        source's evidence, confidence and staleness."""
        return {"column": str(self.column), "sources": [str(c) for c in self.sources],
                "paths": {str(c): [e.to_dict() for e in path] for c, path in self.paths.items()},
                "reached": {str(c): r.to_dict() for c, r in self.reached.items()},
                "reaches_itself": self.reaches_itself, "as_of": self.as_of}


def upstream(lineage: LineageGraph | AsOf, column: ColumnRef) -> Provenance:
    """Returns every column the column depends on, through its own edges and the edges that shape its
    table's rows, each with the path (source first) that reaches it and, with history, its evidence (the last
    write named is the source column's table's). Raises ColumnNotInLineageError."""
    _check_known(lineage, column)

    def step(node: ColumnRef) -> list[tuple[ColumnRef, Edge]]:
        edges = [*lineage.in_edges(node), *lineage.in_edges(node.table)]
        return [(e.source, e) for e in edges]

    paths = _walk(column, step)
    sources = sorted(paths, key=lineage.name_of)
    ordered = {c: list(reversed(paths[c])) for c in sources}
    view = view_of(lineage)
    return Provenance(column, sources, ordered, _reached(view, ordered), column in paths, _as_of(view))
