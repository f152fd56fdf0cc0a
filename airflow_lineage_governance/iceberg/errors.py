"""Errors of the Iceberg layer: each one sentence naming the table."""

from __future__ import annotations

import re

_QUOTED = re.compile(r"'[^']*'")


def without_values(message: str) -> str:
    """Returns the first line of an engine's error message with every quoted value replaced by '?': DuckDB and
    Arrow quote the offending value, and no value may reach a log line or an event."""
    first = message.splitlines()[0] if message else ""
    return _QUOTED.sub("'?'", first)


class IcebergWriteError(Exception):
    """Raised when a result cannot be written to its table; the table is left as it was."""

    def __init__(self, table: str, problem: str, advice: str = "") -> None:
        self.table = table
        sentence = f"{table}: {problem}" + (f"; {advice}" if advice else "")
        super().__init__(sentence if sentence.endswith(".") else sentence + ".")


class CommitConflictError(IcebergWriteError):
    """Raised when concurrent writers kept winning the table's commit past the retry bound."""
