"""Errors of the graph layer, all under `GraphError` (itself under the package's `LineageGovernanceError`)."""

from __future__ import annotations

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.refs import ColumnRef


class GraphError(LineageGovernanceError):
    """Raised when the lineage graph cannot answer: its events cannot be read or a name is not in them."""


class EventSourceError(GraphError):
    """Raised when an event source cannot be read at all (a file that cannot be opened, a Marquez that does not answer).

    The message is one sentence naming the source.
    """


class ColumnNotInLineageError(GraphError):
    """Raised when a column asked about is in no event of the graph (or the text asked about names no column)."""

    def __init__(self, column: ColumnRef | str, hint: str = "") -> None:
        self.column = column
        sentence = f"{column}: no received lineage event mentions this column"
        super().__init__(sentence + (f"; {hint}." if hint else "."))
