"""Breadth-first walks of lineage.

`breadth_first` over any nodes, and `GraphWalker`, the walks of a LineageGraph (its nodes are the refs). A walk
keeps, for each node reached, the node it was reached from and the edge between, so paths share their beginnings and
are listed only when asked for. The history as of a time is walked by node number (graph/history_walk.py).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from airflow_lineage_governance.graph.asof import Evidence, view_of
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

N = TypeVar("N", bound=Hashable)
Step = tuple[N, Edge]


@dataclass(frozen=True, slots=True)
class Walk(Generic[N]):
    """Every node a walk reached from `start`, with the node it was reached from and the edge between.

    The node it was reached from is `parent`, the edge `edge_in`; in the order reached (`start` itself only when a cycle
    leads back to it), and, when the walk worked them out, the glance of each (`reach.mark`).
    """

    start: N
    parent: Mapping[N, N]
    edge_in: Mapping[N, Edge]
    marks: Mapping[N, int] | None = None


def breadth_first(start: N, step: Callable[[N], list[Step[N]]]) -> Walk[N]:
    """Return every node reached from `start`, each with the first edge that reaches it.

    Breadth first, each node's steps in the order given; `start` itself only when a cycle leads back to it.
    """
    parent: dict[N, N] = {}
    edge_in: dict[N, Edge] = {}
    cycle: tuple[N, Edge] | None = None
    queue = deque([start])
    pop, push = queue.popleft, queue.append
    while queue:
        node = pop()
        for reached, edge in step(node):
            if reached == start:
                if cycle is None:
                    cycle = (node, edge)
            elif reached not in parent:
                parent[reached] = node
                edge_in[reached] = edge
                push(reached)
    if cycle is not None:
        parent[start], edge_in[start] = cycle
    return Walk(start, parent, edge_in)


class GraphWalker:
    """Walks a LineageGraph: its nodes are the refs themselves; evidence from the history it was chosen from."""

    def __init__(self, graph: LineageGraph) -> None:
        self.graph, self.view = graph, view_of(graph)

    def start(self, column: ColumnRef) -> ColumnRef:
        """Return the node of the column."""
        return column

    def walk_every(self, start: ColumnRef, rows: dict[object, None]) -> Walk[ColumnRef]:
        """Return the walk from a column through every edge.

        An edge into a table reaches each of its columns; the table is noted in `rows`.
        """
        graph = self.graph

        def every(node: ColumnRef) -> list[Step[ColumnRef]]:
            steps: list[Step[ColumnRef]] = []
            for edge in graph.out_edges(node):
                target = edge.target
                if isinstance(target, TableRef):
                    rows[target] = None
                    steps.extend((c, edge) for c in graph.columns_of(target))
                else:
                    steps.append((target, edge))
            return steps

        return breadth_first(start, every)

    def through_values(self, start: ColumnRef) -> list[ColumnRef]:
        """Return every column reached from `start` through DIRECT column edges only."""
        graph = self.graph
        return list(
            breadth_first(
                start,
                lambda node: [
                    (e.target, e)
                    for e in graph.out_edges(node)
                    if e.type == EdgeType.DIRECT and isinstance(e.target, ColumnRef)
                ],
            ).parent
        )

    def walk_up(self, start: ColumnRef) -> Walk[ColumnRef]:
        """Return the walk into a column: its own edges, then those that shape its table's rows, recursively."""
        graph = self.graph
        return breadth_first(
            start, lambda node: [(e.source, e) for e in (*graph.in_edges(node), *graph.in_edges(node.table))]
        )

    def ref(self, node: ColumnRef | TableRef) -> ColumnRef | TableRef:
        """Return the node's ref."""
        return node

    def table(self, node: ColumnRef) -> TableRef:
        """Return the node of the column's table."""
        return node.table

    def refs(self, nodes: Iterable[ColumnRef | TableRef]) -> list[ColumnRef | TableRef]:
        """Return the nodes' refs: the nodes themselves."""
        return list(nodes)

    def tables_of(self, nodes: Iterable[ColumnRef]) -> Counter[TableRef]:
        """Return how many of the columns each table has."""
        return Counter(n.table for n in nodes)

    def ordered(self, nodes: object) -> list[ColumnRef | TableRef]:
        """Return the nodes sorted by dotted name."""
        return sorted(nodes, key=self.graph.name_of)  # type: ignore[call-overload,no-any-return]

    def node_of(self, ref: object) -> ColumnRef | None:
        """Return the node of a column: the ref itself."""
        return ref if isinstance(ref, ColumnRef) else None

    def evidence(self, edge: Edge) -> Evidence:
        """Return the edge's evidence: from the history's records, else the edge's own fields."""
        return self.view.evidence(edge) if self.view is not None else Evidence(edge, None)

    def mark(self, edge: Edge) -> int:
        """Return the edge's glance: its confidence and staleness as a small int (`reach.mark`)."""
        evidence = self.evidence(edge)
        return CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale

    def last_write(self, table: TableRef) -> RunRecord | None:
        """Return the last run that wrote the table, when the graph has history."""
        return self.view.last_write(table) if self.view is not None else None
