"""The governance report: findings and coverage as JSON, and the same as Markdown for a person."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.kinds import Severity


@dataclass
class GovernanceReport:
    """`{"dag_id", "run_id", "logical_date", "findings": [...], "coverage": {...}}`."""

    dag_id: str
    run_id: str
    logical_date: str
    findings: list[Finding] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        """Return the findings that fail the governance run (all but missing metadata, a warning)."""
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def to_dict(self) -> dict[str, Any]:
        """Return the report as plain data (JSON- and XCom-ready)."""
        return {
            "dag_id": self.dag_id,
            "run_id": self.run_id,
            "logical_date": self.logical_date,
            "findings": [f.to_dict() for f in self.findings],
            "coverage": self.coverage,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GovernanceReport:
        """Return the report `to_dict()` gave; raise ValueError for a finding of an unknown kind."""
        return cls(
            data["dag_id"],
            data["run_id"],
            data["logical_date"],
            [Finding.from_dict(f) for f in data.get("findings") or []],
            dict(data.get("coverage") or {}),
        )

    def write(self, folder: str | Path) -> tuple[Path, Path]:
        """Write governance-report.json and .md into `folder` (created when missing); return both paths."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        json_path, md_path = target / "governance-report.json", target / "governance-report.md"
        json_path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        md_path.write_text(markdown(self))
        return json_path, md_path


def markdown(report: GovernanceReport) -> str:
    """Return the report as Markdown: a section per finding kind, then the coverage."""
    lines = [
        f"# Lineage governance: {report.dag_id}",
        "",
        f"Run `{report.run_id}`, logical date {report.logical_date}: {len(report.errors)} errors, "
        f"{len(report.findings) - len(report.errors)} warnings.",
        "",
    ]
    kinds = sorted({f.kind for f in report.findings})
    for kind in kinds:
        found = [f for f in report.findings if f.kind is kind]
        warning = "" if kind.severity is Severity.ERROR else " (warning)"
        lines.append(f"## {found[0].heading}{warning}")
        lines.extend(f"- {f.sentence()}" for f in found)
        lines.append("")
    if not kinds:
        lines.extend(["No findings.", ""])
    lines.append("## Coverage")
    lines.extend(f"- {line}" for line in coverage_lines(report.coverage))
    return "\n".join(lines) + "\n"


def coverage_value(value: Any) -> str:
    """Return a coverage figure as a person reads it.

    A list as its items joined (`none` when empty), a mapping as `key: value` pairs joined by `; `, a share as a
    percentage, anything else as text.
    """
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {v}" for k, v in value.items()) or "none"
    if isinstance(value, float) and 0 <= value <= 1:
        return f"{value:.0%}"
    return str(value)


def coverage_lines(coverage: Mapping[str, Any]) -> list[str]:
    """Return the coverage as text lines, `<figure in words>: <value>`.

    The Markdown report's and the task log's coverage.
    """
    return [f"{key.replace('_', ' ')}: {coverage_value(value)}" for key, value in coverage.items()]
