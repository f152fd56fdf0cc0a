"""Which data files of its target a MERGE, UPDATE or DELETE touches, as DuckDB answers it.

The statement's target and condition turned into `SELECT DISTINCT <file column> FROM <target> [, <sources>] WHERE
<condition>` (for a MERGE, the target joined to its source on the ON condition), run in the statement's own connection
over the same read of the target. Every row the statement can change lies in a file that query names, by DuckDB's own
binding of the condition (its casts, NaN ordering, collations).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from airflow_lineage_governance.iceberg.bounds import ParsedDml
from airflow_lineage_governance.iceberg.sql_text import duckdb_text
from airflow_lineage_governance.iceberg.types import quoted, text_literal


def _file_of(target: exp.Table, file_column: str) -> str:
    """Return the file column qualified as the statement names its target (its alias, else its name)."""
    qualifier = quoted(target.alias) if target.alias else ".".join(quoted(part.name) for part in target.parts)
    return f"{qualifier}.{quoted(file_column)}"


def touched_files_query(parsed: ParsedDml, file_column: str, within: Sequence[str] | None = None) -> str | None:
    """Return the query whose rows name every data file of the target the statement can change.

    Args:
        parsed: the statement, as `bounds.parse_dml` read it (its sqlglot tree included).
        file_column: the column of the exposed target that holds each row's data file.
        within: when given, the only files to read (the file column's values; DuckDB opens no other file).

    Returns:
        The query (DuckDB dialect), or None when the statement may change any row (no condition, WHEN NOT
        MATCHED BY SOURCE, or it reads its own target elsewhere): then every file is touched.
    """
    tree = parsed.tree
    if tree is None or parsed.unbounded or not isinstance(tree.this, exp.Table):
        return None
    target = tree.this
    file_of = _file_of(target, file_column)
    select = f"{with_prefix(tree)}SELECT DISTINCT {file_of} FROM {duckdb_text(target)}"
    only = f"{file_of} IN ({', '.join(text_literal(path) for path in within)})" if within is not None else None
    if isinstance(tree, exp.Merge):
        using, on, keys = tree.args.get("using"), tree.args.get("on"), tree.args.get("using_cond")
        if using is None:
            return None
        filtered = f" WHERE {only}" if only else ""
        if keys:
            listed = ", ".join(duckdb_text(key) for key in keys)
            return f"{select} JOIN {duckdb_text(using)} USING ({listed}){filtered}"
        if not isinstance(on, exp.Expr):
            return None
        return f"{select} JOIN {duckdb_text(using)} ON {duckdb_text(on)}{filtered}"
    where = tree.args.get("where")
    if where is None:
        return None
    condition = duckdb_text(where.this)
    return f"{select}{other_sources(tree)} WHERE " + (f"({condition}) AND {only}" if only else condition)


def with_prefix(tree: exp.Expr) -> str:
    """Return the statement's WITH clause and a space (DuckDB dialect), or '' when it has none."""
    with_ = tree.args.get("with_")
    return f"{duckdb_text(with_)} " if with_ is not None else ""


def other_sources(tree: exp.Expr) -> str:
    """Return the relations an UPDATE (FROM) or DELETE (USING) reads besides its target, each after a comma."""
    if isinstance(tree, exp.Update):
        from_ = tree.args.get("from_")
        sources = [from_.this] if from_ is not None else []
    else:
        sources = list(tree.args.get("using") or [])
    return "".join(f", {duckdb_text(source)}" for source in sources)
