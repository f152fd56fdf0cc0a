"""The DuckDB text of a parsed statement's parts, written as close to how people write them as sqlglot allows."""

from __future__ import annotations

from sqlglot import exp


def duckdb_text(node: exp.Expr) -> str:
    """Return the DuckDB text of a parsed statement or one of its parts.

    As sqlglot writes it, but `x IS NOT NULL` and `SET c = DEFAULT` as written (sqlglot: `NOT x IS NULL`,
    `"DEFAULT"`), so that DuckDB binds the text as the statement's own (`target_reads.binds_alike`).
    """
    if not any(_as_written(part) is not part for part in node.walk()):
        return node.sql(dialect="duckdb")
    return node.transform(_as_written).sql(dialect="duckdb")


def _as_written(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
        return exp.Paren(this=exp.Var(this=f"{duckdb_text(node.this.this)} IS NOT NULL"))
    if isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier):
        if not node.this.args.get("quoted") and node.this.name.upper() == "DEFAULT":
            return exp.Var(this="DEFAULT")
    return node
