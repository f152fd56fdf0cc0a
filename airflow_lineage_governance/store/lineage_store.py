"""`LineageStore`.

A store opened on one of its engines, its schema checked (an older one upgraded in place, a newer one refused), with
ingest, the queries, statistics and vacuuming.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from airflow_lineage_governance.graph.events import EventSource, RunEvent
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store import checks, governance_runs, queries, trace
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.errors import (
    StoreMissingError,
    StoreUnavailableError,
    StoreVersionError,
)
from airflow_lineage_governance.store.governance_runs import GovernanceRun, StoredFinding, SubjectFinding
from airflow_lineage_governance.store.ingest import BATCH, IngestReport, ingest, micros
from airflow_lineage_governance.store.migrations import migrate, refuse_newer, store_version
from airflow_lineage_governance.store.schema import SCHEMA_VERSION, tables_of

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.diff import ObservedJob

T = TypeVar("T")


class LineageStore:
    """The lineage history in a database.

    A failure of the database while it answers or writes (a lost connection, a full disk) is raised as
    StoreUnavailableError, one sentence naming the store and the driver's error class.
    """

    def __init__(self, engine: Engine, version: int) -> None:
        self.engine, self.version = engine, version

    @classmethod
    def open(cls, location: str | Path, *, create: bool = False, read_only: bool = False) -> LineageStore:
        """Open the store at `location`, upgrading an older schema in place.

        Args:
            location: A `postgresql://` URL or the path of a DuckDB file.
            create: Create the store when the database holds none.
            read_only: Open a DuckDB file for reading only (an older schema is then refused, not upgraded).

        Returns:
            The open store, at the provider's schema version.

        Raises:
            StoreMissingError: The location holds no store (and `create` is false, or `read_only`).
            StoreError: The database cannot be opened.
            StoreVersionError: The store's schema is newer than this provider knows.
        """
        engine = open_engine(location, read_only=read_only, create=create)
        try:
            found = store_version(engine)
            if found is None:
                if not create or read_only:
                    raise StoreMissingError(engine.description)
                return cls(engine, migrate(engine))
            refuse_newer(engine, *found)
            if found[0] < SCHEMA_VERSION:
                if read_only:
                    raise StoreVersionError(
                        f"{engine.description}: the lineage store has schema version {found[0]}, "
                        f"older than version {SCHEMA_VERSION}; open it for writing once (e.g. "
                        "`lineage-governance store init`) to upgrade it"
                    )
                return cls(engine, migrate(engine))
            return cls(engine, found[0])
        except engine.errors as error:  # e.g. a DuckDB reader's memory limit too small to read the catalog
            engine.close()
            raise _unavailable(engine, "opened", error) from None
        except BaseException:
            engine.close()
            raise

    def __enter__(self) -> LineageStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _answering(self, what: str) -> Iterator[None]:
        try:
            yield
        except self.engine.errors as error:
            raise _unavailable(self.engine, what, error) from None

    def _call(self, what: str, work: Callable[[], T]) -> T:
        with self._answering(what):
            try:
                return work()
            except self.engine.errors as error:  # once more when the memory the database kept may be what was missing
                if not (self.engine.out_of_memory(error) and self.engine.release_memory()):
                    raise
            return work()

    def answer(self, what: str, work: Callable[[], T]) -> T:
        """Return what `work` answers from the store; a failure of the database is StoreUnavailableError.

        Args:
            what: What the store did, as the error's sentence names it ("answered an impact").
            work: Asks the store's engine and returns the answer.

        Returns:
            The answer.

        Raises:
            StoreUnavailableError: The database failed while it answered.
        """
        return self._call(what, work)

    def ingest(self, source: EventSource, *, batch_size: int = BATCH) -> IngestReport:
        """Add every event of `source` not in the store yet (`ingest.ingest`)."""
        return self._call("stored events", lambda: ingest(self.engine, source, batch_size=batch_size))

    def impact(self, column: ColumnRef, at: datetime | None = None) -> queries.StoreImpact:
        """Return what a change to the column reaches as of `at` (None: now); raise ColumnNotInStoreError."""
        instant = micros(at) if at is not None else None
        return self._call("answered an impact", lambda: queries.impact(self.engine, column, instant))

    def edges_as_of(self, at: datetime | None = None, into: TableRef | None = None) -> list[queries.StoredEdge]:
        """Return every edge that held as of `at` (None: now), or every one into the table `into`."""
        instant = micros(at) if at is not None else None
        return self._call("listed edges", lambda: queries.edges_as_of(self.engine, instant, into))

    def trace_back(self, table: TableRef, snapshot: str) -> trace.StoredOrigin:
        """Return the origin of the snapshot, to the sources (`trace.trace_back`); raise SnapshotNotInStoreError."""
        return self._call("traced a snapshot", lambda: trace.trace_back(self.engine, table, snapshot))

    def trace_forward(
        self, table: TableRef, snapshot: str, about: Callable[[TableRef], tuple[str | None, int | None]] | None = None
    ) -> list[trace.StoredContaminated]:
        """Return every output snapshot that read the snapshot, directly or not (`trace.trace_forward`).

        Raises SnapshotNotInStoreError.
        """
        return self._call("traced a snapshot", lambda: trace.trace_forward(self.engine, table, snapshot, about))

    def latest_snapshot(self, table: TableRef) -> str | None:
        """Return the snapshot of `table` its latest writing COMPLETE wrote, or None (`trace.latest_snapshot`)."""
        return self._call("read a table's latest snapshot", lambda: trace.latest_snapshot(self.engine, table))

    def observed_jobs(self, at: datetime | None = None) -> dict[str, ObservedJob]:
        """Return, by job name, the runtime lineage of each job's latest COMPLETE as of `at` (`diff.observed_jobs`)."""
        from airflow_lineage_governance.store import diff  # the design's types load the SQL parser: only when asked

        instant = micros(at) if at is not None else None
        return self._call("read the jobs' runtime lineage", lambda: diff.observed_jobs(self.engine, instant))

    def written_tables(self, at: datetime | None = None) -> dict[TableRef, str]:
        """Return each table a job's run as of `at` wrote, with the first such job by name."""
        instant = micros(at) if at is not None else None
        return self._call("listed the tables written", lambda: checks.written_tables(self.engine, instant))

    def run_events(self, dag_id: str, run_id: str) -> list[RunEvent]:
        """Return the task events of one DAG run, in time order (`checks.run_events`)."""
        return self._call("read a DAG run's events", lambda: checks.run_events(self.engine, dag_id, run_id))

    def record_governance_run(self, run: GovernanceRun, findings: Sequence[StoredFinding]) -> None:
        """Record a governance run and its findings, in place of what the store held of the same DAG and run id.

        Args:
            run: The governance run.
            findings: Its findings, in the report's order.

        Raises:
            StoreUnavailableError: The database failed while it wrote them.
        """
        self._call("recorded a governance run", lambda: governance_runs.record(self.engine, run, findings))

    def governance_runs(self, dag_id: str | None = None, limit: int = 50) -> list[GovernanceRun]:
        """Return the governance runs kept (of `dag_id`, else of every DAG), the latest logical date first."""
        return self._call("listed governance runs", lambda: governance_runs.runs(self.engine, dag_id, limit))

    def latest_governance_run(self, dag_id: str | None = None) -> GovernanceRun | None:
        """Return the governance run of the latest logical date (of `dag_id`, else of any DAG), or None."""
        found = self.governance_runs(dag_id, limit=1)
        return found[0] if found else None

    def governance_run(self, dag_id: str, run_id: str) -> GovernanceRun | None:
        """Return the governance run `run_id` of `dag_id`, or None when the store keeps none."""
        return self._call("read a governance run", lambda: governance_runs.run(self.engine, dag_id, run_id))

    def governance_findings(self, dag_id: str, run_id: str) -> list[StoredFinding]:
        """Return the findings of the governance run `run_id` of `dag_id`, in the report's order."""
        return self._call(
            "read a governance run's findings", lambda: governance_runs.findings(self.engine, dag_id, run_id)
        )

    def subject_history(self, subject: str, limit: int = 100) -> list[SubjectFinding]:
        """Return the findings about `subject` (a column, table, job, `<dag>/<run>` or source), latest run first."""
        return self._call(
            "read the findings of a subject", lambda: governance_runs.subject_history(self.engine, subject, limit)
        )

    def stats(self) -> dict[str, Any]:
        """Return the store's location, schema version, size on disk and the rows of each table."""
        with self._answering("counted its rows"):
            counts = {
                table: int(self.engine.query(f"SELECT count(*) FROM {table}")[0][0])
                for table in tables_of(self.engine.dialect)
            }
            size = self.engine.size_bytes()
        return {
            "store": self.engine.description,
            "engine": self.engine.dialect,
            "schema_version": self.version,
            "size_bytes": size,
            "rows": counts,
        }

    def vacuum(self) -> None:
        """Gives back the space of deleted rows and refreshes the planner's statistics."""
        self._call("was vacuumed", self.engine.vacuum)

    def close(self) -> None:
        """Close the store's connection."""
        self.engine.close()


_MEMORY_LIMITS = {
    "store_memory_limit": "DuckDB's memory_limit for a reader",
    "store_writer_memory_limit": "DuckDB's memory_limit for a writer; unset, 80% of the machine's memory",
}
"""What each memory setting is, as the out-of-memory sentence names it."""


def _unavailable(engine: Engine, what: str, error: BaseException) -> StoreUnavailableError:
    """Return the one sentence of a database's failure while the store did `what` ("answered an impact")."""
    setting = engine.memory_limit_setting
    if setting is not None and engine.out_of_memory(error):  # under a DuckDB reader's or writer's memory_limit
        return StoreUnavailableError(
            f"{engine.description}: the lineage store ran out of memory while it {what}; raise the {setting} setting "
            f"of [lineage_governance] ({_MEMORY_LIMITS[setting]}) and try again"
        )
    return StoreUnavailableError(
        f"{engine.description}: the lineage store failed while it {what} ({type(error).__name__}); check that its "
        "database is reachable and has space, then try again"
    )
