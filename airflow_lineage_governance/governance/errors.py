"""Errors of the governance layer, all under `GovernanceError` (itself under `LineageGovernanceError`)."""

from __future__ import annotations

from pathlib import Path

from airflow_lineage_governance.errors import LineageGovernanceError


class GovernanceError(LineageGovernanceError):
    """Raised when a governance question cannot be answered from the rules, metadata and lineage given."""


class GovernanceConfigError(GovernanceError):
    """Raised when metadata.toml or lineage.toml cannot be read; the sentence names the file and key."""

    def __init__(self, path: str | Path, key: str | None, problem: str) -> None:
        self.path = str(path)
        self.key = key
        where = f"{self.path}, key {key}" if key else self.path
        super().__init__(f"{where}: {problem}.")
