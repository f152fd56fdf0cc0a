"""Breadth-first walks of lineage, over a LineageGraph (nodes are refs) or the history as of a time (nodes are the
history's `LineageNode`s, walked by reference: a walk reaching 25,000 columns hashes no names). A walk keeps, for
each node reached, the node it was reached from and the edge between, so paths share their beginnings and are
listed only when asked for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from airflow_lineage_governance.graph.asof import UNKNOWN, AsOf, Evidence, view_of
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.history import RunRecord
from airflow_lineage_governance.graph.nodes import LineageNode
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

N = TypeVar("N", bound=Hashable)
DIRECT = EdgeType.DIRECT
Step = tuple[N, Edge]


@dataclass(frozen=True, slots=True)
class Walk(Generic[N]):
    """Every node a walk reached from `start`, each with the node it was reached from and the edge between
    (`start` itself only when a cycle leads back to it), in the order reached."""

    start: N
    via: dict[N, tuple[N, Edge]]

    def path(self, node: N) -> list[Edge]:
        """Returns the edges from `start` to the node, in walk order."""
        edges = []
        while True:
            parent, edge = self.via[node]
            edges.append(edge)
            if parent == self.start:
                break
            node = parent
        edges.reverse()
        return edges


def walk(start: N, step: Callable[[N], list[Step[N]]]) -> Walk[N]:
    """Returns every node reached from `start` (breadth first, each node's steps in the order given), each with
    the first edge that reaches it; `start` itself only when a cycle leads back to it."""
    via: dict[N, tuple[N, Edge]] = {}
    cycle: tuple[N, Edge] | None = None
    queue = deque([start])
    pop, push = queue.popleft, queue.append
    while queue:
        node = pop()
        for reached, edge in step(node):
            if reached == start:
                if cycle is None:
                    cycle = (node, edge)
            elif reached not in via:
                via[reached] = (node, edge)
                push(reached)
    if cycle is not None:
        via[start] = cycle
    return Walk(start, via)


class GraphWalker:
    """Walks a LineageGraph: its nodes are the refs themselves; evidence from the history it was chosen from."""

    def __init__(self, graph: LineageGraph) -> None:
        self.graph, self.view = graph, view_of(graph)

    def start(self, column: ColumnRef) -> ColumnRef:
        """Returns the node of the column."""
        return column

    def walk_every(self, start: ColumnRef, rows: dict[object, None]) -> Walk[ColumnRef]:
        """Returns the walk from a column through every edge (an edge into a table reaches each of its columns;
        the table is noted in `rows`)."""
        return walk(start, lambda node: self.every(node, rows))

    def every(self, node: ColumnRef, rows: dict[object, None]) -> list[Step[ColumnRef]]:
        """Returns the steps from a column: each edge's target column, a table's every column (the table noted
        in `rows`)."""
        steps: list[Step[ColumnRef]] = []
        graph = self.graph
        for edge in graph.out_edges(node):
            target = edge.target
            if isinstance(target, TableRef):
                rows[target] = None
                steps.extend((c, edge) for c in graph.columns_of(target))
            else:
                steps.append((target, edge))
        return steps

    def direct(self, node: ColumnRef) -> list[Step[ColumnRef]]:
        """Returns the steps from a column through its DIRECT column edges."""
        return [(e.target, e) for e in self.graph.out_edges(node)
                if e.type == EdgeType.DIRECT and isinstance(e.target, ColumnRef)]

    def up(self, node: ColumnRef) -> list[Step[ColumnRef]]:
        """Returns the steps into a column: its own edges, then those that shape its table's rows."""
        graph = self.graph
        return [(e.source, e) for e in (*graph.in_edges(node), *graph.in_edges(node.table))]

    def ref(self, node: ColumnRef | TableRef) -> ColumnRef | TableRef:
        """Returns the node's ref."""
        return node

    def table(self, node: ColumnRef) -> TableRef:
        """Returns the node of the column's table."""
        return node.table

    def name(self, node: ColumnRef | TableRef) -> str:
        """Returns the node's dotted name."""
        return self.graph.name_of(node)

    def evidence(self, edge: Edge) -> Evidence:
        """Returns the edge's evidence: from the history's records, else the edge's own fields."""
        return self.view.evidence(edge) if self.view is not None else Evidence(edge, None)

    def last_write(self, table: TableRef) -> RunRecord | None:
        """Returns the last run that wrote the table, when the graph has history."""
        return self.view.last_write(table) if self.view is not None else None

    def mark(self, edge: Edge) -> int:
        """Returns the edge's glance: its confidence and staleness as a small int (`reach.mark`)."""
        evidence = self.evidence(edge)
        return CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale

    def node_of(self, ref: object) -> ColumnRef | None:
        """Returns the node of a column: the ref itself."""
        return ref if isinstance(ref, ColumnRef) else None

    def through_values(self, start: ColumnRef) -> list[ColumnRef]:
        """Returns every column reached from `start` through DIRECT column edges only."""
        return list(walk(start, self.direct).via)


class HistoryWalker:
    """Walks the history as of a time through its LineageNodes."""

    def __init__(self, view: AsOf) -> None:
        self.view = view
        self._written: dict[LineageNode, RunRecord | None] = {}
        self._direct: dict[LineageNode, list[Step[LineageNode]]] = {}  # kept by `walk_every` for `direct`
        self._marks: dict[tuple[str, str], int] = {}

    def start(self, column: ColumnRef) -> LineageNode:
        """Returns the node of the column (made when no edge names it yet)."""
        return self.view.history.nodes.node(column)

    def walk_every(self, start: LineageNode, rows: dict[object, None]) -> Walk[LineageNode]:
        """Returns the walk from a column through every edge that holds as of the view's time (an edge into a
        table reaches each of its columns; the table is noted in `rows`), as `walk` makes it; keeps each column's
        DIRECT column steps for `direct`. (`walk` with the steps inlined: this loop runs once per edge of an
        answer that can reach 25,000 columns.)"""
        view, direct_of = self.view, self._direct
        known, holds, columns_in = view._holds, view.holds, view.columns_in
        size = len(known)
        via: dict[LineageNode, tuple[LineageNode, Edge]] = {}
        cycle: tuple[LineageNode, Edge] | None = None
        queue = deque([start])
        pop, push = queue.popleft, queue.append
        while queue:
            node = pop()
            entries, shared, serials = node.leaving()
            keys: set[tuple[object, ...]] = set()
            direct: list[Step[LineageNode]] = []
            for index, serial in enumerate(serials):
                state = known[serial] if serial < size else UNKNOWN
                if state == 0 or state == UNKNOWN and not holds(serial):
                    continue
                edge, _, target = entries[index]
                if shared:
                    key = edge[:4]
                    if key in keys:
                        continue
                    keys.add(key)
                reached_now: Sequence[LineageNode]
                if target.table is None:
                    rows[target] = None
                    reached_now = columns_in(target)
                else:
                    if edge.type == DIRECT:
                        direct.append((target, edge))
                    reached_now = (target,)
                for reached in reached_now:
                    if reached is start:
                        if cycle is None:
                            cycle = (node, edge)
                    elif reached not in via:
                        via[reached] = (node, edge)
                        push(reached)
            direct_of[node] = direct
        if cycle is not None:
            via[start] = cycle
        return Walk(start, via)

    def _direct_steps(self, node: LineageNode) -> list[Step[LineageNode]]:
        found = self._direct.get(node)
        if found is None:
            found = [(t, e) for e, t in self.view.leaving(node) if t.table is not None and e.type == DIRECT]
        return found

    def up(self, node: LineageNode) -> list[Step[LineageNode]]:
        """Returns the steps into a column: its own edges, then those that shape its table's rows."""
        view = self.view
        assert node.table is not None
        return [(s, e) for e, s in (*view.entering(node), *view.entering(node.table))]

    def ref(self, node: LineageNode) -> ColumnRef | TableRef:
        """Returns the node's ref."""
        return node.ref

    def table(self, node: LineageNode) -> LineageNode:
        """Returns the node of the column's table."""
        assert node.table is not None
        return node.table

    def name(self, node: LineageNode) -> str:
        """Returns the node's dotted name."""
        return node.name

    def evidence(self, edge: Edge) -> Evidence:
        """Returns the edge's evidence as of the view's time."""
        return self.view.evidence(edge)

    def last_write(self, table: LineageNode) -> RunRecord | None:
        """Returns the last run, as of the view's time, that wrote the table."""
        if table in self._written:
            return self._written[table]
        found = self._written[table] = self.view.last_write(table.ref)  # type: ignore[arg-type]
        return found

    def mark(self, edge: Edge) -> int:
        """Returns the edge's glance: its confidence and staleness as a small int (`reach.mark`), worked out once
        per job and source."""
        key = (edge.job, edge.source_kind)
        found = self._marks.get(key)
        if found is None:
            evidence = self.view.evidence(edge)
            found = self._marks[key] = CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale
        return found

    def node_of(self, ref: object) -> LineageNode | None:
        """Returns the history's node of a column, or None."""
        return self.view.history.nodes.get(ref) if isinstance(ref, ColumnRef) else None

    def through_values(self, start: LineageNode) -> list[LineageNode]:
        """Returns every column reached from `start` through DIRECT column edges only (`walk_every` keeps each
        column's DIRECT steps; a column it did not walk is looked up)."""
        seen: set[LineageNode] = {start}
        found: list[LineageNode] = []
        stack = [start]
        back = False  # a cycle of DIRECT edges leads back to `start`
        while stack:
            for target, _ in self._direct_steps(stack.pop()):
                if target is start:
                    back = True
                elif target not in seen:
                    seen.add(target)
                    found.append(target)
                    stack.append(target)
        if back:
            found.append(start)
        self._direct = {}  # the steps are not needed again: let them go before the answer is kept
        return found


Walker = GraphWalker | HistoryWalker


def walker_of(lineage: LineageGraph | AsOf) -> Walker:
    """Returns the walker of a graph or of the history as of a time."""
    return HistoryWalker(lineage) if isinstance(lineage, AsOf) else GraphWalker(lineage)
