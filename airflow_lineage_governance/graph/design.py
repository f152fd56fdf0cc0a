"""Design lineage: what the SQL in the DAG files says each task reads and writes, read without running anything.

The Airflow shell (`design/dagbag.py`) renders every IcebergSqlOperator's SQL for a logical date into a
`TaskSql`; `design_lineage` reads each one's column lineage against the catalog's schema, with the same engine
the operator uses, into a `DesignedTask`: its target, its column edges (the facet's `fields`, and the `dataset`
list as edges into the target table), its dataset edges (each source table into the target) and the hash of its
normalised SQL. A task whose SQL cannot be rendered or read carries the one sentence saying why instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.graph.records import sql_hash
from airflow_lineage_governance.lineage import ColumnLineage, column_lineage, parse_statement
from airflow_lineage_governance.lineage.fingerprint import facet_sql
from airflow_lineage_governance.refs import ColumnRef, TableRef

DESIGNED = "designed"
"""The source of an edge read from the SQL in the DAG files (the history graph's `designed`)."""


class LineEdge(NamedTuple):
    """A column edge as design and runtime are compared.

    Source column, target column (or the target table, for an input that shapes every row), OpenLineage type and
    subtype.
    """

    source: ColumnRef
    target: ColumnRef | TableRef
    type: str
    subtype: str

    def to_dict(self) -> dict[str, str]:
        """Return the edge as the JSON output shows it."""
        return {
            "source": str(self.source),
            "target": str(self.target),
            "type": str(self.type),
            "subtype": str(self.subtype),
        }

    def line(self) -> str:
        """Return the edge as the text output prints it."""
        return f"{self.source} -> {self.target} ({self.type} {self.subtype})"


class TableEdge(NamedTuple):
    """A dataset-level edge: the job read `source` and wrote `target`."""

    source: TableRef
    target: TableRef

    def to_dict(self) -> dict[str, str]:
        """Return the edge as the JSON output shows it."""
        return {"source": str(self.source), "target": str(self.target)}

    def line(self) -> str:
        """Return the edge as the text output prints it."""
        return f"{self.source} -> {self.target}"


@dataclass(frozen=True)
class TaskSql:
    """One IcebergSqlOperator task of the DagBag with its SQL rendered for the logical date.

    Or the sentence saying why it could not be rendered.
    """

    dag_id: str
    task_id: str
    sql: str | None = None
    problem: str | None = None

    @property
    def job(self) -> str:
        """Return the OpenLineage job name of the task, as the Airflow provider names it: `dag_id.task_id`."""
        return f"{self.dag_id}.{self.task_id}"


@dataclass(frozen=True)
class DesignedTask:
    """One task's designed lineage: target, column and dataset edges, SQL hash; or the reason it has none."""

    dag_id: str
    task_id: str
    target: TableRef | None = None
    sources: tuple[TableRef, ...] = ()
    edges: frozenset[LineEdge] = frozenset()
    sql_hash: str | None = None
    problem: str | None = None

    @property
    def job(self) -> str:
        """Return the task's OpenLineage job name (`dag_id.task_id`)."""
        return f"{self.dag_id}.{self.task_id}"

    @property
    def readable(self) -> bool:
        """Return True when the task's lineage was read (it has no problem)."""
        return self.problem is None

    @property
    def dataset_edges(self) -> frozenset[TableEdge]:
        """Return the dataset-level edges: each source table into the target."""
        if self.target is None:
            return frozenset()
        return frozenset(TableEdge(source, self.target) for source in self.sources)

    @property
    def tables(self) -> frozenset[TableRef]:
        """Return every table the task reads or write by design."""
        return frozenset((*self.sources, *([self.target] if self.target is not None else [])))

    def to_dict(self) -> dict[str, Any]:
        """Return the task's design as the JSON output shows it."""
        data: dict[str, Any] = {"job": self.job, "dag_id": self.dag_id, "task_id": self.task_id, "source": DESIGNED}
        if self.problem is not None:
            data["problem"] = self.problem
            return data
        data.update(
            {
                "target": str(self.target),
                "sql_hash": self.sql_hash,
                "dataset_edges": [e.to_dict() for e in sorted_edges(self.dataset_edges)],
                "column_edges": [e.to_dict() for e in sorted_edges(self.edges)],
            }
        )
        return data


@dataclass
class Design:
    """Every IcebergSqlOperator task of a DAGs folder with its designed lineage, by job name.

    With the files the DagBag could not import (file -> its error's last line).
    """

    tasks: dict[str, DesignedTask] = field(default_factory=dict)
    import_errors: dict[str, str] = field(default_factory=dict)
    dag_ids: frozenset[str] = frozenset()
    other_tasks: frozenset[str] = frozenset()
    """The jobs of the DagBag's other tasks (not IcebergSqlOperator): design cannot read what they do."""
    logical_date: str = ""

    def readable(self) -> list[DesignedTask]:
        """Return the tasks whose lineage was read, by job name."""
        return [t for _, t in sorted(self.tasks.items()) if t.readable]

    def to_dict(self) -> dict[str, Any]:
        """Return the design as the JSON output shows it."""
        return {
            "logical_date": self.logical_date,
            "dags": sorted(self.dag_ids),
            "tasks": [t.to_dict() for _, t in sorted(self.tasks.items())],
            "other_tasks": sorted(self.other_tasks),
            "import_errors": dict(sorted(self.import_errors.items())),
        }


def sorted_edges(edges: Iterable[LineEdge] | Iterable[TableEdge]) -> list[Any]:
    """Return the edges ordered by their text (target, then source, type, subtype)."""
    return sorted(edges, key=lambda e: (str(e.target), str(e.source), *(str(part) for part in e[2:])))


def facet_sql_hash(sql: str) -> str:
    """Return the code version of a rendered statement as the history has it for the runs of that statement.

    The history's hash (`graph/records.sql_hash`) of the statement as its `sql` job facet carries it (`facet_sql`).
    """
    return sql_hash(facet_sql(sql))


def short(hashed: str | None) -> str:
    """Return the first 12 hex digits of a SQL hash for a person to read (`-` for none)."""
    return hashed[:12] if hashed else "-"


def lineage_edges(lineage: ColumnLineage) -> frozenset[LineEdge]:
    """Return the lineage's column edges as an event carries them.

    Each output column's inputs, and each input that shapes every row as an edge into the target table.
    """
    found = {
        LineEdge(d.source, ColumnRef(lineage.target, output.name), str(d.type), str(d.subtype))
        for output in lineage.columns
        for d in output.inputs
    }
    found.update(LineEdge(d.source, lineage.target, str(d.type), str(d.subtype)) for d in lineage.rows)
    return frozenset(found)


def designed_task(task: TaskSql, schema: Mapping[TableRef, Mapping[str, str]]) -> DesignedTask:
    """Return the task's designed lineage read against `schema`, or the task with the sentence saying why not.

    The sentence says why its SQL could not be rendered or its lineage read (never raises for a bad statement).
    """
    if task.sql is None:
        return DesignedTask(task.dag_id, task.task_id, problem=task.problem or "the task has no SQL")
    try:
        lineage = column_lineage(parse_statement(task.sql), schema)
    except LineageGovernanceError as error:
        return DesignedTask(task.dag_id, task.task_id, problem=str(error), sql_hash=facet_sql_hash(task.sql))
    return DesignedTask(
        task.dag_id,
        task.task_id,
        lineage.target,
        tuple(lineage.sources),
        lineage_edges(lineage),
        facet_sql_hash(task.sql),
    )


def design_lineage(
    tasks: Iterable[TaskSql],
    schema: Mapping[TableRef, Mapping[str, str]],
    *,
    import_errors: Mapping[str, str] | None = None,
    dag_ids: Iterable[str] = (),
    other_tasks: Iterable[str] = (),
    logical_date: str = "",
) -> Design:
    """Return the design of the tasks (each read with `designed_task`).

    With the DagBag's import errors, DAG ids and the jobs of its other tasks.
    """
    designed = {t.job: designed_task(t, schema) for t in tasks}
    return Design(designed, dict(import_errors or {}), frozenset(dag_ids), frozenset(other_tasks), logical_date)
