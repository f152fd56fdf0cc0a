"""Classification proposals from lineage.

Each written column gets the stricter of its inputs' classes (Denning's join on the line of classes), through the edge
types lineage.toml lists. Masking never lowers a class, and a declared class is never lowered: downstream, a column
carries the stricter of its declared and proposed class. Columns on a lineage cycle (an incremental job reading its own
output) form one strongly connected component, and each gets the strictest class of everything that reaches the
component.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from airflow_lineage_governance.governance.config import Rules
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.refs import ColumnRef


@dataclass(frozen=True)
class Proposal:
    """What lineage proposes for one written column."""

    column: ColumnRef
    proposed: str | None
    decided_by: Edge | None
    declared: str | None

    def effective(self, rules: Rules) -> str | None:
        """Return the class the column carries downstream: the stricter of declared and proposed."""
        known = [c for c in (self.proposed, self.declared) if c is not None]
        return max(known, key=rules.rank) if known else None

    def to_dict(self) -> dict[str, object]:
        """Return the proposal as plain data (refs as their dotted names)."""
        decided = self.decided_by
        return {
            "column": str(self.column),
            "proposed": self.proposed,
            "declared": self.declared,
            "decided_by": {"source": str(decided.source), "type": str(decided.type), "subtype": str(decided.subtype)}
            if decided
            else None,
        }


def written_columns(lineage: LineageGraph) -> list[ColumnRef]:
    """Return every column of every table some job's events say it wrote, sorted by name."""
    return sorted((c for table in lineage.outputs for c in lineage.columns_of(table)), key=lineage.name_of)


Inputs = list[tuple[str, Edge]]  # a column's input edges, each with its source's name


def _settle_in_dependency_order(
    order: list[str],
    written: set[str],
    settled: Mapping[str, object],
    inputs_of: Callable[[str], Inputs],
    settle: Callable[[str], None],
) -> bool:
    """Settle each written column (by name) after the written columns it reads, depth first in `order`.

    Returns False when done, or True as soon as a cycle is met (what was settled is to be settled again).
    """
    for column in order:
        if column in settled:
            continue
        stack, on_stack = [column], {column}
        while stack:
            current = stack[-1]
            pending = None
            for source, _ in inputs_of(current):
                if source in written and source not in settled:
                    if source in on_stack:
                        return True
                    pending = source
                    break
            if pending is not None:
                stack.append(pending)
                on_stack.add(pending)
                continue
            stack.pop()
            on_stack.discard(current)
            settle(current)
    return False


def _components(written: list[str], inputs_of: Callable[[str], Inputs]) -> list[tuple[list[str], bool]]:
    """Return the strongly connected components of the written columns, through their input edges.

    Each component comes after every component that feeds it, with whether it is a cycle (more than one column, or a
    column that reads itself).
    """
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(written)
    known = set(written)
    graph.add_edges_from((source, c) for c in written for source, _ in inputs_of(c) if source in known)
    condensed = nx.condensation(graph)
    found = []
    for component in nx.topological_sort(condensed):
        members = sorted(condensed.nodes[component]["members"])
        found.append((members, len(members) > 1 or graph.has_edge(members[0], members[0])))
    return found


def propose(
    lineage: LineageGraph, declared: Mapping[ColumnRef, str], rules: Rules, through: tuple[str, ...] | None = None
) -> dict[ColumnRef, Proposal]:
    """Return a proposal for every written column (sorted by name).

    Its inputs' strictest class and the edge that decided it (DIRECT edges first among equals, then by source name).
    Inputs that are themselves written carry their effective class. A column on a cycle gets the strictest class of
    everything that reaches its cycle, the declared classes of the cycle's columns included.
    """
    # Columns are keyed by name inside: a name's hash is computed once, a ref's at every lookup.
    through = through or rules.propagate_through
    columns = {lineage.name_of(c): c for c in written_columns(lineage)}
    order = list(columns)
    written = set(order)
    classes = {str(c): cls for c, cls in declared.items()}
    proposals: dict[str, Proposal] = {}
    carries: dict[str, str | None] = {}  # a settled column's effective class
    inputs: dict[str, Inputs] = {}
    names = lineage.name_of

    def inputs_of(column: str) -> Inputs:
        known = inputs.get(column)
        if known is None:
            ref = columns[column]
            edges = [*lineage.in_edges(ref), *lineage.in_edges(ref.table)]
            known = inputs[column] = [(names(e.source), e) for e in edges if e.type in through]
        return known

    def carried(column: str) -> str | None:
        return carries[column] if column in carries else classes.get(column)

    def settle(members: list[str], cycle: bool) -> None:
        within: str | None = None  # the class a cycle's columns carry around it
        on_cycle = set(members) if cycle else set()
        if cycle:
            reaching = [classes.get(c) for c in members]
            reaching += [carried(s) for c in members for s, _ in inputs_of(c) if s not in on_cycle]
            within = _strictest(reaching, rules)
        for column in members:
            best: tuple[int, Edge] | None = None
            for source, edge in inputs_of(column):
                cls = within if source in on_cycle else carried(source)
                if cls is not None and (best is None or rules.rank(cls) > best[0]):
                    best = (rules.rank(cls), edge)
            proposed = rules.classes[best[0]] if best else None
            proposal = Proposal(columns[column], proposed, best[1] if best else None, classes.get(column))
            proposals[column] = proposal
            carries[column] = proposal.effective(rules)
        for column in members:
            inputs.pop(column, None)  # settled: its inputs are not asked for again

    if _settle_in_dependency_order(order, written, proposals, inputs_of, lambda column: settle([column], False)):
        proposals.clear()  # a cycle: settle again, component by component
        carries.clear()
        for members, cycle in _components(order, inputs_of):
            settle(members, cycle)
    return {columns[c]: proposals[c] for c in order}


def _strictest(classes: Iterable[str | None], rules: Rules) -> str | None:
    known = [c for c in classes if c is not None]
    return max(known, key=rules.rank) if known else None


def understated(proposals: Mapping[ColumnRef, Proposal], rules: Rules) -> list[Proposal]:
    """Return the proposal of every written column whose declared class is lower than lineage proposes.

    In the proposals' order.
    """
    return [
        p
        for p in proposals.values()
        if p.declared and p.proposed and p.decided_by and rules.rank(p.declared) < rules.rank(p.proposed)
    ]
