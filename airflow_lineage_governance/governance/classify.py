"""Classification proposals from lineage: each written column gets the stricter of its inputs' classes
(Denning's join on the line of classes), through the edge types lineage.toml lists. Masking never lowers a
class, and a declared class is never lowered: downstream, a column carries the stricter of its declared and
proposed class."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from airflow_lineage_governance.governance.config import Rules
from airflow_lineage_governance.graph.build import Edge, LineageGraph


@dataclass(frozen=True)
class Proposal:
    """What lineage proposes for one written column."""

    column: str
    proposed: str | None
    decided_by: Edge | None
    declared: str | None

    def effective(self, rules: Rules) -> str | None:
        """Returns the class the column carries downstream: the stricter of declared and proposed."""
        known = [c for c in (self.proposed, self.declared) if c is not None]
        return max(known, key=rules.rank) if known else None

    def to_dict(self) -> dict[str, object]:
        """Returns the proposal as plain data."""
        decided = self.decided_by
        return {"column": self.column, "proposed": self.proposed, "declared": self.declared,
                "decided_by": {"source": decided.source, "type": decided.type, "subtype": decided.subtype}
                if decided else None}


def written_columns(lineage: LineageGraph) -> list[str]:
    """Returns every column of every table some job's events say it wrote, sorted."""
    return sorted(c for table in lineage.outputs for c in lineage.columns_of(table))


def _inputs(lineage: LineageGraph, column: str, through: tuple[str, ...]) -> list[Edge]:
    table = column.rsplit(".", 1)[0]
    edges = [*lineage.in_edges(column), *lineage.in_edges(table)]
    return [e for e in edges if e.type in through]


def propose(lineage: LineageGraph, declared: Mapping[str, str], rules: Rules,
            through: tuple[str, ...] | None = None) -> dict[str, Proposal]:
    """Returns a proposal for every written column: its inputs' strictest class and the edge that decided
    it (DIRECT edges first among equals, then by source name). Inputs that are themselves written carry
    their effective class; cycles are cut where they close."""
    through = through or rules.propagate_through
    written = set(written_columns(lineage))
    proposals: dict[str, Proposal] = {}
    inputs: dict[str, list[Edge]] = {}

    def inputs_of(column: str) -> list[Edge]:
        known = inputs.get(column)
        if known is None:
            known = inputs[column] = _inputs(lineage, column, through)
        return known

    def carried(column: str) -> str | None:
        if column in written:
            known = proposals.get(column)
            return known.effective(rules) if known else declared.get(column)
        return declared.get(column)

    for column in sorted(written):
        stack, on_stack = [column], {column}
        while stack:
            current = stack[-1]
            pending = [e.source for e in inputs_of(current)
                       if e.source in written and e.source not in proposals and e.source not in on_stack]
            if pending:
                stack.append(pending[0])
                on_stack.add(pending[0])
                continue
            stack.pop()
            on_stack.discard(current)
            if current in proposals:
                continue
            best: tuple[int, Edge] | None = None
            for edge in inputs_of(current):
                cls = carried(edge.source)
                if cls is not None and (best is None or rules.rank(cls) > best[0]):
                    best = (rules.rank(cls), edge)
            proposed = rules.classes[best[0]] if best else None
            proposals[current] = Proposal(current, proposed, best[1] if best else None, declared.get(current))
            inputs.pop(current, None)  # settled: its inputs are not asked for again
    return {c: proposals[c] for c in sorted(written)}


@dataclass(frozen=True)
class Understated:
    """A declared class lower than lineage proposes."""

    column: str
    declared: str
    proposed: str
    decided_by: Edge

    def to_dict(self) -> dict[str, object]:
        """Returns the finding as the report's JSON shows it."""
        return {"kind": "understated_classification", "column": self.column, "declared": self.declared,
                "proposed": self.proposed, "decided_by": {"source": self.decided_by.source,
                                                          "type": self.decided_by.type,
                                                          "subtype": self.decided_by.subtype}}


def understated(proposals: Mapping[str, Proposal], rules: Rules) -> list[Understated]:
    """Returns every written column whose declared class is lower than lineage proposes, sorted."""
    return [Understated(p.column, p.declared, p.proposed, p.decided_by) for p in proposals.values()
            if p.declared and p.proposed and p.decided_by and rules.rank(p.declared) < rules.rank(p.proposed)]
