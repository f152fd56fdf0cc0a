"""Design against runtime: where the SQL in the DAG files and the lineage events disagree.

Runtime is, per job, its latest COMPLETE event at or before a time, as the lineage store reads it
(`store/diff.py` `observed_jobs`). `design_diff` compares it
with the design (`graph/design.py`) job by job and table by table:

- designed, not observed: an edge the deployed SQL gives that the job's latest run did not report (or the job
  never ran as of the time: a branch not taken, or a collection gap); a table the design reads or writes that no
  run touched;
- observed, not designed: an edge a run reported that the deployed SQL does not give (drift, a manual run, SQL
  run from elsewhere); a table runs touched that no design names;
- SQL hash mismatches: the run's `sql` job facet is not the deployed SQL (`lineage/fingerprint.py`).

A task whose design could not be read is left out of the comparison (listed as not compared); the DagBag's other
tasks (not IcebergSqlOperator) have no design, so what they report is observed, not designed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow_lineage_governance.graph.design import Design, DesignedTask, LineEdge, TableEdge, short, sorted_edges
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.kinds import EdgeSource
from airflow_lineage_governance.refs import TableRef

OBSERVED = str(EdgeSource.OBSERVED)
DESIGNED_NOT_OBSERVED = "designed_not_observed"
OBSERVED_NOT_DESIGNED = "observed_not_designed"
DECLARED_NOT_DESIGNED = "declared_not_designed"


@dataclass(frozen=True)
class ObservedJob:
    """One job's runtime lineage.

    Its latest COMPLETE at or before the time asked (or its declared lineage), with the evidence.
    """

    job: str
    run_id: str
    event_time: str
    dag_run_id: str | None
    try_number: int | None
    edges: frozenset[LineEdge]
    dataset_edges: frozenset[TableEdge]
    tables: frozenset[TableRef]
    sql_hash: str | None
    source: str = OBSERVED
    note: str | None = None  # for declared lineage: who declared it and why

    def evidence(self) -> dict[str, Any]:
        """Return the run that says so: job, run id, DAG run, try, event time, SQL hash, source."""
        return {
            "job": self.job,
            "run_id": self.run_id,
            "dag_run_id": self.dag_run_id,
            "try": self.try_number,
            "event_time": self.event_time,
            "sql_hash": self.sql_hash,
            "source": self.source,
        }


def observed_run(record: RunRecord) -> ObservedJob:
    """Return the runtime lineage one run record of the history states.

    Its column edges, its input and output tables, the dataset edges between them and its SQL hash.
    """
    event, shape = record.event, record.shape
    inputs = [table for table, _ in record.inputs]
    outputs = [table for table, _ in record.outputs] or list(shape.outputs)
    note = None
    if record.source is not EdgeSource.OBSERVED:  # a static record names its outputs; its inputs are its edges'
        inputs = sorted({e.source.table for e in shape.edges} - set(outputs), key=str)
        note = f"declared by {record.owner or 'no owner'}: {record.reason or 'no reason given'}"
    edges = frozenset(LineEdge(e.source, e.target, e.type, e.subtype) for e in shape.edges)
    return ObservedJob(
        record.job,
        event.run_id,
        event.event_time,
        event.dag_run_id,
        event.try_number,
        edges,
        frozenset(TableEdge(i, o) for i in inputs for o in outputs),
        frozenset((*inputs, *outputs)),
        record.sql_hash,
        str(record.source),
        note,
    )


@dataclass(frozen=True)
class JobDifference:
    """The edges of one job on one side only, and why they may be."""

    kind: str
    job: str
    reason: str
    column_edges: tuple[LineEdge, ...] = ()
    dataset_edges: tuple[TableEdge, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the difference as the JSON output shows it."""
        return {
            "kind": self.kind,
            "job": self.job,
            "reason": self.reason,
            "dataset_edges": [e.to_dict() for e in self.dataset_edges],
            "column_edges": [e.to_dict() for e in self.column_edges],
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True)
class TableDifference:
    """A table on one side only: designed and touched by no run, or touched by runs and in no design."""

    kind: str
    table: TableRef
    jobs: tuple[str, ...]

    @property
    def reason(self) -> str:
        """Return why the table is listed, naming the jobs of the side it is on."""
        jobs = ", ".join(self.jobs)
        if self.kind == DESIGNED_NOT_OBSERVED:
            return f"designed in {jobs}, but no run observed reads or writes it"
        return f"read or written by {jobs}, but no designed task reads or writes it"

    def to_dict(self) -> dict[str, Any]:
        """Return the difference as the JSON output shows it."""
        return {"kind": self.kind, "table": str(self.table), "jobs": list(self.jobs), "reason": self.reason}


@dataclass(frozen=True)
class SqlMismatch:
    """A job whose latest run ran other SQL than the deployed SQL."""

    job: str
    designed: str | None
    observed: str | None
    run_id: str
    event_time: str

    def to_dict(self) -> dict[str, Any]:
        """Return the mismatch as the JSON output shows it."""
        return {
            "job": self.job,
            "designed_sql_hash": self.designed,
            "observed_sql_hash": self.observed,
            "run_id": self.run_id,
            "event_time": self.event_time,
        }

    def sentence(self) -> str:
        """Return the mismatch as one sentence."""
        return (
            f"{self.job}: the deployed SQL is {short(self.designed)}, but run {self.run_id} "
            f"({self.event_time}) ran {short(self.observed)}"
        )


@dataclass
class DesignDiff:
    """Every difference between a design and the runtime as of a time."""

    as_of: str
    jobs: list[JobDifference] = field(default_factory=list)
    tables: list[TableDifference] = field(default_factory=list)
    sql_mismatches: list[SqlMismatch] = field(default_factory=list)
    declared: list[JobDifference] = field(default_factory=list)  # declared lineage outside the design: not counted
    not_compared: dict[str, str] = field(default_factory=dict)  # job -> why its design could not be read
    compared: list[str] = field(default_factory=list)  # the designed jobs compared

    @property
    def count(self) -> int:
        """Return the number of differences (each job side, table and SQL mismatch counts once)."""
        return len(self.jobs) + len(self.tables) + len(self.sql_mismatches)

    def of_kind(self, kind: str) -> list[JobDifference]:
        """Return the job differences of `kind` (designed_not_observed or observed_not_designed)."""
        return [d for d in self.jobs if d.kind == kind]

    def tables_of_kind(self, kind: str) -> list[TableDifference]:
        """Return the table differences of `kind`."""
        return [d for d in self.tables if d.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """Return the diff as the JSON output shows it."""
        return {
            "as_of": self.as_of,
            "differences": self.count,
            "compared": self.compared,
            "sql_hash_mismatches": [m.to_dict() for m in self.sql_mismatches],
            **{
                kind: {
                    "jobs": [d.to_dict() for d in self.of_kind(kind)],
                    "tables": [t.to_dict() for t in self.tables_of_kind(kind)],
                }
                for kind in (DESIGNED_NOT_OBSERVED, OBSERVED_NOT_DESIGNED)
            },
            DECLARED_NOT_DESIGNED: [d.to_dict() for d in self.declared],
            "not_compared": dict(sorted(self.not_compared.items())),
        }


def in_dags(job: str, dag_ids: Collection[str] | None) -> bool:
    """Return True when `dag_ids` is None or the job is of one of them.

    The job is `dag_id.task_id`, or a DAG's own job `dag_id`.
    """
    return dag_ids is None or job in dag_ids or any(job.startswith(f"{dag}.") for dag in dag_ids)


def _unobserved_reason(job: str, seen: ObservedJob | None, mismatch: bool, as_of: str) -> str:
    if seen is None:
        return f"no COMPLETE event of {job} as of {as_of}: a branch not taken, or a collection gap"
    if mismatch:
        return f"run {seen.run_id} ran other SQL than the deployed SQL"
    return f"run {seen.run_id} ran the deployed SQL but did not report it: a collection gap, or the schema changed"


def _undesigned_reason(job: str, design: Design, seen: ObservedJob, mismatch: bool) -> str:
    if job in design.tasks:
        if mismatch:
            return f"run {seen.run_id} ran other SQL than the deployed SQL"
        return (
            f"the deployed SQL does not give it read against today's schema: the schema changed since run {seen.run_id}"
        )
    if job in design.other_tasks:
        return f"{job} is not an IcebergSqlOperator task: design cannot read what it does"
    return f"no task of the DAGs folder is {job}: drift, a manual run, or a task since removed"


def _compare_job(
    task: DesignedTask | None, seen: ObservedJob | None, job: str, design: Design, as_of: str, found: DesignDiff
) -> None:
    mismatch = bool(task and seen and seen.sql_hash is not None and task.sql_hash != seen.sql_hash)
    if mismatch and task is not None and seen is not None:
        found.sql_mismatches.append(SqlMismatch(job, task.sql_hash, seen.sql_hash, seen.run_id, seen.event_time))
    designed_edges = task.edges if task else frozenset()
    designed_datasets = task.dataset_edges if task else frozenset()
    observed_edges = seen.edges if seen else frozenset()
    observed_datasets = seen.dataset_edges if seen else frozenset()
    evidence = seen.evidence() if seen else {}
    only_designed = (sorted_edges(designed_edges - observed_edges), sorted_edges(designed_datasets - observed_datasets))
    if task is not None and (only_designed[0] or only_designed[1]):
        found.jobs.append(
            JobDifference(
                DESIGNED_NOT_OBSERVED,
                job,
                _unobserved_reason(job, seen, mismatch, as_of),
                tuple(only_designed[0]),
                tuple(only_designed[1]),
                evidence,
            )
        )
    only_observed = (sorted_edges(observed_edges - designed_edges), sorted_edges(observed_datasets - designed_datasets))
    if seen is not None and (only_observed[0] or only_observed[1]):
        found.jobs.append(
            JobDifference(
                OBSERVED_NOT_DESIGNED,
                job,
                _undesigned_reason(job, design, seen, mismatch),
                tuple(only_observed[0]),
                tuple(only_observed[1]),
                evidence,
            )
        )


def design_diff(
    design: Design,
    observed: Mapping[str, ObservedJob],
    as_of: str,
    dag_ids: Collection[str] | None = None,
    declared: Mapping[str, ObservedJob] | None = None,
) -> DesignDiff:
    """Return the differences between the design and the runtime jobs (the store's `observed_jobs` as of `as_of`).

    For the DAGs `dag_ids` (every DAG when None): per job the edges on one side only, the tables on one side only, and
    the jobs whose run's SQL is not the deployed SQL. The `declared` lineage of jobs the design cannot read is listed
    beside (a person's statement, not runtime evidence: no difference).
    """
    found = DesignDiff(as_of)
    for job, statement in sorted((declared or {}).items()):
        if in_dags(job, dag_ids) and job not in design.tasks:
            why = "not an IcebergSqlOperator task" if job in design.other_tasks else "no task of the DAGs folder"
            found.declared.append(
                JobDifference(
                    DECLARED_NOT_DESIGNED,
                    job,
                    f"{statement.note}; design cannot read the job ({why})",
                    tuple(sorted_edges(statement.edges)),
                    tuple(sorted_edges(statement.dataset_edges)),
                    statement.evidence(),
                )
            )
    designed = {job: t for job, t in design.tasks.items() if in_dags(job, dag_ids)}
    seen = {job: o for job, o in observed.items() if in_dags(job, dag_ids)}
    found.not_compared = {job: t.problem or "" for job, t in designed.items() if not t.readable}
    readable = {job: t for job, t in designed.items() if t.readable}
    found.compared = sorted(readable)
    for job in sorted(set(readable) | (set(seen) - set(found.not_compared))):
        _compare_job(readable.get(job), seen.get(job), job, design, as_of, found)
    designed_tables: dict[TableRef, set[str]] = defaultdict(set)
    for job, task in readable.items():
        for table in task.tables:
            designed_tables[table].add(job)
    observed_tables: dict[TableRef, set[str]] = defaultdict(set)
    for job, run in seen.items():
        if job not in found.not_compared:
            for table in run.tables:
                observed_tables[table].add(job)
    for kind, side, other in (
        (DESIGNED_NOT_OBSERVED, designed_tables, observed_tables),
        (OBSERVED_NOT_DESIGNED, observed_tables, designed_tables),
    ):
        found.tables.extend(
            TableDifference(kind, table, tuple(sorted(jobs)))
            for table, jobs in sorted(side.items(), key=lambda item: str(item[0]))
            if table not in other
        )
    return found
