"""The package's error root.

Each layer has its own `errors.py` whose classes derive from it, so a caller (the CLI, a DAG task) can catch every error
of ours with one `except` and show its message: one sentence that names the table, column or statement at fault and what
to do, never a data value.
"""

from __future__ import annotations


class LineageGovernanceError(Exception):
    """Raised for every failure of this package that a person can act on; the message is one sentence."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence if sentence.endswith(".") else sentence + ".")


class InvalidNameError(LineageGovernanceError, ValueError):
    """Raised when a text does not name a table (`namespace.table`) or a column (`namespace.table.column`)."""
