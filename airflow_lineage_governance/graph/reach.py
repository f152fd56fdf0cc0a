"""How a walk reached each column.

At a glance (the path's confidence and whether a hop is stale, worked out for every column while the walk is answered),
and in full when asked for (`Reached`: the evidence of every hop and the last run that wrote the column's table). A wide
answer reaches 25,000 columns whose paths share their beginnings: the full evidence of each is made from the walk's tree
only for the columns a reader looks at.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.graph.evidence import Evidence
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.graph.walk import Walk
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, Confidence
from airflow_lineage_governance.refs import ColumnRef

BY_RANK = {rank: confidence for confidence, rank in CONFIDENCE_RANK.items()}


def mark(confidence: Confidence, stale: bool) -> int:
    """Return the glance of one hop as a small int.

    Its confidence's rank (higher is weaker) twice, plus 1 when it is stale (two hops combine with `weaker`).
    """
    return CONFIDENCE_RANK[confidence] * 2 + stale


def weaker(first: int, second: int) -> int:
    """Return the glance of a path of two parts: the weaker confidence, stale when either part is."""
    return max(first >> 1, second >> 1) << 1 | (first | second) & 1


class Reached(NamedTuple):
    """How a column is reached.

    The edge that reaches it with its run's record and staleness (the hop), how the column that edge leaves (downstream)
    or enters (upstream) is reached (None: the column asked about), the path's confidence (`observed` only when every
    hop is, else the weakest hop's source), whether a hop is stale, and the last run that wrote the column's table.
    """

    edge: Edge
    record: RunRecord | None
    hop_stale: bool
    before: Reached | None
    confidence: Confidence
    stale: bool
    last_written_by: RunRecord | None = None
    source_first: bool = False  # hops listed from the source (provenance), else from the column asked about

    @property
    def hop(self) -> Evidence:
        """Return the evidence of the edge that reaches the column."""
        return Evidence(self.edge, self.record, self.hop_stale)

    @property
    def hops(self) -> list[Evidence]:
        """Return the evidence of every hop of the path, in the path's order."""
        return [step.hop for step in self.steps()]

    def steps(self) -> list[Reached]:
        """Return how each column of the path is reached, in the path's order.

        This column's last, or first from the source.
        """
        chain: list[Reached] = []
        step: Reached | None = self
        while step is not None:
            chain.append(step)
            step = step.before
        if not self.source_first:
            chain.reverse()
        return chain

    def to_dict(self) -> dict[str, object]:
        """Return the column's evidence as the CLI's JSON shows it."""
        written = self.last_written_by
        return {
            "confidence": str(self.confidence),
            "stale": self.stale,
            "hops": [h.to_dict() for h in self.hops],
            "last_written_by": written.to_dict() if written is not None else None,
        }


def glances(walker: Any, found: Walk[Any]) -> Mapping[Any, int]:
    """Return the glance (`mark`) of every node the walk reached.

    Its path's weakest confidence and whether a hop is stale, each hop's from the walker's evidence (the walk's own when
    it worked them out).
    """
    if found.marks is not None:
        return found.marks
    marks: dict[Any, int] = {}
    start, edge_in = found.start, found.edge_in
    mark_of = walker.mark
    for node, parent in found.parent.items():
        if node != start:
            before = marks.get(parent)
            marks[node] = mark_of(edge_in[node]) if before is None else weaker(before, mark_of(edge_in[node]))
    if start in found.parent:
        before = marks.get(found.parent[start])
        marks[start] = mark_of(edge_in[start]) if before is None else weaker(before, mark_of(edge_in[start]))
    return marks


class ReachedColumns(Mapping[ColumnRef, Reached]):
    """How each column of a walk is reached, by column in the order given; each made when first asked for."""

    def __init__(
        self,
        walker: Any,
        found: Walk[Any],
        columns: list[ColumnRef],
        marks: Mapping[Any, int],
        source_first: bool = False,
    ) -> None:
        self._walker, self._found, self._columns, self._marks = walker, found, columns, marks
        self._source_first = source_first
        self._made: dict[Any, Reached] = {}

    def __getitem__(self, column: ColumnRef) -> Reached:
        node = self._walker.node_of(column)
        if node is None or node not in self._found.parent:
            raise KeyError(column)
        return self._reached(node)

    def __iter__(self) -> Iterator[ColumnRef]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __contains__(self, column: object) -> bool:
        node = self._walker.node_of(column)
        return node is not None and node in self._found.parent

    def glance(self, column: ColumnRef) -> tuple[Confidence, bool]:
        """Return the column's path's confidence and whether a hop is stale, without its evidence.

        Raises KeyError for a column the walk did not reach.
        """
        node = self._walker.node_of(column)
        if node is None or node not in self._marks:
            raise KeyError(column)
        found = self._marks[node]
        return BY_RANK[found >> 1], bool(found & 1)

    def _reached(self, node: Any) -> Reached:
        made, parent_of, start = self._made, self._found.parent, self._found.start
        chain = []  # the nodes from `node` up to one already made, or to the column asked about
        step = node
        while step not in made:
            chain.append(step)
            parent = parent_of[step]
            if parent == start:
                break
            step = parent
        walker, edge_in = self._walker, self._found.edge_in
        for step in reversed(chain):
            parent, edge = parent_of[step], edge_in[step]
            hop = walker.evidence(edge)
            before = None if parent == start else made[parent]
            confidence, stale = BY_RANK[self._marks[step] >> 1], bool(self._marks[step] & 1)
            made[step] = Reached(
                edge,
                hop.record,
                hop.stale,
                before,
                confidence,
                stale,
                walker.last_write(walker.table(step)),
                self._source_first,
            )
        return made[node]


class Paths(Mapping[ColumnRef, list[Edge]]):
    """The path of every column reached, each made when asked for from the hops of how it is reached."""

    def __init__(self, reached: Mapping[ColumnRef, Reached]) -> None:
        self._reached = reached

    def __getitem__(self, column: ColumnRef) -> list[Edge]:
        return [step.edge for step in self._reached[column].steps()]

    def __iter__(self) -> Iterator[ColumnRef]:
        return iter(self._reached)

    def __len__(self) -> int:
        return len(self._reached)

    def __contains__(self, column: object) -> bool:
        return column in self._reached
