"""Walks of the history as of a time by node number (the numbers of the history's `LineageNode`s).

A walk reaching 25,000 columns reads each node's edges from arrays (which hold, where they lead, of what kind) and keeps
what it reached as numbers in one dict, which is no work for the garbage collector after the answer is made.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import TypeVar

from airflow_lineage_governance.graph.asof import UNKNOWN, AsOf, view_of
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.errors import GraphError
from airflow_lineage_governance.graph.evidence import Evidence
from airflow_lineage_governance.graph.nodes import DIRECT_COLUMNS, TO_TABLE, NodeIndex
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.graph.walk import Step, Walk, breadth_first
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

V = TypeVar("V")
_REF = attrgetter("ref")


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


class HistoryChangedError(GraphError):
    """Raised when an answer's paths are read after events were added to the history it walked."""


PLACE_SHIFT, PARENT_SHIFT = 4, 36
"""A history walk keeps each node it reached as one number: its parent's number, the place of the edge that
reached it among its parent's edges, and its glance (`(parent << 36) | (place << 4) | mark`): one dict of numbers,
no work for the garbage collector."""
PLACES = (1 << (PARENT_SHIFT - PLACE_SHIFT)) - 1  # a node's edges are numbered below 2**32


class _Unpacked(Mapping[int, V]):
    """One part of each node of a history walk, read from its number when asked for."""

    def __init__(self, packed: dict[int, int]) -> None:
        self._packed = packed

    def __iter__(self) -> Iterator[int]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, node: object) -> bool:
        return node in self._packed

    def __getitem__(self, node: int) -> V:
        return self._part(self._packed[node])

    def _part(self, packed: int) -> V:
        raise NotImplementedError


class Parents(_Unpacked[int]):
    """The node each node of a history walk was reached from."""

    def _part(self, packed: int) -> int:
        return packed >> PARENT_SHIFT


class Marks(_Unpacked[int]):
    """The glance of each node of a history walk."""

    def _part(self, packed: int) -> int:
        return packed & 15


class EdgesByPlace(_Unpacked[Edge]):
    """The edge that reached each node of a history walk, read from its parent's edges.

    Raises HistoryChangedError when shapes were added to the history since the walk.
    """

    def __init__(self, index: NodeIndex, packed: dict[int, int]) -> None:
        super().__init__(packed)
        self._index, self._version = index, index.version

    def _part(self, packed: int) -> Edge:
        if self._index.version != self._version:
            raise HistoryChangedError("the lineage history changed after this answer was made; ask again")
        ordered = self._index.by_index[packed >> PARENT_SHIFT].leaving()
        return ordered.entries[(packed >> PLACE_SHIFT) & PLACES][0]


def _places(
    serials: Sequence[int],
    states: Callable[[bytearray], tuple[int, ...]] | None,
    known: bytearray,
    complete: bool,
) -> Iterable[int]:
    """Return the places of a node's edges a walk visits.

    Only those that hold when the view knows every shape's state and the node has more than four edges, else all of
    them.
    """
    if states is not None and len(serials) > 4 and complete:
        return compress(range(len(serials)), states(known))
    return range(len(serials))


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
        """Return the number of the column's node (made when no edge names it yet)."""
        self._start = self.index.node(column).index
        return self._start

    def walk_every(self, start: int, rows: dict[object, None]) -> Walk[int]:
        """Return the walk from a column through every edge that holds as of the view's time.

        An edge into a table reaches each of its columns (the table is noted in `rows`); the walk is as `breadth_first`
        makes it, with each column's glance, and keeps each column's DIRECT column steps for `through_values`.
        (`breadth_first` inlined, on numbers and arrays: this loop runs once per edge of an answer that can reach
        25,000 columns.)
        """
        view, direct_of = self.view, self._direct
        orders, leaving = self.index.out_orders, self.index.leaving
        known, state_of, columns_in = view._holds, view.state, self._columns_in
        size = len(known)
        packed: dict[int, int] = {}  # node -> parent << 36 | place << 4 | mark
        cycle = -1
        queue = deque([start])
        pop, push = queue.popleft, queue.append
        while queue:
            node = pop()
            serials, targets, states = (orders[node] or leaving(node))[1:]
            mark = packed.get(node, -1)  # -1: the column asked about
            if mark >= 0:
                mark &= 15
            direct: list[int] | None = None
            base = node << PARENT_SHIFT
            for place in _places(serials, states, known, view.complete):
                serial = serials[place]
                state = known[serial] if serial < size else UNKNOWN
                if state == UNKNOWN:
                    state = state_of(serial)
                if not state:
                    continue
                hop = state - 1
                if mark >= 0:
                    hop = max(mark >> 1, hop >> 1) << 1 | (mark | hop) & 1
                target = targets[place]
                other, kind = target >> 2, target & 3
                value = base | place << PLACE_SHIFT | hop
                if kind & TO_TABLE:
                    rows[other] = None
                    reached_nodes: Sequence[int] = columns_in(other)
                else:
                    if kind & DIRECT_COLUMNS:
                        if direct is None:
                            direct = direct_of[node] = []
                        direct.append(other)
                    reached_nodes = (other,)
                for reached in reached_nodes:
                    if reached == start:
                        if cycle < 0:
                            cycle = value
                    elif reached not in packed:
                        packed[reached] = value
                        push(reached)
        if cycle >= 0:
            packed[start] = cycle
        self._walked = packed
        return Walk(start, Parents(packed), EdgesByPlace(self.index, packed), Marks(packed))

    def _columns_in(self, table: int) -> Sequence[int]:
        """Return the numbers of the table's columns as its writer's run as of the view's time names them.

        The writer is the first writing job by name whose run then wrote it; with none, the numbers of every column the
        history ever named for the table.
        """
        found = self._columns.get(table)
        if found is None:
            node, holds_at, at = self.index.by_index[table], self.view.history.holds_at, self.view._at
            found = next((w.columns for w in node.writers or () if holds_at(w.serial, at)), None)
            if found is None:
                found = node.columns if node.columns is not None else ()
            self._columns[table] = found
        return found

    def through_values(self, start: int) -> list[int]:
        """Return every column reached from `start` through DIRECT column edges only.

        `walk_every` keeps each column's DIRECT steps; a column it did not walk is looked up.
        """
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
            found = [
                other.index
                for edge, other in self.view.leaving(self.index.by_index[node])
                if other.table is not None and edge.type == EdgeType.DIRECT
            ]
        return found

    def walk_up(self, start: int) -> Walk[int]:
        """Return the walk into a column: its own edges, then those that shape its table's rows, recursively."""
        view, nodes = self.view, self.index.by_index

        def up(node: int) -> list[Step[int]]:
            column = nodes[node]
            assert column.table is not None
            return [(s.index, e) for e, s in (*view.entering(column), *view.entering(column.table))]

        return breadth_first(start, up)

    def ref(self, node: int) -> ColumnRef | TableRef:
        """Return the node's ref."""
        return self.index.by_index[node].ref

    def table(self, node: int) -> int:
        """Return the number of the column's table's node."""
        return self.index.tables[node]

    def refs(self, nodes: Iterable[int]) -> list[ColumnRef | TableRef]:
        """Return the refs of the numbered nodes."""
        return list(map(_REF, map(self.index.by_index.__getitem__, nodes)))

    def tables_of(self, nodes: Iterable[int]) -> Counter[int]:
        """Return how many of the numbered columns each table (by number) has."""
        return Counter(map(self.index.tables.__getitem__, nodes))

    def ordered(self, nodes: object) -> list[int]:
        """Return the node numbers sorted by dotted name (by the rank of each name)."""
        return sorted(nodes, key=self.index.ranks().__getitem__)  # type: ignore[call-overload,no-any-return]

    def node_of(self, ref: object) -> int | None:
        """Return the number of a column's node, or None."""
        node = self.index.get(ref) if isinstance(ref, ColumnRef) else None
        return node.index if node is not None else None

    def evidence(self, edge: Edge) -> Evidence:
        """Return the edge's evidence as of the view's time."""
        return self.view.evidence(edge)

    def mark(self, edge: Edge) -> int:
        """Return the edge's glance (`reach.mark`), worked out once per job and source."""
        key = (edge.job, edge.source_kind)
        found = self._marks.get(key)
        if found is None:
            evidence = self.view.evidence(edge)
            found = self._marks[key] = CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale
        return found

    def last_write(self, table: int) -> RunRecord | None:
        """Return the last run, as of the view's time, that wrote the table."""
        if table in self._written:
            return self._written[table]
        found = self._written[table] = self.view.last_write(self.index.by_index[table].ref)  # type: ignore[arg-type]
        return found


Walker = GraphWalker | HistoryWalker


def walker_of(lineage: LineageGraph | AsOf) -> Walker:
    """Return the walker of a graph or of the history as of a time."""
    return HistoryWalker(lineage) if isinstance(lineage, AsOf) else GraphWalker(lineage)
