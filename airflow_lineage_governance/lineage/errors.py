"""Errors of the lineage engine: each one sentence that names the target, the table and column at fault."""

from __future__ import annotations

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.refs import TableRef

UNREADABLE = "Lineage cannot be read"
"""How a task that stopped on a LineageError begins its error message (the governance checks count these)."""


class LineageError(LineageGovernanceError):
    """Raised when a statement's column lineage cannot be read exactly; nothing should be written then.

    The layer's root: every error of `lineage/` derives from it.
    """

    def __init__(self, target: TableRef | str | None, problem: str, advice: str = "") -> None:
        self.table = str(target) if target else None
        """The dataset name of the statement's target, None when it is not known."""
        self.target = self.table or "the statement"
        self.problem = problem
        self.advice = advice
        sentence = f"{self.target}: {problem}"
        if advice:
            sentence += f"; {advice}"
        super().__init__(sentence)


class UnsupportedStatementError(LineageError):
    """Raised when the statement is not one CREATE [OR REPLACE] TABLE ... AS SELECT or INSERT INTO ... SELECT."""


class UnsupportedConstructError(LineageError):
    """Raised when the query uses a construct whose lineage the engine does not trace.

    PIVOT, a named WINDOW, COLUMNS(...), UNION BY NAME, a whole-row value, a .* over a struct.
    """


class SqlSyntaxError(LineageError):
    """Raised when the statement does not parse as DuckDB SQL."""


class UnknownTableError(LineageError):
    """Raised when the statement reads or writes a table the catalog schema does not have."""


class UnknownColumnError(LineageError):
    """Raised when a column is in no table, CTE or subquery it could come from."""


class AmbiguousColumnError(LineageError):
    """Raised when an unqualified column could come from more than one table."""


class UnplaceableSourceError(LineageError):
    """Raised when a value comes from something that is not a catalog table (a file, a table function)."""


class ColumnCountError(LineageError):
    """Raised when an INSERT's SELECT has more or fewer values than the columns it writes."""


class UnnamedColumnError(LineageError):
    """Raised when a CTAS output column has no name the table would keep, or two outputs share a name."""


class StatementTooLargeError(LineageError):
    """Raised when a statement exceeds the engine's bounds on size or nesting."""


class BindError(LineageError):
    """Raised when DuckDB cannot bind the statement's query over the catalog's schemas.

    A column neither grouped nor aggregated, a function given the wrong types, ...: the statement would fail when run.
    """
