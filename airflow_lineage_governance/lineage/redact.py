"""SQL text with every literal replaced by `?`, so no value from a statement reaches an event or a log."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from airflow_lineage_governance.lineage.statement import Statement, quiet_sqlglot

WITHHELD = "<statement withheld: it does not parse, and its literals cannot be masked>"
_LITERALS = (exp.Literal, exp.HexString, exp.ByteString, exp.BitString, exp.RawString, exp.National)


def _placeholder(node: exp.Expr) -> exp.Expr:
    return exp.Placeholder() if isinstance(node, _LITERALS) else node


def redacted_expression(node: exp.Expr, dialect: str = "duckdb", limit: int = 200) -> str:
    """Return the expression's SQL with literals as `?`, cut to `limit` characters."""
    text = node.transform(_placeholder).sql(dialect=dialect, comments=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redacted_sql(sql: Statement | str, dialect: str = "duckdb") -> str:
    """Return the statement (parsed, or the statements of a text) with every literal as `?` and no comments.

    A text that does not parse is withheld whole rather than risk a value leaking. Changes no tree it is given.
    """
    try:
        if isinstance(sql, Statement):
            return sql.tree.transform(_placeholder).sql(dialect=sql.dialect, pretty=True, comments=False)
        with quiet_sqlglot():
            statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (SqlglotError, RecursionError, ValueError):
        return WITHHELD
    return ";\n".join(s.transform(_placeholder).sql(dialect=dialect, pretty=True, comments=False) for s in statements)
