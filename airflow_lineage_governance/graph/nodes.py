"""The history's lineage as a graph of node objects: one `LineageNode` per column or table any shape names, each
holding every edge any shape states from it and into it, with the shape that states it and the node at the
other end. A walk goes from node to node by reference and keys what it reached by node (an identity hash), so a
walk reaching 25,000 columns hashes no names.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.history import Shape

Entry = tuple[Edge, "Shape", "LineageNode"]
"""An edge of a node, the shape that states it, and the node at its other end."""


class Ordered(NamedTuple):
    """A node's edges in order, whether one edge (source, target, type, subtype) is stated by two jobs, or a job
    and a declaration or design (then two of them can hold at once), and the serial of each edge's shape (an
    array: a walk reads which edges hold from it without touching the edges that do not)."""

    entries: list[Entry]
    shared: bool
    serials: array[int]


class LineageNode:
    """A column or table of the history: its ref and dotted name, its table's node (None for a table), and the
    edges every shape states from it (`leaving`) and into it (`entering`), each list sorted when first asked
    after it changed."""

    __slots__ = ("ref", "name", "table", "_out", "_in", "_out_order", "_in_order")

    def __init__(self, ref: ColumnRef | TableRef, table: LineageNode | None) -> None:
        self.ref, self.name, self.table = ref, str(ref), table
        self._out: list[Entry] = []
        self._in: list[Entry] = []
        self._out_order: Ordered | None = None
        self._in_order: Ordered | None = None

    @property
    def is_table(self) -> bool:
        """Returns True for a table's node."""
        return self.table is None

    def leaving(self) -> Ordered:
        """Returns every edge any shape states from the node, by target, type, subtype and source."""
        found = self._out_order
        if found is None:
            found = self._out_order = _ordered(self._out, _by_target)
        return found

    def entering(self) -> Ordered:
        """Returns every edge any shape states into the node, DIRECT first, then by source and subtype."""
        found = self._in_order
        if found is None:
            found = self._in_order = _ordered(self._in, _by_source)
        return found

    def __repr__(self) -> str:
        return f"LineageNode({self.name})"


class NodeIndex:
    """Every node of the history by ref, and the edges of every shape added."""

    def __init__(self) -> None:
        self.nodes: dict[ColumnRef | TableRef, LineageNode] = {}

    def get(self, ref: ColumnRef | TableRef) -> LineageNode | None:
        """Returns the node of the ref, or None when no shape names it in an edge."""
        return self.nodes.get(ref)

    def node(self, ref: ColumnRef | TableRef) -> LineageNode:
        """Returns the node of the ref, made when first asked (a column's node with its table's)."""
        found = self.nodes.get(ref)
        if found is None:
            table = None if type(ref) is TableRef else self.node(ref.table)  # type: ignore[union-attr]
            found = self.nodes[ref] = LineageNode(ref, table)
        return found

    def add(self, shape: Shape) -> None:
        """Adds the shape's edges to the nodes at their two ends."""
        node = self.node
        for edge in shape.edges:
            source, target = node(edge.source), node(edge.target)
            source._out.append((edge, shape, target))
            source._out_order = None
            target._in.append((edge, shape, source))
            target._in_order = None


def _ordered(entries: list[Entry], key: Callable[[Entry], Any]) -> Ordered:
    ordered = sorted(entries, key=key)
    serials = array("q", (shape.serial for _, shape, _ in ordered))
    stated_by: dict[tuple[object, ...], object] = {}
    for edge, shape, _ in ordered:
        by = edge.job if shape.static is None else shape.static  # a job's runs hold one of its shapes at a time
        if stated_by.setdefault(edge[:4], by) != by:
            return Ordered(ordered, True, serials)
    return Ordered(ordered, False, serials)


def _by_target(entry: Entry) -> tuple[str, str, str]:
    edge = entry[0]
    return entry[2].name, edge.type, edge.subtype


def _by_source(entry: Entry) -> tuple[bool, str, str]:
    edge = entry[0]
    return edge.type != EdgeType.DIRECT, entry[2].name, edge.subtype
