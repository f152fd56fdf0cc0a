"""The governance report: findings and coverage as JSON, and the same as Markdown for a person."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ERROR_KINDS = frozenset({"missing_complete", "unaccounted_table", "understated_classification",
                         "target_run_unfinished"})


@dataclass
class GovernanceReport:
    """`{"dag_id", "run_id", "logical_date", "findings": [...], "coverage": {...}}`."""

    dag_id: str
    run_id: str
    logical_date: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[dict[str, Any]]:
        """Returns the findings that fail the governance run (all but missing metadata, a warning)."""
        return [f for f in self.findings if f["kind"] in ERROR_KINDS]

    def to_dict(self) -> dict[str, Any]:
        """Returns the report as plain data."""
        return {"dag_id": self.dag_id, "run_id": self.run_id, "logical_date": self.logical_date,
                "findings": self.findings, "coverage": self.coverage}

    def write(self, folder: str | Path) -> tuple[Path, Path]:
        """Writes governance-report.json and .md into `folder` (created when missing); returns both paths."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        json_path, md_path = target / "governance-report.json", target / "governance-report.md"
        json_path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        md_path.write_text(markdown(self))
        return json_path, md_path


def finding_line(finding: dict[str, Any]) -> str:
    """Returns one finding as a sentence."""
    kind = finding["kind"]
    if kind == "missing_complete":
        tried = f", try {finding['try_number']}" if finding.get("try_number") else ""
        why = f" ({finding['reason']})" if finding.get("reason") else ""
        state = "succeeded" if finding["state"] == "success" else finding["state"]
        return f"{finding['job']}: the task {state}{tried}, but no COMPLETE lineage event arrived{why}"
    if kind == "unaccounted_table":
        return f"{finding['table']}: in the catalog, but no declared source and no job's output in the lineage"
    if kind == "understated_classification":
        decided = finding["decided_by"]
        return (f"{finding['column']}: declared {finding['declared']}, lineage proposes {finding['proposed']} "
                f"(from {decided['source']}, {decided['type']} {decided['subtype']})")
    if kind == "target_run_unfinished":
        return f"{finding['dag_id']}: its run had not finished when the wait ended ({finding.get('reason')})"
    if kind == "missing_metadata":
        proposals = ", ".join(f"{c} {p or 'unknown'}" for c, p in finding["proposals"].items())
        return f"{finding['table']}: written with no metadata; lineage proposes {proposals}"
    return json.dumps(finding)


def markdown(report: GovernanceReport) -> str:
    """Returns the report as Markdown."""
    lines = [f"# Lineage governance: {report.dag_id}", "",
             f"Run `{report.run_id}`, logical date {report.logical_date}: {len(report.errors)} errors, "
             f"{len(report.findings) - len(report.errors)} warnings.", ""]
    kinds = sorted({f["kind"] for f in report.findings})
    for kind in kinds:
        lines.append(f"## {kind.replace('_', ' ')}{'' if kind in ERROR_KINDS else ' (warning)'}")
        lines.extend(f"- {finding_line(f)}" for f in report.findings if f["kind"] == kind)
        lines.append("")
    if not kinds:
        lines.extend(["No findings.", ""])
    lines.append("## Coverage")
    lines.extend(f"- {key.replace('_', ' ')}: {value}" for key, value in report.coverage.items())
    return "\n".join(lines) + "\n"
