"""Breadth-first walks of lineage, over a LineageGraph (nodes are refs) or the history as of a time (nodes are the
numbers of the history's `LineageNode`s: a walk reaching 25,000 columns reads arrays and keeps numbers, and what
it keeps is no work for the garbage collector). A walk keeps, for each node reached, the node it was reached from
and the edge between, so paths share their beginnings and are listed only when asked for.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from typing import Generic, TypeVar

from airflow_lineage_governance.graph.asof import UNKNOWN, AsOf, Evidence, view_of
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.errors import GraphError
from airflow_lineage_governance.graph.history import RunRecord
from airflow_lineage_governance.graph.nodes import DIRECT_COLUMNS, TO_TABLE, NodeIndex
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

N = TypeVar("N", bound=Hashable)
_REF = attrgetter("ref")
Step = tuple[N, Edge]


@dataclass(frozen=True, slots=True)
class Walk(Generic[N]):
    """Every node a walk reached from `start` with the node it was reached from (`parent`) and the edge between
    (`edge_in`), in the order reached (`start` itself only when a cycle leads back to it), and, when the walk
    worked them out, the glance of each (`reach.mark`)."""

    start: N
    parent: Mapping[N, N]
    edge_in: Mapping[N, Edge]
    marks: Mapping[N, int] | None = None


class HistoryChangedError(GraphError):
    """Raised when an answer's paths are read after events were added to the history it walked."""


PLACE_SHIFT, PARENT_SHIFT = 4, 24
"""A history walk keeps each node it reached as one number: its parent's number, the place of the edge that
reached it among its parent's edges, and its glance (`(parent << 24) | (place << 4) | mark`): one dict of numbers,
no work for the garbage collector."""


class _Packed(Mapping[int, int]):
    def __init__(self, packed: dict[int, int]) -> None:
        self._packed = packed

    def __iter__(self) -> Iterator[int]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, node: object) -> bool:
        return node in self._packed

    def __getitem__(self, node: int) -> int:
        raise NotImplementedError


class Parents(_Packed):
    """The node each node of a history walk was reached from."""

    def __getitem__(self, node: int) -> int:
        return self._packed[node] >> PARENT_SHIFT


class Marks(_Packed):
    """The glance of each node of a history walk."""

    def __getitem__(self, node: int) -> int:
        return self._packed[node] & 15


class EdgesByPlace(Mapping[int, Edge]):
    """The edge that reached each node of a history walk, read from its parent's edges when asked for."""

    def __init__(self, index: NodeIndex, packed: dict[int, int]) -> None:
        self._index, self._packed, self._version = index, packed, index.version

    def __iter__(self) -> Iterator[int]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, node: object) -> bool:
        return node in self._packed

    def __getitem__(self, node: int) -> Edge:
        if self._index.version != self._version:
            raise HistoryChangedError("the lineage history changed after this answer was made; ask again")
        packed = self._packed[node]
        ordered = self._index.by_index[packed >> PARENT_SHIFT].leaving()
        return ordered.entries[(packed >> PLACE_SHIFT) & 0xFFFFF][0]


def walk(start: N, step: Callable[[N], list[Step[N]]]) -> Walk[N]:
    """Returns every node reached from `start` (breadth first, each node's steps in the order given), each with
    the first edge that reaches it; `start` itself only when a cycle leads back to it."""
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
        """Returns the node of the column."""
        return column

    def walk_every(self, start: ColumnRef, rows: dict[object, None]) -> Walk[ColumnRef]:
        """Returns the walk from a column through every edge (an edge into a table reaches each of its columns;
        the table is noted in `rows`)."""
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

        return walk(start, every)

    def through_values(self, start: ColumnRef) -> list[ColumnRef]:
        """Returns every column reached from `start` through DIRECT column edges only."""
        graph = self.graph
        return list(walk(start, lambda node: [(e.target, e) for e in graph.out_edges(node)
                                              if e.type == EdgeType.DIRECT and isinstance(e.target, ColumnRef)])
                    .parent)

    def walk_up(self, start: ColumnRef) -> Walk[ColumnRef]:
        """Returns the walk into a column: its own edges, then those that shape its table's rows, recursively."""
        graph = self.graph
        return walk(start, lambda node: [(e.source, e) for e in (*graph.in_edges(node), *graph.in_edges(node.table))])

    def ref(self, node: ColumnRef | TableRef) -> ColumnRef | TableRef:
        """Returns the node's ref."""
        return node

    def table(self, node: ColumnRef) -> TableRef:
        """Returns the node of the column's table."""
        return node.table

    def refs(self, nodes: Iterable[ColumnRef | TableRef]) -> list[ColumnRef | TableRef]:
        """Returns the nodes' refs: the nodes themselves."""
        return list(nodes)

    def tables_of(self, nodes: Iterable[ColumnRef]) -> Counter[TableRef]:
        """Returns how many of the columns each table has."""
        return Counter(n.table for n in nodes)

    def ordered(self, nodes: object) -> list[ColumnRef | TableRef]:
        """Returns the nodes sorted by dotted name."""
        return sorted(nodes, key=self.graph.name_of)  # type: ignore[call-overload,no-any-return]

    def node_of(self, ref: object) -> ColumnRef | None:
        """Returns the node of a column: the ref itself."""
        return ref if isinstance(ref, ColumnRef) else None

    def evidence(self, edge: Edge) -> Evidence:
        """Returns the edge's evidence: from the history's records, else the edge's own fields."""
        return self.view.evidence(edge) if self.view is not None else Evidence(edge, None)

    def mark(self, edge: Edge) -> int:
        """Returns the edge's glance: its confidence and staleness as a small int (`reach.mark`)."""
        evidence = self.evidence(edge)
        return CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale

    def last_write(self, table: TableRef) -> RunRecord | None:
        """Returns the last run that wrote the table, when the graph has history."""
        return self.view.last_write(table) if self.view is not None else None


class HistoryWalker:
    """Walks the history as of a time by node number."""

    def __init__(self, view: AsOf) -> None:
        self.view = view
        self.index = view.history.nodes
        self._written: dict[int, RunRecord | None] = {}
        self._columns: dict[int, Sequence[int]] = {}
        self._direct: dict[int, list[int]] = {}  # kept by `walk_every` for `through_values`
        self._marks: dict[tuple[str, str], int] = {}
        self._walked: Mapping[int, int] = {}
        self._start = -1

    def start(self, column: ColumnRef) -> int:
        """Returns the number of the column's node (made when no edge names it yet)."""
        self._start = self.index.node(column).index
        return self._start

    def walk_every(self, start: int, rows: dict[object, None]) -> Walk[int]:
        """Returns the walk from a column through every edge that holds as of the view's time (an edge into a
        table reaches each of its columns; the table is noted in `rows`), as `walk` makes it, with each column's
        glance; keeps each column's DIRECT column steps for `through_values`. (`walk` inlined, on numbers and
        arrays: this loop runs once per edge of an answer that can reach 25,000 columns.)"""
        view, direct_of = self.view, self._direct
        orders, leaving = self.index.out_orders, self.index.leaving
        known, state_of, columns_in = view._holds, view.state, self._columns_in
        size = len(known)
        packed: dict[int, int] = {}  # node -> parent << 24 | place << 4 | mark
        cycle = -1
        queue = deque([start])
        pop, push = queue.popleft, queue.append
        while queue:
            node = pop()
            entries, shared, serials, targets, states = orders[node] or leaving(node)
            mark = packed.get(node, -1)  # -1: the column asked about
            if mark >= 0:
                mark &= 15
            keys: set[tuple[object, ...]] | None = set() if shared else None
            direct: list[int] | None = None
            if states is not None and len(serials) > 4 and view.complete:  # visit only the edges that hold
                places: Iterable[int] = compress(range(len(serials)), states(known))
            else:
                places = range(len(serials))
            base = node << PARENT_SHIFT
            for place in places:
                serial = serials[place]
                state = known[serial] if serial < size else UNKNOWN
                if state == UNKNOWN:
                    state = state_of(serial)
                if not state:
                    continue
                if keys is not None:
                    key = entries[place][0][:4]
                    if key in keys:
                        continue
                    keys.add(key)
                hop = state - 1
                if mark >= 0:
                    hop = max(mark >> 1, hop >> 1) << 1 | (mark | hop) & 1
                target = targets[place]
                other, kind = target >> 2, target & 3
                value = base | place << PLACE_SHIFT | hop
                if kind & TO_TABLE:
                    rows[other] = None
                    for reached in columns_in(other):
                        if reached == start:
                            if cycle < 0:
                                cycle = value
                        elif reached not in packed:
                            packed[reached] = value
                            push(reached)
                    continue
                if kind & DIRECT_COLUMNS:
                    if direct is None:
                        direct = direct_of[node] = []
                    direct.append(other)
                if other == start:
                    if cycle < 0:
                        cycle = value
                elif other not in packed:
                    packed[other] = value
                    push(other)
        if cycle >= 0:
            packed[start] = cycle
        self._walked = packed
        return Walk(start, Parents(packed), EdgesByPlace(self.index, packed), Marks(packed))

    def _columns_in(self, table: int) -> Sequence[int]:
        """Returns the numbers of the table's columns as its writer's run as of the view's time names them (the
        first writing job by name whose run then wrote it), else of every column the history ever named for it."""
        found = self._columns.get(table)
        if found is None:
            node, holds_at, at = self.index.by_index[table], self.view.history.holds_at, self.view._at
            found = next((w.columns for w in node.writers or () if holds_at(w.serial, at)), None)
            if found is None:
                found = node.columns if node.columns is not None else ()
            self._columns[table] = found
        return found

    def through_values(self, start: int) -> list[int]:
        """Returns every column reached from `start` through DIRECT column edges only (`walk_every` keeps each
        column's DIRECT steps; a column it did not walk is looked up)."""
        seen: set[int] = {start}
        found: list[int] = []
        stack = [start]
        back = False  # a cycle of DIRECT edges leads back to `start`
        while stack:
            for target in self._direct_steps(stack.pop()):
                if target == start:
                    back = True
                elif target not in seen:
                    seen.add(target)
                    found.append(target)
                    stack.append(target)
        if back:
            found.append(start)
        self._direct = {}  # not needed again: let the lists go before the answer is kept
        return found

    def _direct_steps(self, node: int) -> list[int]:
        found = self._direct.get(node)
        if found is None and (node in self._walked or node == self._start):
            return []  # `walk_every` walked the column and met no DIRECT column edge
        if found is None:
            found = [other.index for edge, other in self.view.leaving(self.index.by_index[node])
                     if other.table is not None and edge.type == EdgeType.DIRECT]
        return found

    def walk_up(self, start: int) -> Walk[int]:
        """Returns the walk into a column: its own edges, then those that shape its table's rows, recursively."""
        view, nodes = self.view, self.index.by_index

        def up(node: int) -> list[Step[int]]:
            column = nodes[node]
            assert column.table is not None
            return [(s.index, e) for e, s in (*view.entering(column), *view.entering(column.table))]

        return walk(start, up)

    def ref(self, node: int) -> ColumnRef | TableRef:
        """Returns the node's ref."""
        return self.index.by_index[node].ref

    def table(self, node: int) -> int:
        """Returns the number of the column's table's node."""
        return self.index.tables[node]

    def refs(self, nodes: Iterable[int]) -> list[ColumnRef | TableRef]:
        """Returns the refs of the numbered nodes."""
        return list(map(_REF, map(self.index.by_index.__getitem__, nodes)))

    def tables_of(self, nodes: Iterable[int]) -> Counter[int]:
        """Returns how many of the numbered columns each table (by number) has."""
        return Counter(map(self.index.tables.__getitem__, nodes))

    def ordered(self, nodes: object) -> list[int]:
        """Returns the node numbers sorted by dotted name (by the rank of each name)."""
        return sorted(nodes, key=self.index.ranks().__getitem__)  # type: ignore[call-overload,no-any-return]

    def node_of(self, ref: object) -> int | None:
        """Returns the number of a column's node, or None."""
        node = self.index.get(ref) if isinstance(ref, ColumnRef) else None
        return node.index if node is not None else None

    def evidence(self, edge: Edge) -> Evidence:
        """Returns the edge's evidence as of the view's time."""
        return self.view.evidence(edge)

    def mark(self, edge: Edge) -> int:
        """Returns the edge's glance (`reach.mark`), worked out once per job and source."""
        key = (edge.job, edge.source_kind)
        found = self._marks.get(key)
        if found is None:
            evidence = self.view.evidence(edge)
            found = self._marks[key] = CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale
        return found

    def last_write(self, table: int) -> RunRecord | None:
        """Returns the last run, as of the view's time, that wrote the table."""
        if table in self._written:
            return self._written[table]
        found = self._written[table] = self.view.last_write(self.index.by_index[table].ref)  # type: ignore[arg-type]
        return found


Walker = GraphWalker | HistoryWalker


def walker_of(lineage: LineageGraph | AsOf) -> Walker:
    """Returns the walker of a graph or of the history as of a time."""
    return HistoryWalker(lineage) if isinstance(lineage, AsOf) else GraphWalker(lineage)
