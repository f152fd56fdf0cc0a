"""Which data files of its target a MERGE, UPDATE or DELETE touches, as DuckDB answers it.

The statement's target and condition turned into `SELECT DISTINCT <file column> FROM <target> [, <sources>] WHERE
<condition>` (for a MERGE, the target joined to its source on the ON condition), run in the statement's own connection
over the same read of the target. Every row the statement can change lies in a file that query names, by DuckDB's own
binding of the condition (its casts, NaN ordering, collations).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb
from sqlglot import exp

from airflow_lineage_governance.iceberg.bounds import ParsedDml, conjuncts
from airflow_lineage_governance.iceberg.types import quoted


def _file_of(target: exp.Table, file_column: str) -> str:
    """Return the file column qualified as the statement names its target (its alias, else its name)."""
    qualifier = quoted(target.alias) if target.alias else ".".join(quoted(part.name) for part in target.parts)
    return f"{qualifier}.{quoted(file_column)}"


def touched_files_query(parsed: ParsedDml, file_column: str) -> str | None:
    """Return the query whose rows name every data file of the target the statement can change.

    Args:
        parsed: the statement, as `bounds.parse_dml` read it (its sqlglot tree included).
        file_column: the column of the exposed target that holds each row's data file.

    Returns:
        The query (DuckDB dialect), or None when the statement may change any row (no condition, WHEN NOT
        MATCHED BY SOURCE, or it reads its own target elsewhere): then every file is touched.
    """
    tree = parsed.tree
    if tree is None or parsed.unbounded or not isinstance(tree.this, exp.Table):
        return None
    target = tree.this
    with_ = tree.args.get("with_")
    prefix = f"{with_.sql(dialect='duckdb')} " if with_ is not None else ""
    select = f"{prefix}SELECT DISTINCT {_file_of(target, file_column)} FROM {target.sql(dialect='duckdb')}"
    if isinstance(tree, exp.Merge):
        using, on, keys = tree.args.get("using"), tree.args.get("on"), tree.args.get("using_cond")
        if using is None:
            return None
        if keys:
            listed = ", ".join(key.sql(dialect="duckdb") for key in keys)
            return f"{select} JOIN {using.sql(dialect='duckdb')} USING ({listed})"
        if not isinstance(on, exp.Expr):
            return None
        return f"{select} JOIN {using.sql(dialect='duckdb')} ON {on.sql(dialect='duckdb')}"
    where = tree.args.get("where")
    if where is None:
        return None
    if isinstance(tree, exp.Update):
        from_ = tree.args.get("from_")
        sources = [from_.this] if from_ is not None else []
    else:
        sources = list(tree.args.get("using") or [])
    joined = "".join(f", {source.sql(dialect='duckdb')}" for source in sources)
    return f"{select}{joined} WHERE {where.this.sql(dialect='duckdb')}"


def partition_files_query(parsed: ParsedDml, file_column: str, columns: Sequence[str]) -> str | None:
    """Return the query naming the data files whose values of `columns` can meet the statement's condition.

    It runs where the target's name holds one row per data file and distinct value of `columns` (the file column
    and those columns only). The condition is cut to its conjuncts that read no other column of the target and call
    no function DuckDB may answer differently on another call: every row the statement can change has its file
    named, since a row's conjuncts over `columns` are those of its file's row.

    Args:
        parsed: the statement, as `bounds.parse_dml` read it.
        file_column: the column holding each row's data file.
        columns: the target's columns each data file holds few values of (its identity partition columns).

    Returns:
        The query (DuckDB dialect), or None when no conjunct bounds `columns`, or the statement is unbounded.
    """
    tree = parsed.tree
    if tree is None or touched_files_query(parsed, file_column) is None or tree.args.get("using_cond"):
        return None
    condition = tree.args.get("on") if isinstance(tree, exp.Merge) else parsed.condition
    if not isinstance(condition, exp.Expr):
        return None
    allowed = {column.lower() for column in columns}
    kept = [
        conjunct
        for conjunct in conjuncts(condition)
        if _reads_only(conjunct, parsed, allowed) and not _calls_unstable(conjunct)
    ]
    if not any(_reads_target(conjunct, parsed) for conjunct in kept):
        return None
    cut = tree.copy()
    reduced = exp.and_(*(conjunct.copy() for conjunct in kept))
    if isinstance(cut, exp.Merge):
        cut.set("on", reduced)
    else:
        cut.set("where", exp.Where(this=reduced))
    return touched_files_query(replace(parsed, condition=reduced, tree=cut), file_column)


@dataclass(frozen=True)
class FileValues:
    """The queries that give each data file's values of a few columns, from their minimum and maximum per file.

    `summary` (made a table named `summary_name`) holds each file's minimum, maximum and NULL count of each column;
    `values` gives one row per file and value (NULL included) of the files whose every column holds one value
    besides NULL; `several` names the other files, which no cut condition may leave out.
    """

    summary_name: str
    summary: str
    values: str
    several: str


def file_values_queries(source: str, file_column: str, columns: Sequence[str], summary_name: str) -> FileValues:
    """Return the queries giving each data file's values of `columns` read from `source`, one pass over it.

    The columns must be of types whose equal values DuckDB cannot tell apart (no floats: -0.0 equals 0.0), so a
    file whose minimum equals its maximum holds that one value (and NULL where it counts some).

    Args:
        source: the target's rows, with the file column.
        file_column: the column holding each row's data file.
        columns: the target's identity partition columns.
        summary_name: the name the summary is held under while the other two run.

    Returns:
        The three queries (DuckDB dialect).
    """
    file = quoted(file_column)
    named = [quoted(column) for column in columns]
    aggregates = ", ".join(
        f"min({c}) AS lo{i}, max({c}) AS hi{i}, count(*) - count({c}) AS nulls{i}" for i, c in enumerate(named)
    )
    summary = f"SELECT {file}, {aggregates} FROM {source} GROUP BY {file}"
    single = " AND ".join(f"s.lo{i} IS NOT DISTINCT FROM s.hi{i}" for i in range(len(named)))
    unnested = "".join(
        f", unnest(CASE WHEN s.nulls{i} = 0 THEN [s.lo{i}] WHEN s.lo{i} IS NULL THEN [NULL] "
        f"ELSE [s.lo{i}, NULL] END) AS u{i}(v)"
        for i in range(len(named))
    )
    picked = ", ".join(f"u{i}.v AS {c}" for i, c in enumerate(named))
    values = f"SELECT s.{file}, {picked} FROM {summary_name} AS s{unnested} WHERE {single}"
    several = f"SELECT {file} FROM {summary_name} AS s WHERE NOT ({single})"
    return FileValues(summary_name, summary, values, several)


def _reads_target(node: exp.Expr, parsed: ParsedDml) -> bool:
    return any(not column.table or column.table.lower() in parsed.target_names for column in node.find_all(exp.Column))


def _reads_only(node: exp.Expr, parsed: ParsedDml, allowed: set[str]) -> bool:
    """Return whether every column `node` reads is another relation's or one of the target's `allowed` ones.

    An unqualified column may be the target's: it must be allowed.
    """
    if any(node.find_all(exp.Star)):
        return False
    for column in node.find_all(exp.Column):
        if column.table and column.table.lower() not in parsed.target_names:
            continue
        if column.name.lower() not in allowed:
            return False
    return True


def _calls_unstable(node: exp.Expr) -> bool:
    """Return whether `node` calls a function DuckDB may answer differently on another call (random, now, ...).

    The time and session of the call too (CURRENT_TIMESTAMP, LOCALTIME, ...: sqlglot's Current* and Local* nodes).
    """
    unstable = unstable_functions()
    for call in node.find_all(exp.Func):
        if type(call).__name__.startswith(("Current", "Local")):
            return True
        names = {call.sql_name().lower(), call.sql(dialect="duckdb").split("(", 1)[0].strip().lower()}
        if isinstance(call, exp.Anonymous):
            names.add(call.name.lower())
        if names & unstable:
            return True
    return False


@functools.cache
def unstable_functions() -> frozenset[str]:
    """Return the names of DuckDB's functions none of whose forms DuckDB calls consistent.

    Their answer may change from one call, or one query, to the next (random, uuid, nextval, now, current_date).
    """
    connection = duckdb.connect()
    try:
        rows = connection.execute(
            "SELECT function_name FROM duckdb_functions() WHERE stability IS NOT NULL "
            "GROUP BY function_name HAVING bool_and(stability <> 'CONSISTENT')"
        ).fetchall()
    finally:
        connection.close()
    return frozenset(str(row[0]).lower() for row in rows)
