"""The history's lineage as a graph of numbered nodes.

One `LineageNode` per column or table any shape names, each holding every edge any shape states from it and into it,
with the shape that states it and the node at the other end. Each node's edges are also kept as arrays (the serial of
each edge's shape, the number of the node at its other end, what kind of edge it is), so a walk reaching 25,000 columns
reads which edges hold and where they lead from arrays and numbers, without touching the edges that do not hold, and
keeps what it reached by number.
"""

from __future__ import annotations

from array import array
from bisect import insort
from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.records import Shape

Entry = tuple[Edge, "Shape", "LineageNode"]
"""An edge of a node, the shape that states it, and the node at its other end."""

TO_TABLE, DIRECT_COLUMNS = 1, 2
"""The kinds of an edge in `Ordered.kinds`: its other end is a table; it is a DIRECT edge between two columns."""


class Ordered(NamedTuple):
    """A node's edges in order and, per edge, the serial of its shape and the node at its other end.

    The node at the other end is its number with the edge's kind (`TO_TABLE`, `DIRECT_COLUMNS`); `states` reads the
    state of every edge's shape from a view's states by serial at once (None for fewer than two edges). One edge
    (source, target, type, subtype) can be listed twice, stated by two jobs: a walk meets its target the first time;
    lists of edges drop the repeat.
    """

    entries: list[Entry]
    serials: array[int]
    targets: array[int]  # the number of the node at the other end times 4, plus the edge's kind
    states: Callable[[bytearray], tuple[int, ...]] | None


class Writer(NamedTuple):
    """A shape that writes a table: its job, its serial, and the numbers of the columns it names for the table."""

    job: str
    serial: int
    columns: array[int]


class LineageNode:
    """A column or table of the history.

    Its number, ref and dotted name, its table's node (None for a table), and the edges every shape states from it
    (`leaving`) and into it (`entering`), each list ordered when first asked after it changed.
    """

    __slots__ = (
        "index",
        "ref",
        "name",
        "table",
        "_out",
        "_in",
        "_out_order",
        "_in_order",
        "columns",
        "numbers",
        "writers",
    )

    def __init__(self, index: int, ref: ColumnRef | TableRef, table: LineageNode | None) -> None:
        self.index, self.ref, self.name, self.table = index, ref, str(ref), table
        self._out: list[Entry] = []
        self._in: list[Entry] = []
        self._out_order: Ordered | None = None
        self._in_order: Ordered | None = None
        self.columns: array[int] | None = None  # a table's: every column any shape named, in the order first named
        self.numbers: dict[str, int] | None = None  # a table's: the number of each of those columns by name
        self.writers: list[Writer] | None = None  # a table's: the observed shapes that write it, by job

    def leaving(self) -> Ordered:
        """Return every edge any shape states from the node, by target, type, subtype and source."""
        found = self._out_order
        if found is None:
            found = self._out_order = _ordered(self._out, _by_target)
        return found

    def entering(self) -> Ordered:
        """Return every edge any shape states into the node, DIRECT first, then by source and subtype."""
        found = self._in_order
        if found is None:
            found = self._in_order = _ordered(self._in, _by_source)
        return found

    def __repr__(self) -> str:
        return f"LineageNode({self.name})"


class NodeIndex:
    """Every node of the history by ref and by number, with each column's table and each name's rank.

    A column's table is its number (-1 for a table); the rank of each node's name among all names lets walks order what
    they reached without reading names.
    """

    def __init__(self) -> None:
        self.nodes: dict[ColumnRef | TableRef, LineageNode] = {}
        self.by_index: list[LineageNode] = []
        self.tables = array("q")
        self.out_orders: list[Ordered | None] = []  # by number: the node's `leaving()` once worked out
        self.version = 0  # how many shapes were added: answers that keep places among a node's edges check it
        self._ranks: array[int] | None = None

    def get(self, ref: object) -> LineageNode | None:
        """Return the node of the ref, or None when no shape names it."""
        return self.nodes.get(ref)  # type: ignore[call-overload,no-any-return]

    def node(self, ref: ColumnRef | TableRef) -> LineageNode:
        """Return the node of the ref, made when first asked (a column's node with its table's)."""
        found = self.nodes.get(ref)
        if found is None:
            table = None if type(ref) is TableRef else self.node(ref.table)  # type: ignore[union-attr]
            found = self.nodes[ref] = LineageNode(len(self.by_index), ref, table)
            self.by_index.append(found)
            self.tables.append(table.index if table is not None else -1)
            self.out_orders.append(None)
            self._ranks = None
        return found

    def leaving(self, number: int) -> Ordered:
        """Return the numbered node's `leaving()`, kept by number for walks."""
        found = self.out_orders[number] = self.by_index[number].leaving()
        return found

    def ranks(self) -> array[int]:
        """Return the rank of each node's dotted name among all the names (by number).

        Worked out again when nodes were added since.
        """
        found = self._ranks
        if found is None:
            found = array("q", bytes(8 * len(self.by_index)))
            for rank, node in enumerate(sorted(self.by_index, key=_name)):
                found[node.index] = rank
            self._ranks = found
        return found

    def add(self, shape: Shape) -> None:
        """Add the shape's edges to the nodes at their two ends, and its columns to their tables'.

        An observed shape is also added to the writers of its output tables.
        """
        node = self.node
        self.version += 1
        for edge in shape.edges:
            source, target = node(edge.source), node(edge.target)
            source._out.append((edge, shape, target))
            source._out_order = self.out_orders[source.index] = None
            target._in.append((edge, shape, source))
            target._in_order = None
        for table_ref, names in shape.columns.items():
            table = node(table_ref)
            if table.columns is None:
                table.columns, table.numbers = array("q"), {}
            numbers = table.numbers
            assert numbers is not None
            for name in names:
                if name not in numbers:
                    numbers[name] = number = node(ColumnRef(table_ref, name)).index
                    table.columns.append(number)
        if shape.static is None:
            for table_ref in shape.outputs:
                table = node(table_ref)
                columns = array("q", map((table.numbers or {}).__getitem__, shape.columns.get(table_ref, ())))
                writers = table.writers if table.writers is not None else []
                insort(writers, Writer(shape.job, shape.serial, columns), key=_job)
                table.writers = writers


def _ordered(entries: list[Entry], key: Callable[[Entry], Any]) -> Ordered:
    ordered = sorted(entries, key=key)
    direct = EdgeType.DIRECT
    targets = array(
        "q",
        (
            other.index << 2
            | (
                TO_TABLE
                if other.table is None
                else DIRECT_COLUMNS
                if edge.type == direct and type(edge.target) is ColumnRef
                else 0
            )
            for edge, _, other in ordered
        ),
    )
    serials = array("q", (shape.serial for _, shape, _ in ordered))
    return Ordered(ordered, serials, targets, itemgetter(*serials) if len(serials) > 1 else None)


def _job(writer: Writer) -> str:
    return writer.job


def _name(node: LineageNode) -> str:
    return node.name


def _by_target(entry: Entry) -> tuple[str, str, str]:
    edge = entry[0]
    return entry[2].name, edge.type, edge.subtype


def _by_source(entry: Entry) -> tuple[bool, str, str]:
    edge = entry[0]
    return edge.type != EdgeType.DIRECT, entry[2].name, edge.subtype
