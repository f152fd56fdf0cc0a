"""Classification proposals from lineage: each written column gets the stricter of its inputs' classes
(Denning's join on the line of classes), through the edge types lineage.toml lists. Masking never lowers a
class, and a declared class is never lowered: downstream, a column carries the stricter of its declared and
proposed class. Columns on a lineage cycle (an incremental job reading its own output) form one strongly
connected component, and each gets the strictest class of everything that reaches the component."""

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
        """Returns the class the column carries downstream: the stricter of declared and proposed."""
        known = [c for c in (self.proposed, self.declared) if c is not None]
        return max(known, key=rules.rank) if known else None

    def to_dict(self) -> dict[str, object]:
        """Returns the proposal as plain data (refs as their dotted names)."""
        decided = self.decided_by
        return {"column": str(self.column), "proposed": self.proposed, "declared": self.declared,
                "decided_by": {"source": str(decided.source), "type": str(decided.type),
                               "subtype": str(decided.subtype)} if decided else None}


def written_columns(lineage: LineageGraph) -> list[ColumnRef]:
    """Returns every column of every table some job's events say it wrote, sorted by name."""
    return sorted((c for table in lineage.outputs for c in lineage.columns_of(table)), key=lineage.name_of)


def _inputs(lineage: LineageGraph, column: ColumnRef, through: tuple[str, ...]) -> list[Edge]:
    edges = [*lineage.in_edges(column), *lineage.in_edges(column.table)]
    return [e for e in edges if e.type in through]


def _dependency_order(order: list[ColumnRef], written: set[ColumnRef],
                      inputs_of: Callable[[ColumnRef], list[Edge]]) -> tuple[list[ColumnRef], bool]:
    """Returns the written columns with every written input before the columns it feeds (a depth-first
    post-order), and whether a cycle was met (then the order is not topological)."""
    done: set[ColumnRef] = set()
    found: list[ColumnRef] = []
    cyclic = False
    for column in order:
        if column in done:
            continue
        stack, on_stack = [column], {column}
        while stack:
            current = stack[-1]
            pending = None
            for edge in inputs_of(current):
                source = edge.source
                if source in written and source not in done:
                    if source in on_stack:
                        cyclic = True
                    else:
                        pending = source
                        break
            if pending is not None:
                stack.append(pending)
                on_stack.add(pending)
                continue
            stack.pop()
            on_stack.discard(current)
            done.add(current)
            found.append(current)
    return found, cyclic


def _components(written: Iterable[ColumnRef], inputs_of: Callable[[ColumnRef], list[Edge]]
                ) -> list[tuple[list[ColumnRef], bool]]:
    """Returns the strongly connected components of the written columns (through their input edges), each
    component after every component that feeds it, with whether it is a cycle (more than one column, or a
    column that reads itself)."""
    import networkx as nx

    graph = nx.DiGraph()
    columns = list(written)
    graph.add_nodes_from(columns)
    known = set(columns)
    graph.add_edges_from((e.source, c) for c in columns for e in inputs_of(c) if e.source in known)
    condensed = nx.condensation(graph)
    found = []
    for component in nx.topological_sort(condensed):
        members = list(condensed.nodes[component]["members"])
        found.append((members, len(members) > 1 or graph.has_edge(members[0], members[0])))
    return found


def propose(lineage: LineageGraph, declared: Mapping[ColumnRef, str], rules: Rules,
            through: tuple[str, ...] | None = None) -> dict[ColumnRef, Proposal]:
    """Returns a proposal for every written column (sorted by name): its inputs' strictest class and the edge
    that decided it (DIRECT edges first among equals, then by source name). Inputs that are themselves
    written carry their effective class. A column on a cycle gets the strictest class of everything that
    reaches its cycle, the declared classes of the cycle's columns included."""
    through = through or rules.propagate_through
    order = written_columns(lineage)
    written = set(order)
    proposals: dict[ColumnRef, Proposal] = {}
    inputs: dict[ColumnRef, list[Edge]] = {}

    def inputs_of(column: ColumnRef) -> list[Edge]:
        known = inputs.get(column)
        if known is None:
            known = inputs[column] = _inputs(lineage, column, through)
        return known

    def carried(column: ColumnRef) -> str | None:
        known = proposals.get(column)
        return known.effective(rules) if known else declared.get(column)

    settled, cyclic = _dependency_order(order, written, inputs_of)
    groups = _components(order, inputs_of) if cyclic else [([c], False) for c in settled]
    for members, cycle in groups:
        within: str | None = None  # the class a cycle's columns carry around it
        on_cycle = set(members) if cycle else set()
        if cycle:
            reaching = [declared.get(c) for c in members]
            reaching += [carried(e.source) for c in members for e in inputs_of(c) if e.source not in on_cycle]
            within = _strictest(reaching, rules)
        for column in members:
            best: tuple[int, Edge] | None = None
            for edge in inputs_of(column):
                cls = within if edge.source in on_cycle else carried(edge.source)
                if cls is not None and (best is None or rules.rank(cls) > best[0]):
                    best = (rules.rank(cls), edge)
            proposed = rules.classes[best[0]] if best else None
            proposals[column] = Proposal(column, proposed, best[1] if best else None, declared.get(column))
        for column in members:
            inputs.pop(column, None)  # settled: its inputs are not asked for again
    return {c: proposals[c] for c in order}


def _strictest(classes: Iterable[str | None], rules: Rules) -> str | None:
    known = [c for c in classes if c is not None]
    return max(known, key=rules.rank) if known else None


def understated(proposals: Mapping[ColumnRef, Proposal], rules: Rules) -> list[Proposal]:
    """Returns the proposal of every written column whose declared class is lower than lineage proposes, in
    the proposals' order."""
    return [p for p in proposals.values()
            if p.declared and p.proposed and p.decided_by and rules.rank(p.declared) < rules.rank(p.proposed)]

