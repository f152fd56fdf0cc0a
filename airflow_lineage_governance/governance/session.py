"""Everything a governance question needs, loaded once: rules, metadata, events and the graph they describe."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.governance.classify import Proposal, propose
from airflow_lineage_governance.governance.config import Metadata, Rules, load_metadata, load_rules
from airflow_lineage_governance.governance.integrity import late_events, parse_failure_runs
from airflow_lineage_governance.governance.runs import events_of_run
from airflow_lineage_governance.governance.weights import tier_weight
from airflow_lineage_governance.graph.asof import AsOf, stale_jobs
from airflow_lineage_governance.graph.build import Edge, LineageGraph, build_graph
from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import (
    ReadReport,
    RunEvent,
    keep_for_the_process,
    paused_collection,
    read_events,
)
from airflow_lineage_governance.graph.history import LineageHistory, graph_as_of
from airflow_lineage_governance.graph.impact import Impact, Provenance, column_asked, downstream, upstream
from airflow_lineage_governance.graph.sources import open_event_source
from airflow_lineage_governance.graph.store import HistoryStore
from airflow_lineage_governance.graph.trace import Contaminated, Origin, snapshot_asked, trace_back, trace_forward
from airflow_lineage_governance.kinds import EdgeSource, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.diff import ObservedJob


@dataclass
class Governance:
    """Rules and metadata from TOML, and the events of one source with the graph they describe."""

    rules: Rules
    metadata: Metadata
    events: list[RunEvent]
    report: ReadReport
    graph: LineageGraph
    history: LineageHistory = field(default_factory=LineageHistory)

    @classmethod
    def load(
        cls,
        events: str | Path,
        *,
        rules_path: str | Path | None = None,
        metadata_path: str | Path | None = None,
        job_namespaces: str | Iterable[str] | None = None,
        job_namespace: str | None = None,
        after: str | None = None,
        before: str | None = None,
        store: str | Path | None = None,
    ) -> Governance:
        """Return the loaded governance over the events of our job namespaces.

        `job_namespaces` is one or several; None reads every namespace. A Marquez source is read between `after` and
        `before` (ISO 8601; the widest window when not given). Every COMPLETE is kept in `history`; `graph` is the graph
        as of now. With `store` (a folder) and a Marquez source, the events stored there are read and only the backend's
        events after the store's watermark are asked for (`after` is then the watermark), and the new ones are stored.
        Raises GovernanceConfigError for bad TOML and EventSourceError for an unreadable source.
        """
        rules = load_rules(rules_path)
        metadata = load_metadata(metadata_path, rules)
        scope = job_namespaces if job_namespaces is not None else job_namespace
        kept = (
            HistoryStore.open(store) if store is not None and str(events).startswith(("http://", "https://")) else None
        )
        after = (kept.since() or after) if kept is not None else after
        options = {k: v for k, v in (("after", after), ("before", before)) if v is not None}
        source = open_event_source(events, **options)
        history = LineageHistory(rules.namespace)
        with paused_collection():
            received, report = read_events(
                kept.source(source) if kept is not None else source, scope, on_complete=history.add
            )
            declare(history, metadata)
            graph = graph_as_of(history)
            report.wrong_parts += graph.wrong_parts
            governance = cls(rules, metadata, received, report, graph, history)
            governance.proposals  # noqa: B018 -- computed here, while the collector is paused
        keep_for_the_process()
        if kept is not None:
            kept.save()
        return governance

    @classmethod
    def load_tolerant(cls, events: str | Path | None, **options: Any) -> tuple[Governance, str | None]:
        """Return the governance and None, or the governance over no events and the sentence saying why.

        The second when the event source cannot be read (or none is given); TOML errors still raise.
        """
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
        history = declare(LineageHistory(rules.namespace), metadata)
        return cls(rules, metadata, [], report, build_graph([], rules.namespace), history), problem

    @cached_property
    def proposals(self) -> dict[ColumnRef, Proposal]:
        """Return the proposal of every written column, through the rules' edge types."""
        return propose(self.graph, self.metadata.declared(), self.rules)

    def view(self, at: datetime | None = None, active_since: timedelta | None = None) -> AsOf | LineageGraph:
        """Return what walks read.

        The history as of `at` (None: now; observed, declared and designed edges, those of runs older than
        `active_since` before it stale), or the graph when there is no history.
        """
        if not self.history.runs and not self.history.static:
            return self.graph
        return AsOf(self.history, at, active_since)

    def trace(self, snapshot: str, forward: bool = False) -> Origin | list[Contaminated]:
        """Return the origin of `namespace.table@SNAPSHOT`, or with `forward` every output snapshot that read it.

        The origin goes backwards to the sources; forwards, every output snapshot that read it, directly or not, with
        owner and tier. Raises SnapshotNotInLineageError.
        """
        table, version = snapshot_asked(snapshot)
        if not forward:
            return trace_back(self.history, table, version)

        def about(table: TableRef) -> tuple[str | None, int | None]:
            known = self.metadata.tables.get(table)
            return (known.owner, known.tier) if known is not None else (None, None)

        return trace_forward(self.history, table, version, about)

    def run_events(self, dag_id: str, run_id: str) -> list[RunEvent]:
        """Return the task events of the DAG run `run_id` of `dag_id` (matched on the `airflow` run facet)."""
        return events_of_run(self.events, dag_id, run_id)

    def parse_failure_runs(self, dag_id: str) -> int:
        """Return how many runs of `dag_id`'s jobs (every job's for "") have a FAIL event carrying `extractionError`."""
        return parse_failure_runs(self.events, dag_id)

    def late_events(self) -> int:
        """Return how many events were read after an event of the same run with a later event time."""
        return late_events(self.events)

    def observed_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, each job's latest COMPLETE in the history as the design diff compares it."""
        from airflow_lineage_governance.graph.diff import observed_jobs

        return observed_jobs(self.history)

    def declared_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, the lineage metadata.toml's `[[declared]]` blocks state."""
        from airflow_lineage_governance.graph.diff import declared_jobs

        return declared_jobs(self.history)

    def as_of(self, at: datetime | None) -> Governance:
        """Return the governance whose graph (and so proposals and checks) is the graph as of `at`.

        None: this one, as of now.
        """
        if at is None:
            return self
        return replace(self, graph=graph_as_of(self.history, at))

    def stale_jobs(self, at: datetime | None = None, active_since: timedelta | None = None) -> list[str]:
        """Return the jobs whose latest run as of `at` is older than `active_since` before it, sorted."""
        return stale_jobs(self.history, at, active_since)

    def impact(
        self, column: ColumnRef | str, at: datetime | None = None, active_since: timedelta | None = None
    ) -> Impact:
        """Return the downstream impact of the column as of `at` (None: now).

        The column is a ref, or its dotted name as a person writes it. The impact holds owners, the blast-radius score
        and each reached column's evidence. Raises ColumnNotInLineageError.
        """
        return downstream(
            self.view(at, active_since), _column(column), self.metadata.owners(), tier_weight(self.metadata, self.rules)
        )

    def provenance(
        self, column: ColumnRef | str, at: datetime | None = None, active_since: timedelta | None = None
    ) -> Provenance:
        """Return the upstream provenance of the column (a ref or its dotted name) as of `at` (None: now).

        Raises ColumnNotInLineageError.
        """
        return upstream(self.view(at, active_since), _column(column))


def _column(column: ColumnRef | str) -> ColumnRef:
    return column if isinstance(column, ColumnRef) else column_asked(column)


def declare(history: LineageHistory, metadata: Metadata) -> LineageHistory:
    """Return the history with every `[[declared]]` block of metadata.toml added as declared lineage.

    Its column edges (DIRECT), or, for a block with no columns, every input column shaping every output's rows
    (INDIRECT); the input's columns are those the events or metadata.toml name.
    """
    for block in metadata.declarations:
        edges = [
            Edge(source, target, EdgeType.DIRECT, "UNKNOWN", False, block.job, "", "", EdgeSource.DECLARED)
            for target, sources in block.columns.items()
            for source in sources
        ]
        if not block.columns:
            for table in block.inputs:
                for column in _known_columns(history, metadata, table):
                    edges.extend(
                        Edge(
                            column, output, EdgeType.INDIRECT, "UNKNOWN", False, block.job, "", "", EdgeSource.DECLARED
                        )
                        for output in block.outputs
                    )
        history.add_static(
            block.job, edges, EdgeSource.DECLARED, owner=block.owner, reason=block.reason, outputs=block.outputs
        )
    return history


def _known_columns(history: LineageHistory, metadata: Metadata, table: TableRef) -> list[ColumnRef]:
    named = dict(history.columns.get(table, {}))
    declared = metadata.tables.get(table)
    for name in declared.columns if declared is not None else ():
        named.setdefault(name, ColumnRef(table, name))
    return list(named.values())
