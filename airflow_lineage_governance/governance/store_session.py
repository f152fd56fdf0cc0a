"""The governance questions answered from the lineage store.

Rules and metadata from TOML, the lineage from the store (DuckDB file or PostgreSQL), a person's declarations walked
beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from airflow_lineage_governance.governance.checks import tables_without_metadata, unaccounted, understated_classes
from airflow_lineage_governance.governance.classify import Proposal, propose
from airflow_lineage_governance.governance.config import Metadata, Rules, load_metadata, load_rules
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.governance.weights import tier_weight
from airflow_lineage_governance.graph.answers import Impact, Provenance, column_asked
from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.events import COMPLETE, DistinctEventSource, ReadReport, RunEvent
from airflow_lineage_governance.graph.records import RunRecord, Shape
from airflow_lineage_governance.kinds import EdgeSource, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store import checks, provenance
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.graph_as_of import lineage_graph, stale_jobs
from airflow_lineage_governance.store.ingest import micros
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.trace import StoredContaminated, StoredOrigin, snapshot_asked

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.diff import ObservedJob
    from airflow_lineage_governance.store.sync import SyncReport

A = TypeVar("A", Impact, Provenance)
IN_MEMORY = ":memory:"
"""The location of a DuckDB store held in memory: gone when it is closed."""


def declared_lineage(metadata: Metadata, engine: Engine) -> list[provenance.Static]:
    """Return every `[[declared]]` block of metadata.toml as lineage that holds at every time.

    A block's column edges are DIRECT; a block with no columns makes every input column (those the store's
    events or metadata.toml name) shape every output's rows (INDIRECT).

    Args:
        metadata: The metadata, with its declarations.
        engine: The store's engine, asked the columns its events name for a block's inputs.

    Returns:
        Each block's record (its owner and reason) and edges.
    """
    found = []
    for block in metadata.declarations:
        edges = [
            Edge(source, target, EdgeType.DIRECT, "UNKNOWN", False, block.job, "", "", EdgeSource.DECLARED)
            for target, sources in block.columns.items()
            for source in sources
        ]
        if not block.columns:
            for table in block.inputs:
                for column in _known_columns(metadata, engine, table):
                    edges.extend(
                        Edge(
                            column, output, EdgeType.INDIRECT, "UNKNOWN", False, block.job, "", "", EdgeSource.DECLARED
                        )
                        for output in block.outputs
                    )
        record = RunRecord(
            RunEvent(COMPLETE, "", "", "", block.job),
            Shape(edges, list(block.outputs)),
            source=EdgeSource.DECLARED,
            owner=block.owner,
            reason=block.reason,
        )
        found.append(provenance.Static(record, edges))
    return found


def _known_columns(metadata: Metadata, engine: Engine, table: TableRef) -> list[ColumnRef]:
    named = {c.field: c for c in provenance.named_columns(engine, table)}
    declared = metadata.tables.get(table)
    for name in declared.columns if declared is not None else ():
        named.setdefault(name, ColumnRef(table, name))
    return list(named.values())


@dataclass
class StoredGovernance:
    """Rules and metadata from TOML over the lineage store open at `store`."""

    rules: Rules
    metadata: Metadata
    store: LineageStore
    job_namespaces: list[str] | None = None
    read: ReadReport | None = None  # what reading an event source found, when the store was filled from one

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        rules_path: str | Path | None = None,
        metadata_path: str | Path | None = None,
        job_namespaces: Iterable[str] | None = None,
    ) -> StoredGovernance:
        """Return the governance over the store at `location`, opened read-only.

        Args:
            location: A DuckDB file or a `postgresql://` URL.
            rules_path: lineage.toml (None: the defaults).
            metadata_path: metadata.toml (None: none).
            job_namespaces: The job namespaces whose lineage is read (None: every one).

        Returns:
            The governance; close it when done.

        Raises:
            GovernanceConfigError: A TOML file is bad.
            StoreError: The store cannot be opened.
        """
        store = LineageStore.open(location, read_only=True)
        try:
            rules = load_rules(rules_path)
            metadata = load_metadata(metadata_path, rules)
        except BaseException:
            store.close()
            raise
        return cls(rules, metadata, store, list(job_namespaces) if job_namespaces is not None else None)

    @classmethod
    def from_events(
        cls,
        events: str | Path,
        *,
        rules_path: str | Path | None = None,
        metadata_path: str | Path | None = None,
        job_namespaces: Iterable[str] | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> StoredGovernance:
        """Return the governance over the events of a source, read into a lineage store in memory.

        The source's events of the job namespaces are stored by the store's ingest and answered by its queries, as a
        store on disk is; what reading left out is counted in `read` (`report` returns it).

        Args:
            events: A JSON Lines file or a Marquez URL.
            rules_path: lineage.toml (None: the defaults).
            metadata_path: metadata.toml (None: none).
            job_namespaces: The job namespaces whose events are read (None: every one).
            after: A Marquez source is read after this ISO 8601 time (None: from the earliest).
            before: A Marquez source is read before this ISO 8601 time (None: to the latest).

        Returns:
            The governance; close it when done (the store in memory goes with it).

        Raises:
            GovernanceConfigError: A TOML file is bad.
            EventSourceError: The source cannot be read.
        """
        from airflow_lineage_governance.graph.sources import open_event_source  # Marquez's client: only when asked

        rules = load_rules(rules_path)
        metadata = load_metadata(metadata_path, rules)
        options = {k: v for k, v in (("after", after), ("before", before)) if v is not None}
        source = DistinctEventSource(open_event_source(events, **options), job_namespaces)
        store = LineageStore.open(IN_MEMORY, create=True)
        try:
            store.engine.description = f"the events of {source.description}, read into a store in memory"
            store.ingest(source)
            governance = cls(rules, metadata, store, read=source.report)
            source.report.wrong_parts += governance.graph().wrong_parts
        except BaseException:
            store.close()
            raise
        return governance

    def __enter__(self) -> StoredGovernance:
        return self

    def __exit__(self, *_: object) -> None:
        self.store.close()

    def graph(self, at: datetime | None = None) -> LineageGraph:
        """Return the observed lineage graph as of `at` (None: now), read from the store."""
        return self.store.answer(
            "read the lineage graph", lambda: lineage_graph(self.store.engine, at, self.job_namespaces)
        )

    def proposals(self, at: datetime | None = None) -> dict[ColumnRef, Proposal]:
        """Return the proposal of every column written as of `at` (None: now)."""
        return propose(self.graph(at), self.metadata.declared(), self.rules)

    def stale_jobs(self, at: datetime | None = None, active_since: timedelta | None = None) -> list[str]:
        """Return the jobs whose latest COMPLETE as of `at` (None: now) is older than `active_since` before it.

        Args:
            at: The time (None: now).
            active_since: The window (None: no job is stale).

        Returns:
            The jobs' names, sorted.
        """
        if active_since is None:
            return []
        before = micros((at or datetime.now(UTC)) - active_since)
        return self.store.answer(
            "listed the stale jobs", lambda: stale_jobs(self.store.engine, at, before, self.job_namespaces)
        )

    def findings(self, catalog_tables: Iterable[TableRef | str], at: datetime | None = None) -> list[Finding]:
        """Return the lineage checks' findings as of `at`, in the report's order, as `checks.run_checks` finds them.

        Args:
            catalog_tables: The catalog's tables (refs or dotted names).
            at: The time (None: now).

        Returns:
            The understated classes, the unaccounted tables and the written tables with no metadata.
        """
        graph = self.graph(at)
        proposals = propose(graph, self.metadata.declared(), self.rules)
        return [
            *understated_classes(proposals, self.rules),
            *unaccounted(catalog_tables, self.metadata, graph),
            *tables_without_metadata(graph, self.metadata, proposals),
        ]

    def report(self) -> ReadReport:
        """Return what reading the event source found, or what the store holds of the job namespaces read.

        A store on disk reports its events of the job namespaces read, none malformed.
        """
        if self.read is not None:
            return self.read
        scope = self.job_namespaces
        where = f" WHERE j.namespace IN ({', '.join('?' * len(scope))})" if scope else ""
        rows = self.store.answer(
            "counted its events",
            lambda: self.store.engine.query(
                f"SELECT COUNT(*) FROM events e JOIN jobs j ON j.job_id = e.job_id{where}", list(scope or [])
            ),
        )
        return ReadReport(source=self.store.engine.description, events=int(rows[0][0]))

    def nightly(self, source: str, synced: SyncReport | None = None) -> StoredLineage:
        """Return the store as the nightly report reads it, after `synced` brought `source`'s events in.

        Args:
            source: The event source synced, as the report names it.
            synced: What the sync read and left out (None: the source could not be read).

        Returns:
            The graph as of now with each job's latest COMPLETE event, and the read report: the store's events of the
            job namespaces read (and of every other), and what the sync left out and found there already.
        """
        scope = self.job_namespaces

        def read() -> tuple[int, int, LineageGraph]:
            ours, others = checks.event_counts(self.store.engine, scope)
            return ours, others, lineage_graph(self.store.engine, None, scope, events=True)

        ours, others, graph = self.store.answer("read the lineage graph", read)
        report = ReadReport(source=source, events=ours, other_namespace=others, wrong_parts=graph.wrong_parts)
        if synced is not None:
            found = synced.ingest
            report.lines, report.duplicates = found.read, found.duplicates
            report.malformed, report.truncated = found.malformed, found.truncated
            report.wrong_shape, report.unknown_type = found.wrong_shape, found.unknown_type
            report.problems = list(found.problems)
        return StoredLineage(self, report, graph)

    def about(self, table: TableRef) -> tuple[str | None, int | None]:
        """Return the owner and tier metadata.toml gives the table (None for each it does not)."""
        known = self.metadata.tables.get(table)
        return (known.owner, known.tier) if known is not None else (None, None)

    def trace(self, snapshot: str, forward: bool = False) -> StoredOrigin | list[StoredContaminated]:
        """Return the origin of `namespace.table@SNAPSHOT`, or with `forward` every output snapshot that read it.

        Args:
            snapshot: The snapshot as a person writes it.
            forward: Trace forwards (every output snapshot that read it, directly or not, with owner and tier).

        Returns:
            The origin, back to the sources; or the output snapshots, nearest first.

        Raises:
            SnapshotNotInStoreError: No run read or wrote the snapshot.
        """
        table, version = snapshot_asked(snapshot)
        if not forward:
            return self.store.trace_back(table, version)
        return self.store.trace_forward(table, version, self.about)

    def observed_jobs(self, at: datetime | None = None) -> dict[str, ObservedJob]:
        """Return, by job name, the runtime lineage of each job's latest COMPLETE as of `at` (None: now)."""
        return self.store.observed_jobs(at)

    def declared_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, the lineage metadata.toml's `[[declared]]` blocks state for jobs that send no events."""
        from airflow_lineage_governance.graph.diff import observed_run  # the design's types load the SQL parser

        static = self.store.answer(
            "read the declared lineage", lambda: declared_lineage(self.metadata, self.store.engine)
        )
        return {s.record.job: observed_run(s.record) for s in static}

    def walker(self, at: datetime | None = None, active_since: timedelta | None = None) -> provenance.StoreWalker:
        """Return the store as of `at` (None: now), runs older than `active_since` before it stale."""
        static = declared_lineage(self.metadata, self.store.engine)
        return provenance.StoreWalker(
            self.store.engine, at, active_since, self.job_namespaces, static, self.rules.namespace
        )

    def impact(
        self, column: ColumnRef | str, at: datetime | None = None, active_since: timedelta | None = None
    ) -> Impact:
        """Return the downstream impact of the column as of `at`.

        Args:
            column: The column, or its dotted name as a person writes it.
            at: The time answered as of (None: now).
            active_since: Edges of runs older than this before `at` are stale.

        Returns:
            The impact, with owners, the blast-radius score and each reached column's evidence.

        Raises:
            ColumnNotInLineageError: No event or declaration names the column.
        """
        asked = column if isinstance(column, ColumnRef) else column_asked(column)
        walker = self.walker(at, active_since)
        return self.store.answer(
            "answered an impact",
            lambda: _read(
                provenance.impact(walker, asked, self.metadata.owners(), tier_weight(self.metadata, self.rules))
            ),
        )

    def provenance(
        self, column: ColumnRef | str, at: datetime | None = None, active_since: timedelta | None = None
    ) -> Provenance:
        """Return the upstream provenance of the column as of `at`.

        Args:
            column: The column, or its dotted name as a person writes it.
            at: The time answered as of (None: now).
            active_since: Edges of runs older than this before `at` are stale.

        Returns:
            The sources, each with its path and evidence.

        Raises:
            ColumnNotInLineageError: No event or declaration names the column.
        """
        asked = column if isinstance(column, ColumnRef) else column_asked(column)
        walker = self.walker(at, active_since)
        return self.store.answer("answered a provenance", lambda: _read(provenance.provenance(walker, asked)))


@dataclass
class StoredLineage:
    """The lineage store as the nightly report reads it (`NightlyLineage`), from `StoredGovernance.nightly`."""

    governance: StoredGovernance
    report: ReadReport
    graph: LineageGraph

    @property
    def rules(self) -> Rules:
        """Return the rules of lineage.toml."""
        return self.governance.rules

    @property
    def metadata(self) -> Metadata:
        """Return the metadata of metadata.toml."""
        return self.governance.metadata

    @cached_property
    def proposals(self) -> dict[ColumnRef, Proposal]:
        """Return the proposal of every column written as of now."""
        return propose(self.graph, self.metadata.declared(), self.rules)

    def run_events(self, dag_id: str, run_id: str) -> list[RunEvent]:
        """Return the task events of the DAG run `run_id` of `dag_id` of the job namespaces read, in time order."""
        scope = self.governance.job_namespaces
        events = self.governance.store.run_events(dag_id, run_id)
        return [e for e in events if not scope or e.job_namespace in scope]

    def parse_failure_runs(self, dag_id: str) -> int:
        """Return how many runs of `dag_id`'s jobs (every job's for "") have a FAIL event carrying `extractionError`."""
        store, scope = self.governance.store, self.governance.job_namespaces
        return store.answer(
            "counted the parse failures", lambda: checks.parse_failure_runs(store.engine, dag_id, scope)
        )

    def late_events(self) -> int:
        """Return how many events were stored after an event of the same run with a later event time."""
        store, scope = self.governance.store, self.governance.job_namespaces
        return store.answer("counted the late events", lambda: checks.late_events(store.engine, scope))

    def observed_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, each job's latest COMPLETE in the store as the design diff compares it."""
        return self.governance.store.observed_jobs()

    def declared_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, the lineage metadata.toml's `[[declared]]` blocks state."""
        return self.governance.declared_jobs()


def _read(answer: A) -> A:
    """Return the answer with the evidence of every column it reached read from the store now.

    The evidence is read lazily otherwise, and the store is closed after.
    """
    for column in answer.reached:
        answer.reached[column]  # noqa: B018 -- made and kept by the mapping
    return answer
