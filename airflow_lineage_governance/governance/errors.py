"""Errors of the governance layer."""

from __future__ import annotations

from pathlib import Path


class GovernanceConfigError(Exception):
    """Raised when metadata.toml or lineage.toml cannot be read; the sentence names the file and key."""

    def __init__(self, path: str | Path, key: str | None, problem: str) -> None:
        self.path = str(path)
        self.key = key
        where = f"{self.path}, key {key}" if key else self.path
        super().__init__(f"{where}: {problem}.")
