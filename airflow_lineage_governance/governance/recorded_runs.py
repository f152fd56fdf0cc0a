"""A governance report as the lineage store keeps it: its run and findings recorded, and the report read back."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.governance.report import GovernanceReport
from airflow_lineage_governance.store.governance_runs import GovernanceRun, StoredFinding, subject_of


def governance_run(report: GovernanceReport, checked_at: datetime) -> GovernanceRun:
    """Return the report's governance run as the store keeps it: which run, when, the source read and the coverage.

    Args:
        report: The report of the run.
        checked_at: When the run checked (aware).

    Returns:
        The run, its counts of errors and warnings and its coverage as the report has them.
    """
    coverage = report.coverage
    return GovernanceRun(
        report.dag_id,
        report.run_id,
        report.logical_date,
        checked_at,
        coverage.get("event_source"),
        coverage.get("target_dag_id") or None,
        coverage.get("target_run_id") or None,
        len(report.errors),
        len(report.findings) - len(report.errors),
        dict(coverage),
    )


def stored_finding(finding: Finding) -> StoredFinding:
    """Return the finding as the store keeps it: kind, severity, subject, sentence, fields as the report has them."""
    fields = finding.to_dict()
    subject_kind, subject = subject_of(fields)
    return StoredFinding(str(finding.kind), str(finding.severity), subject_kind, subject, finding.sentence(), fields)


def record_report(location: str, report: GovernanceReport, checked_at: datetime) -> str:
    """Record the report's run and findings in the store at `location`, in place of an earlier record of the same run.

    The store is created when missing; a DuckDB file another process has open is waited for (`sync.open_waiting`).

    Args:
        location: The store: a DuckDB file or a `postgresql://` URL.
        report: The report of the run.
        checked_at: When the run checked (aware).

    Returns:
        The store, as sentences name it.

    Raises:
        StoreError: The store cannot be opened or written.
    """
    from airflow_lineage_governance.store.sync import open_waiting

    with open_waiting(location, create=True) as store:
        store.record_governance_run(governance_run(report, checked_at), [stored_finding(f) for f in report.findings])
        return store.engine.description


def report_of(run: GovernanceRun, findings: Sequence[StoredFinding]) -> GovernanceReport:
    """Return the report a stored run and its findings give back (equal to the report recorded).

    Raises:
        ValueError: A finding is of a kind this provider does not know.
    """
    return GovernanceReport(
        run.dag_id,
        run.run_id,
        run.logical_date,
        [Finding.from_dict(f.fields) for f in findings],
        dict(run.coverage),
    )
