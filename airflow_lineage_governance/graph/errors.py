"""Errors of the graph layer."""

from __future__ import annotations


class EventSourceError(Exception):
    """Raised when an event source cannot be read at all (a file that cannot be opened, a Marquez that does not
    answer); the message is one sentence naming the source."""

    def __init__(self, message: str) -> None:
        super().__init__(message if message.endswith(".") else message + ".")


class UnknownColumnError(Exception):
    """Raised when a column asked about is in no event of the graph."""

    def __init__(self, column: str, hint: str = "") -> None:
        self.column = column
        sentence = f"{column}: no received lineage event mentions this column"
        super().__init__(sentence + (f"; {hint}." if hint else "."))
