"""What the nightly report reads of the lineage received, from the lineage store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from airflow_lineage_governance.governance.classify import Proposal
    from airflow_lineage_governance.governance.config import Metadata, Rules
    from airflow_lineage_governance.graph.build import LineageGraph
    from airflow_lineage_governance.graph.diff import ObservedJob
    from airflow_lineage_governance.graph.events import ReadReport, RunEvent
    from airflow_lineage_governance.refs import ColumnRef


class NightlyLineage(Protocol):
    """The rules, metadata and received lineage the checks and the report's coverage read.

    `StoredLineage` (the lineage store) gives it.
    """

    @property
    def rules(self) -> Rules:
        """Return the rules of lineage.toml."""
        ...

    @property
    def metadata(self) -> Metadata:
        """Return the metadata of metadata.toml."""
        ...

    @property
    def report(self) -> ReadReport:
        """Return what reading the events found: its source, the events, those left out and why."""
        ...

    @property
    def graph(self) -> LineageGraph:
        """Return the observed lineage graph as of now, each job's latest COMPLETE event in `graph.jobs`."""
        ...

    @property
    def proposals(self) -> Mapping[ColumnRef, Proposal]:
        """Return the proposal of every written column."""
        ...

    def run_events(self, dag_id: str, run_id: str) -> list[RunEvent]:
        """Return the task events of the DAG run `run_id` of `dag_id`."""
        ...

    def parse_failure_runs(self, dag_id: str) -> int:
        """Return how many runs of `dag_id`'s jobs (every job's for "") have a FAIL event carrying `extractionError`."""
        ...

    def late_events(self) -> int:
        """Return how many events arrived after an event of the same run with a later event time."""
        ...

    def observed_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, each job's latest COMPLETE as the design diff compares it."""
        ...

    def declared_jobs(self) -> dict[str, ObservedJob]:
        """Return, by job name, the lineage metadata.toml's `[[declared]]` blocks state."""
        ...
