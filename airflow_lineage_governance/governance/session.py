"""Everything a governance question needs, loaded once: rules, metadata, events and the graph they describe."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from airflow_lineage_governance.governance.checks import tier_weight
from airflow_lineage_governance.governance.classify import Proposal, propose
from airflow_lineage_governance.governance.config import Metadata, Rules, load_metadata, load_rules
from airflow_lineage_governance.graph.build import LineageGraph, build_graph
from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import (
    ReadReport,
    RunEvent,
    open_event_source,
    paused_collection,
    read_events,
)
from airflow_lineage_governance.graph.impact import Impact, Provenance, column_asked, downstream, upstream
from airflow_lineage_governance.refs import ColumnRef


@dataclass
class Governance:
    """Rules and metadata from TOML, and the events of one source with the graph they describe."""

    rules: Rules
    metadata: Metadata
    events: list[RunEvent]
    report: ReadReport
    graph: LineageGraph

    @classmethod
    def load(cls, events: str | Path, *, rules_path: str | Path | None = None,
             metadata_path: str | Path | None = None, job_namespaces: str | Iterable[str] | None = None,
             job_namespace: str | None = None, after: str | None = None, before: str | None = None) -> Governance:
        """Returns the loaded governance over the events of our job namespaces (`job_namespaces`, one or several;
        None reads every namespace), between `after` and `before` for a Marquez source (ISO 8601; the widest
        window when not given). Raises GovernanceConfigError for bad TOML and EventSourceError for an unreadable
        source."""
        rules = load_rules(rules_path)
        metadata = load_metadata(metadata_path, rules)
        scope = job_namespaces if job_namespaces is not None else job_namespace
        options = {k: v for k, v in (("after", after), ("before", before)) if v is not None}
        with paused_collection():
            received, report = read_events(open_event_source(events, **options), scope)
            graph = build_graph(received, rules.namespace)
            report.wrong_parts += graph.wrong_parts
            governance = cls(rules, metadata, received, report, graph)
            governance.proposals  # noqa: B018 -- computed here, while the collector is paused
        return governance

    @classmethod
    def load_tolerant(cls, events: str | Path | None, **options: Any) -> tuple[Governance, str | None]:
        """Returns the governance and None, or, when the event source cannot be read (or none is given),
        the governance over no events and the sentence saying why; TOML errors still raise."""
        if events is not None:
            try:
                return cls.load(events, **options), None
            except EventSourceError as error:
                problem = str(error)
        else:
            problem = "no event source is configured"
        rules = load_rules(options.get("rules_path"))
        metadata = load_metadata(options.get("metadata_path"), rules)
        report = ReadReport(source=str(events))
        return cls(rules, metadata, [], report, build_graph([], rules.namespace)), problem

    @cached_property
    def proposals(self) -> dict[ColumnRef, Proposal]:
        """Returns the proposal of every written column, through the rules' edge types."""
        return propose(self.graph, self.metadata.declared(), self.rules)

    def impact(self, column: ColumnRef | str) -> Impact:
        """Returns the downstream impact of the column (a ref, or its dotted name as a person writes it), with
        owners and the blast-radius score; raises ColumnNotInLineageError."""
        return downstream(self.graph, _column(column), self.metadata.owners(), tier_weight(self.metadata, self.rules))

    def provenance(self, column: ColumnRef | str) -> Provenance:
        """Returns the upstream provenance of the column (a ref or its dotted name); raises
        ColumnNotInLineageError."""
        return upstream(self.graph, _column(column))


def _column(column: ColumnRef | str) -> ColumnRef:
    return column if isinstance(column, ColumnRef) else column_asked(column)
