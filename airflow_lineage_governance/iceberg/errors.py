"""Errors of the Iceberg layer: each one sentence naming the table."""

from __future__ import annotations


class IcebergWriteError(Exception):
    """Raised when a result cannot be written to its table; the table is left as it was."""

    def __init__(self, table: str, problem: str, advice: str = "") -> None:
        self.table = table
        sentence = f"{table}: {problem}" + (f"; {advice}" if advice else "")
        super().__init__(sentence if sentence.endswith(".") else sentence + ".")


class CommitConflictError(IcebergWriteError):
    """Raised when concurrent writers kept winning the table's commit past the retry bound."""
