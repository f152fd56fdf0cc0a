"""The one finding type of every governance check, and the one place findings turn into data and sentences.

A `Finding` has a kind (its severity follows from it), the table, column or job it is about, and its evidence
as plain data. `to_dict()` gives the report's JSON shape (`{"kind": ..., <subject>: ..., **evidence}`),
`from_dict()` reads it back (the nightly DAG hands findings between tasks as XCom data), and `sentence()` gives
the line the Markdown report and the CLI print.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow_lineage_governance.kinds import FindingKind, Severity
from airflow_lineage_governance.refs import ColumnRef, TableRef


@dataclass(frozen=True)
class Finding:
    """One governance finding: its kind, what it is about (a table, a column or a job) and its evidence."""

    kind: FindingKind
    table: TableRef | None = None
    column: ColumnRef | None = None
    job: str | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> Severity:
        """Return the finding's severity, which its kind decides."""
        return self.kind.severity

    @property
    def heading(self) -> str:
        """Return the kind as words (`missing metadata`)."""
        return self.kind.replace("_", " ")

    def to_dict(self) -> dict[str, Any]:
        """Return the finding as the report's JSON shows it: the kind, the subject by name, the evidence."""
        data: dict[str, Any] = {"kind": str(self.kind)}
        if self.job is not None:
            data["job"] = self.job
        if self.table is not None:
            data["table"] = str(self.table)
        if self.column is not None:
            data["column"] = str(self.column)
        data.update(self.evidence)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Return the finding `to_dict()` gave.

        Raises ValueError for an unknown kind and InvalidNameError for a table or column name that names none.
        """
        evidence = {k: v for k, v in data.items() if k not in ("kind", "job", "table", "column")}
        table, column = data.get("table"), data.get("column")
        return cls(
            FindingKind(data["kind"]),
            TableRef.parse(table) if table is not None else None,
            ColumnRef.parse(column) if column is not None else None,
            data.get("job"),
            evidence,
        )

    def sentence(self) -> str:
        """Return the finding as one sentence for a person."""
        return SENTENCES[self.kind](self)

    def line(self) -> str:
        """Return the finding as the CLI prints it: the kind as words, then the sentence."""
        return f"{self.heading}: {self.sentence()}"


def target_run_unfinished(dag_id: str | None, run_id: str | None, reason: str | None) -> Finding:
    """Return the finding that the checked DAG's run had not finished when the wait ended."""
    return Finding(FindingKind.TARGET_RUN_UNFINISHED, evidence={"dag_id": dag_id, "run_id": run_id, "reason": reason})


def missing_complete(job: str, task_id: str, try_number: int | None, state: str, reason: str = "") -> Finding:
    """Return the finding that a task instance ended in `state` with no COMPLETE event of its job."""
    evidence: dict[str, Any] = {"task_id": task_id, "try_number": try_number, "state": state}
    if reason:
        evidence["reason"] = reason
    return Finding(FindingKind.MISSING_COMPLETE, job=job, evidence=evidence)


def unaccounted_table(table: TableRef) -> Finding:
    """Return the finding that a catalog table is neither a declared source nor any job's output."""
    return Finding(FindingKind.UNACCOUNTED_TABLE, table=table)


def understated_classification(
    column: ColumnRef, declared: str, proposed: str, source: ColumnRef, edge_type: str, subtype: str
) -> Finding:
    """Return the finding that a column's declared class is lower than the one lineage proposes.

    It holds the input edge (source, type, subtype) that decided the proposal.
    """
    decided = {"source": str(source), "type": str(edge_type), "subtype": str(subtype)}
    return Finding(
        FindingKind.UNDERSTATED_CLASSIFICATION,
        column=column,
        evidence={"declared": declared, "proposed": proposed, "decided_by": decided},
    )


def missing_metadata(table: TableRef, proposals: Mapping[str, str | None]) -> Finding:
    """Return the finding that a written table has no metadata, with the class proposed for each column."""
    return Finding(FindingKind.MISSING_METADATA, table=table, evidence={"proposals": dict(proposals)})


SKIPPED_WITHOUT_LINEAGE = ("understated_classification", "unaccounted_table", "missing_metadata")
"""The checks whose answer would be false over lineage that could not be read."""


def lineage_unavailable(source: str, reason: str) -> Finding:
    """Return the finding that the event source could not be read.

    Unreachable, or the read stopped part way: the checks that need the lineage were skipped, neither failed nor passed.
    """
    return Finding(
        FindingKind.LINEAGE_UNAVAILABLE,
        evidence={"source": source, "reason": reason, "skipped": list(SKIPPED_WITHOUT_LINEAGE)},
    )


def design_difference(
    kind: FindingKind,
    reason: str,
    *,
    job: str | None = None,
    table: TableRef | None = None,
    evidence: Mapping[str, Any] | None = None,
) -> Finding:
    """Return a finding that design and runtime differ, for a job or a table, with the reason it may be so.

    `kind` is designed_not_observed or observed_not_designed. For a job, `evidence` holds its edges on one side only
    (dataset_edges, column_edges, run); for a table, the jobs of the side it is on (jobs).
    """
    return Finding(kind, table=table, job=job, evidence={"reason": reason, **(evidence or {})})


def sql_hash_mismatch(job: str, designed: str | None, observed: str | None, run_id: str, event_time: str) -> Finding:
    """Return the finding that a job's latest run ran other SQL than the DAG files deploy.

    SQL is compared by its normalised SQL's hash.
    """
    return Finding(
        FindingKind.SQL_HASH_MISMATCH,
        job=job,
        evidence={
            "designed_sql_hash": designed,
            "observed_sql_hash": observed,
            "run_id": run_id,
            "event_time": event_time,
        },
    )


def _edges_text(f: Finding) -> str:
    edges = [
        f"{e['source']} -> {e['target']}"
        for e in (*f.evidence.get("dataset_edges", ()), *f.evidence.get("column_edges", ()))
    ]
    shown = ", ".join(edges[:3]) + (f" and {len(edges) - 3} more" if len(edges) > 3 else "")
    return f"{len(edges)} edges ({shown})" if edges else "no edge"


def _design_difference(f: Finding) -> str:
    if f.table is not None:
        return f"{f.table}: {f.evidence['reason']}"
    side = "designed, not observed" if f.kind is FindingKind.DESIGNED_NOT_OBSERVED else "observed, not designed"
    return f"{f.job}: {_edges_text(f)} {side}; {f.evidence['reason']}"


def _short(hashed: Any) -> str:
    return str(hashed)[:12] if hashed else "none"


def _missing_complete(f: Finding) -> str:
    tried = f", try {f.evidence['try_number']}" if f.evidence.get("try_number") else ""
    why = f" ({f.evidence['reason']})" if f.evidence.get("reason") else ""
    state = "succeeded" if f.evidence["state"] == "success" else f.evidence["state"]
    return f"{f.job}: the task {state}{tried}, but no COMPLETE lineage event arrived{why}"


def _understated(f: Finding) -> str:
    decided = f.evidence["decided_by"]
    return (
        f"{f.column}: declared {f.evidence['declared']}, lineage proposes {f.evidence['proposed']} "
        f"(from {decided['source']}, {decided['type']} {decided['subtype']})"
    )


def _missing_metadata(f: Finding) -> str:
    proposals = ", ".join(f"{c} {p or 'unknown'}" for c, p in f.evidence["proposals"].items())
    return f"{f.table}: written with no metadata; lineage proposes {proposals}"


SENTENCES: dict[FindingKind, Callable[[Finding], str]] = {
    FindingKind.MISSING_COMPLETE: _missing_complete,
    FindingKind.UNACCOUNTED_TABLE: lambda f: (
        f"{f.table}: in the catalog, but no declared source and no job's output in the lineage"
    ),
    FindingKind.UNDERSTATED_CLASSIFICATION: _understated,
    FindingKind.TARGET_RUN_UNFINISHED: lambda f: (
        f"{f.evidence['dag_id']}: its run had not finished when the wait ended ({f.evidence.get('reason')})"
    ),
    FindingKind.MISSING_METADATA: _missing_metadata,
    FindingKind.DESIGNED_NOT_OBSERVED: _design_difference,
    FindingKind.OBSERVED_NOT_DESIGNED: _design_difference,
    FindingKind.SQL_HASH_MISMATCH: lambda f: (
        f"{f.job}: the deployed SQL is {_short(f.evidence['designed_sql_hash'])}, but run "
        f"{f.evidence['run_id']} ({f.evidence['event_time']}) ran {_short(f.evidence['observed_sql_hash'])}"
    ),
    FindingKind.LINEAGE_UNAVAILABLE: lambda f: (
        f"{f.evidence['source']}: the lineage events could not be read ({f.evidence['reason']}), so "
        f"the checks {', '.join(f.evidence['skipped'])} were skipped: not passed, not failed"
    ),
}
