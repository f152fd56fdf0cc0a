"""Whether a MERGE, UPDATE or DELETE reads its target beyond the rows it changes, so that every data file is read.

A second read of the target however named, a read of the catalog, or a target row read as one value (`docs/reads.md`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any

import duckdb
from sqlglot import TokenType, exp
from sqlglot.dialects.duckdb import DuckDB

from airflow_lineage_governance.iceberg.bounds import ParsedDml
from airflow_lineage_governance.refs import TableRef

ROW_SOURCES = frozenset({"RANGE", "GENERATE_SERIES", "UNNEST", "UNNEST_FUNCTION", "READ_PARQUET", "PARQUET_SCAN"})
"""The table functions a statement may read without reading the database's catalog or a table by its name."""

ROWID = "rowid"
CURRENT_QUERY = "current_query"


def may_read_beyond(parsed: ParsedDml) -> bool:
    """Return whether the statement may read more than its target's rows and its named sources.

    True when it holds a subquery or a CTE, reads a table function, or names a table with its catalog: DuckDB
    then says what it reads (`reads_beyond`).
    """
    tree = parsed.tree
    if tree is None:
        return True
    if any(True for _ in tree.find_all(exp.Select)):
        return True
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.args.get("catalog") is not None:
            return True
    return False


def reads_whole_rows(parsed: ParsedDml, ref: TableRef, columns: Collection[str]) -> bool:
    """Return whether the statement reads a row of its target as one value, or its columns by their places.

    A column reference naming the target itself (its alias or name, no column of the table), a star qualified by the
    target, `COLUMNS(...)`, a star given to a function other than `count`, or a column by its place (`#n`).
    """
    tree = parsed.tree
    if tree is None:
        return True
    names = set(parsed.target_names) | {ref.name.lower()}
    known = {column.lower() for column in columns}
    for node in tree.find_all(exp.Column, exp.Star, exp.Columns, exp.PositionalColumn):
        if isinstance(node, exp.Columns | exp.PositionalColumn):  # `#n` counts the file's column too
            return True
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                if node.table.lower() in names or not node.table:
                    return True
            elif node.name.lower() in names and node.name.lower() not in known:
                return True
            continue
        parent = node.parent
        if isinstance(parent, exp.Func) and not isinstance(parent, exp.Count):
            return True
    return False


def reads_rowid(parsed: ParsedDml, columns: Collection[str]) -> bool:
    """Return whether the statement reads `rowid` while no table it reads has a column of that name."""
    if ROWID in {column.lower() for column in columns} or parsed.tree is None:
        return False
    return any(column.name.lower() == ROWID for column in parsed.tree.find_all(exp.Column))


def reads_own_text(parsed: ParsedDml) -> bool:
    """Return whether the statement reads `current_query()`: the text DuckDB runs is not always the statement's own.

    Its condition runs in the query that chooses the files, and a MERGE runs with `RETURNING merge_action` added.
    """
    tree = parsed.tree
    return tree is not None and any(node.name.lower() == CURRENT_QUERY for node in tree.find_all(exp.Anonymous))


def reads_beyond(connection: duckdb.DuckDBPyConnection, dml: str, target: tuple[str, str, str]) -> bool:
    """Return whether DuckDB's binding of the statement reads the target more than once, or a catalog function.

    Args:
        connection: the statement's connection, its sources exposed and `target` an empty table of the target's
            columns; its optimizer is left on.
        dml: the statement.
        target: the target's catalog, schema and table name as DuckDB holds them.

    Returns:
        True when a file may not be skipped: the target is read twice, or a table function other than ROW_SOURCES is.
    """
    connection.execute("PRAGMA disable_optimizer")  # an empty table's reads would be optimized away
    try:
        plan = connection.execute(f"EXPLAIN (FORMAT json) {dml}").fetchall()
    finally:
        connection.execute("PRAGMA enable_optimizer")
    named = ".".join(target).lower()
    target_reads = 0
    for node in _nodes(json.loads(plan[0][1]) if plan else []):
        info = node.get("extra_info") or {}
        function = info.get("Function")
        if function is not None and str(function).upper() not in ROW_SOURCES:
            return True
        if str(info.get("Table", "")).lower() == named:
            target_reads += 1
    return target_reads != 1


def written_as_is(dml: str, written: str) -> bool:
    """Return whether `written` is the statement's own text but for spaces, comments and the case of keywords and names.

    Then DuckDB binds the two alike without being asked (`binds_alike`).
    """
    return _tokens(dml) == _tokens(written)


def _tokens(text: str) -> list[tuple[str, str]]:
    return [
        (token.token_type.name, token.text if token.token_type in _EXACT else token.text.upper())
        for token in _DIALECT.tokenize(text)
    ]


_DIALECT = DuckDB()
_EXACT = frozenset(
    {
        TokenType.STRING,
        TokenType.IDENTIFIER,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)
"""The tokens whose text is compared as written: a quoted name and a string's contents."""


def binds_alike(connection: duckdb.DuckDBPyConnection, dml: str, written: str) -> bool:
    """Return whether DuckDB binds the statement as sqlglot wrote it back (`written`) exactly as its own text.

    The files a statement touches are chosen by queries made of sqlglot's text of its parts; where that text means
    something else to DuckDB (an operator's precedence, a cast's order, a JSON path), no file may be skipped.

    Args:
        connection: the statement's connection, its tables exposed (the target as an empty table of its columns).
        dml: the statement.
        written: the statement as sqlglot writes it.

    Returns:
        True when both bind to the same plan; False when they differ or `written` does not bind.
    """
    connection.execute("PRAGMA disable_optimizer")
    try:
        own = connection.execute(f"EXPLAIN (FORMAT json) {dml}").fetchall()
        try:
            again = connection.execute(f"EXPLAIN (FORMAT json) {written}").fetchall()
        except duckdb.Error:
            return False
    finally:
        connection.execute("PRAGMA enable_optimizer")
    return own == again


def _nodes(plan: Any) -> Iterator[dict[str, Any]]:
    waiting = list(plan) if isinstance(plan, list) else [plan]
    while waiting:
        node = waiting.pop()
        if isinstance(node, dict):
            yield node
            waiting.extend(node.get("children") or [])
