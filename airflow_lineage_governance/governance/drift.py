"""Design against runtime as governance findings.

The nightly run's warnings for where the SQL in the DAG files and the received lineage differ (`graph/diff.py`), and the
coverage figures of the comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_lineage_governance.governance import findings
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.governance.nightly_lineage import NightlyLineage
from airflow_lineage_governance.graph.design import Design
from airflow_lineage_governance.graph.diff import (
    DESIGNED_NOT_OBSERVED,
    DesignDiff,
    JobDifference,
    design_diff,
)
from airflow_lineage_governance.kinds import FindingKind

SKIPPED = "skipped"
SUCCESS = "success"


def _reason(difference: JobDifference, dag_id: str, task_states: Mapping[str, str]) -> str:
    """Return the difference's reason, told more exactly by the scheduler's state of the task in the run checked.

    A designed task never observed that was skipped in it is a branch not taken, one that succeeded a collection gap.
    """
    if difference.kind != DESIGNED_NOT_OBSERVED or difference.evidence:
        return difference.reason
    state = task_states.get(difference.job.removeprefix(f"{dag_id}.")) if dag_id else None
    if state == SKIPPED:
        return "the task was skipped in the run checked, and no earlier run of it was observed: a branch not taken"
    if state == SUCCESS:
        return "the task succeeded in the run checked, but no COMPLETE of it was ever received: a collection gap"
    return difference.reason


def design_findings(diff: DesignDiff, dag_id: str = "", task_states: Mapping[str, str] | None = None) -> list[Finding]:
    """Return the diff as warning findings.

    SQL hash mismatches, then per job the edges designed and not observed and those observed and not designed, then the
    tables on one side only.
    """
    states = task_states or {}
    found = [
        findings.sql_hash_mismatch(m.job, m.designed, m.observed, m.run_id, m.event_time) for m in diff.sql_mismatches
    ]
    for difference in diff.jobs:
        kind = FindingKind(difference.kind)
        evidence: dict[str, Any] = {
            "dataset_edges": [e.to_dict() for e in difference.dataset_edges],
            "column_edges": [e.to_dict() for e in difference.column_edges],
            "run": dict(difference.evidence) or None,
        }
        found.append(
            findings.design_difference(kind, _reason(difference, dag_id, states), job=difference.job, evidence=evidence)
        )
    for table in diff.tables:
        found.append(
            findings.design_difference(
                FindingKind(table.kind), table.reason, table=table.table, evidence={"jobs": list(table.jobs)}
            )
        )
    return found


def nightly_diff(design: Design, governance: NightlyLineage, dag_id: str) -> DesignDiff:
    """Return the diff of the design against the received lineage of `dag_id`'s jobs, with the declared lineage beside.

    The received lineage is each job's latest COMPLETE.
    """
    return design_diff(
        design, governance.observed_jobs(), "now", [dag_id] if dag_id else None, governance.declared_jobs()
    )


def design_coverage(design: Design, diff: DesignDiff) -> dict[str, Any]:
    """Return the comparison's coverage figures.

    Designed tasks compared, those whose design cannot be read (with why), and the differences.
    """
    found: dict[str, Any] = {"design_tasks_compared": len(diff.compared), "design_differences": diff.count}
    if diff.not_compared:
        found["design_unreadable"] = dict(sorted(diff.not_compared.items()))
    if design.import_errors:
        found["design_import_errors"] = dict(sorted(design.import_errors.items()))
    return found
