"""The governance runs the store keeps, with their findings: recorded by the nightly DAG, read by the UI and the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_lineage_governance.store.engine import Engine, Row
from airflow_lineage_governance.store.ids import stable_id
from airflow_lineage_governance.store.ingest import EPOCH, micros

SUBJECT_KEYS = ("column", "table", "job")
"""The keys of a finding's fields that name its subject, the most precise first."""
RUN_COLUMNS = (
    "dag_id, run_id, logical_date, checked_at_us, source, target_dag_id, target_run_id, errors, warnings, coverage"
)


@dataclass(frozen=True)
class GovernanceRun:
    """One governance run as the store keeps it: which run, when it checked, the source it read and its coverage."""

    dag_id: str
    run_id: str
    logical_date: str
    checked_at: datetime
    source: str | None = None
    target_dag_id: str | None = None
    target_run_id: str | None = None
    errors: int = 0
    warnings: int = 0
    coverage: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Return the run's key in the store, `<dag_id>/<run_id>` (a DAG id holds no `/`)."""
        return f"{self.dag_id}/{self.run_id}"


@dataclass(frozen=True)
class StoredFinding:
    """One finding of a governance run as the store keeps it.

    `fields` are the finding's fields as the report's JSON has them (`kind`, the subject by name, the evidence);
    `subject_kind` is `column`, `table` or `job`, else `run` (the DAG run a finding of no table is about) or `source`
    (the event source it could not read).
    """

    kind: str
    severity: str
    subject_kind: str
    subject: str
    message: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class SubjectFinding:
    """A finding about one subject in one governance run (`LineageStore.subject_history`)."""

    run: GovernanceRun
    finding: StoredFinding


def subject_of(fields: dict[str, Any]) -> tuple[str, str]:
    """Return what a finding (its fields as the report has them) is about: the kind of subject and its name.

    A column, table or job by the field naming it; else the DAG run of its `dag_id` and `run_id` (`<dag>/<run>`), else
    the event source of its `source`; else the empty subject.
    """
    for key in SUBJECT_KEYS:
        if isinstance(fields.get(key), str):
            return key, fields[key]
    if isinstance(fields.get("dag_id"), str):
        return "run", f"{fields['dag_id']}/{fields.get('run_id') or ''}"
    if isinstance(fields.get("source"), str):
        return "source", fields["source"]
    return "none", ""


def record(engine: Engine, run: GovernanceRun, findings: Sequence[StoredFinding]) -> None:
    """Record a governance run and its findings, in place of what the store held of the same run (same DAG and run id).

    Args:
        engine: The store's engine.
        run: The governance run.
        findings: Its findings, in the report's order.
    """
    at = micros(run.checked_at)
    with engine.transaction():
        engine.lock([stable_id("governance run", run.key)])
        engine.execute("DELETE FROM findings WHERE governance_run = ?", [run.key])
        engine.execute("DELETE FROM governance_runs WHERE governance_run = ?", [run.key])
        engine.execute(
            f"INSERT INTO governance_runs (governance_run, {RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run.key,
                run.dag_id,
                run.run_id,
                run.logical_date,
                at,
                run.source,
                run.target_dag_id,
                run.target_run_id,
                run.errors,
                run.warnings,
                json.dumps(run.coverage),
            ],
        )
        rows = [
            (run.key, place, f.kind, f.severity, f.subject_kind, f.subject, f.message, _evidence(f), at)
            for place, f in enumerate(findings)
        ]
        if rows:
            engine.insert(
                "findings",
                (
                    "governance_run",
                    "position",
                    "kind",
                    "severity",
                    "subject_kind",
                    "subject",
                    "message",
                    "evidence",
                    "created_at_us",
                ),
                rows,
            )


def _evidence(finding: StoredFinding) -> str:
    """Return the finding's fields but its kind and subject, as JSON (what `evidence` keeps)."""
    named = finding.subject_kind if finding.subject_kind in SUBJECT_KEYS else None
    return json.dumps({k: v for k, v in finding.fields.items() if k != "kind" and k != named})


def _instant(us: int) -> datetime:
    return (EPOCH + timedelta(microseconds=int(us))).astimezone(UTC)


def _run(row: Row) -> GovernanceRun:
    dag_id, run_id, logical_date, at, source, target_dag, target_run, errors, warnings, coverage = row
    return GovernanceRun(
        dag_id,
        run_id,
        logical_date,
        _instant(at),
        source,
        target_dag,
        target_run,
        int(errors),
        int(warnings),
        json.loads(coverage),
    )


def _finding(row: Row) -> StoredFinding:
    kind, severity, subject_kind, subject, message, evidence = row
    fields: dict[str, Any] = {"kind": kind}
    if subject_kind in SUBJECT_KEYS:
        fields[subject_kind] = subject
    fields.update(json.loads(evidence) if evidence else {})
    return StoredFinding(kind, severity, subject_kind or "none", subject, message, fields)


def runs(engine: Engine, dag_id: str | None = None, limit: int = 50) -> list[GovernanceRun]:
    """Return the governance runs the store keeps (of `dag_id`, else of every DAG), the latest first.

    The latest is that of the latest logical date, then checked last.

    Args:
        engine: The store's engine.
        dag_id: The governance DAG, or None for every one.
        limit: The most runs returned.

    Returns:
        The runs, newest first.
    """
    where, params = ("WHERE dag_id = ? ", [dag_id]) if dag_id is not None else ("", [])
    rows = engine.query(
        f"SELECT {RUN_COLUMNS} FROM governance_runs {where}ORDER BY logical_date{engine.text_order} DESC, "
        f"checked_at_us DESC, governance_run{engine.text_order} DESC LIMIT ?",
        [*params, limit],
    )
    return [_run(row) for row in rows]


def run(engine: Engine, dag_id: str, run_id: str) -> GovernanceRun | None:
    """Return the governance run `run_id` of `dag_id`, or None when the store keeps none."""
    rows = engine.query(f"SELECT {RUN_COLUMNS} FROM governance_runs WHERE governance_run = ?", [f"{dag_id}/{run_id}"])
    return _run(rows[0]) if rows else None


def findings(engine: Engine, dag_id: str, run_id: str) -> list[StoredFinding]:
    """Return the findings of the governance run `run_id` of `dag_id`, in the report's order ([] for none)."""
    rows = engine.query(
        "SELECT kind, severity, subject_kind, subject, message, evidence FROM findings WHERE governance_run = ? "
        "ORDER BY position",
        [f"{dag_id}/{run_id}"],
    )
    return [_finding(row) for row in rows]


def subject_history(engine: Engine, subject: str, limit: int = 100) -> list[SubjectFinding]:
    """Return the findings about `subject` (a column, table, job, `<dag>/<run>` or source), the latest run's first.

    Args:
        engine: The store's engine.
        subject: The subject as the findings name it.
        limit: The most findings returned.

    Returns:
        Each finding with its run, ordered as `runs` orders runs, then as the report listed them.
    """
    rows = engine.query(
        "SELECT "
        + ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))
        + ", f.kind, f.severity, f.subject_kind, f.subject, f.message, f.evidence FROM findings f "
        "JOIN governance_runs r ON r.governance_run = f.governance_run WHERE f.subject = ? "
        f"ORDER BY r.logical_date{engine.text_order} DESC, r.checked_at_us DESC, "
        f"r.governance_run{engine.text_order} DESC, f.position LIMIT ?",
        [subject, limit],
    )
    return [SubjectFinding(_run(row[:10]), _finding(row[10:])) for row in rows]
