"""Errors of the Iceberg layer: each one sentence naming the table. `IcebergError` is the layer's root."""

from __future__ import annotations

import re

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.refs import TableRef

_QUOTED = re.compile(r"(?<!\w)'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|`[^`]*`?")
# A number standing alone (not part of a name like INT32 or decimal128): a value DuckDB or Arrow shows unquoted,
# as in "with value 300 can't be cast" or "Integer value 300 not in range", dates and times included.
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.:/-]\d+)*(?:[eE][-+]?\d+)?(?![\w])")
_MAX_CHARS = 300
_FREE_TEXT_ERRORS = frozenset({"Invalid Input Error", "Invalid Error"})


def without_values(message: str) -> str:
    """Return the first line of an engine's error message, cut to 300 characters, with no value in it.

    Every quoted text (single quotes opening after a non-letter, double or back quotes, an unclosed quote to the end) is
    replaced by '?' and every standalone number by ?: DuckDB, Arrow and pyiceberg quote the offending value, or show it
    bare, and no value may reach a log line or an event.
    """
    first = message.strip().splitlines()[0] if message.strip() else ""
    masked = _NUMBER.sub("?", _QUOTED.sub("'?'", first))
    kind, _, detail = masked.partition(": ")
    if kind in _FREE_TEXT_ERRORS and "'?'" not in detail:
        # DuckDB's error() and regex errors show the text they were given bare: withhold all of it.
        masked = f"{kind}: details withheld, as they may hold a value"
    return masked if len(masked) <= _MAX_CHARS else masked[: _MAX_CHARS - 1] + "…"


class IcebergError(LineageGovernanceError):
    """Raised when a catalog table cannot be read or written as asked; the message names the table."""

    def __init__(self, table: TableRef | str, problem: str, advice: str = "") -> None:
        self.table = str(table)
        super().__init__(f"{table}: {problem}" + (f"; {advice}" if advice else ""))


class NamespaceTooDeepError(IcebergError):
    """Raised when a table's namespace has more levels than DuckDB can name (catalog.schema: two)."""


class IcebergWriteError(IcebergError):
    """Raised when a result cannot be written to its table; the table is left as it was."""


class ResultSchemaError(IcebergError):
    """Raised when the schema of a statement's result cannot be known without running it.

    DuckDB cannot bind the statement, or no Iceberg type holds a column's type.
    """


class CommitConflictError(IcebergWriteError):
    """Raised when concurrent writers kept winning the table's commit past the retry bound."""


class CatalogUnreachableError(IcebergError):
    """Raised when a REST catalog does not answer: down, unreachable, or slower than its request timeout.

    The request it refused wrote nothing; a commit it did not answer in time is atomic (the table holds all of the write
    or none of it, and a retried INSERT finds its own earlier commit by write key).
    """

    def __init__(self, catalog: str, uri: str, problem: str) -> None:
        self.catalog = catalog
        super().__init__(
            f"catalog {catalog}",
            f"the REST catalog at {uri} {problem}",
            "check that the catalog server is running and reachable, then retry the task.",
        )
