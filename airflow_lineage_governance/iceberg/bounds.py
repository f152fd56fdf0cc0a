"""Which rows of its target a MERGE, UPDATE or DELETE can touch, as a pyiceberg row filter.

The conjuncts of its ON (MERGE) or WHERE (UPDATE, DELETE) that bound a target column by constants (`=`, `<`, `<=`, `>`,
`>=`, `BETWEEN`, `IN (…)`, `IN (SELECT …)` uncorrelated) or, for `t.col = <source expression>`, by the source's values
(computed in the sandboxed DuckDB connection). The filter is implied by the statement's condition, so every row the
statement can change lies in a data file the filter keeps: reading only those files is exact. Anything else (OR, a
function of the target column, WHEN NOT MATCHED BY SOURCE, a statement that reads its own target) leaves the conjunct,
or the whole statement, unbounded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import duckdb
import sqlglot
from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, And, BooleanExpression
from pyiceberg.expressions import EqualTo as _EqualTo
from pyiceberg.expressions import GreaterThan as _GreaterThan
from pyiceberg.expressions import GreaterThanOrEqual as _GreaterThanOrEqual
from pyiceberg.expressions import In as _In
from pyiceberg.expressions import LessThan as _LessThan
from pyiceberg.expressions import LessThanOrEqual as _LessThanOrEqual
from sqlglot import exp

from airflow_lineage_governance.iceberg.sql_text import duckdb_text
from airflow_lineage_governance.refs import TableRef

MAX_VALUES = 1000
"""Past this many distinct values, a conjunct bounds nothing (the filter would cost more than it saves)."""

# pyiceberg's predicates are pydantic models whose constructors mypy reads wrongly; called as documented.
_PREDICATES: dict[type[exp.Expr], Any] = {
    exp.EQ: _EqualTo,
    exp.LT: _LessThan,
    exp.LTE: _LessThanOrEqual,
    exp.GT: _GreaterThan,
    exp.GTE: _GreaterThanOrEqual,
}
_FLIPPED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.EQ: exp.EQ,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
}
_IN: Any = _In


@dataclass(frozen=True)
class ParsedDml:
    """A MERGE, UPDATE or DELETE as far as bounding it needs.

    Its kind, the names that mean its target, its condition, the one source relation its condition may compare the
    target with, and whether it must read the whole target anyway.
    """

    kind: str
    target_names: frozenset[str]
    condition: exp.Expr | None = field(repr=False)
    source: exp.Expr | None = field(repr=False)
    has_other_sources: bool
    unbounded: bool
    tree: exp.Expr | None = field(default=None, repr=False, compare=False)
    """The statement's sqlglot tree (DuckDB dialect), as parsed once here."""


def _target_names(table: exp.Table) -> frozenset[str]:
    names = {table.name.lower()}
    if table.alias:
        names = {table.alias.lower()}
    return frozenset(names)


def _reads_target(tree: exp.Expr, target: exp.Table, ref: TableRef) -> bool:
    """Return whether the statement names its target table anywhere but as the table it writes."""
    for table in tree.find_all(exp.Table):
        if table is target:
            continue
        parts = tuple(part.name.lower() for part in table.parts)
        if parts[-1] == ref.name and (len(parts) == 1 or parts[:-1] == ref.namespace):
            return True
    return False


def parse_dml(sql: str, ref: TableRef) -> ParsedDml:
    """Return the parsed of the MERGE, UPDATE or DELETE `sql` (DuckDB dialect) writing `ref`.

    Raises ValueError when `sql` is none of them.
    """
    tree = sqlglot.parse_one(sql, read="duckdb")
    if isinstance(tree, exp.Merge):
        target = tree.this
        whens = tree.args.get("whens")
        by_source = any(when.args.get("source") for when in (whens.expressions if whens else []))
        source = tree.args.get("using")
        on = tree.args.get("on")  # a MERGE ... USING (columns) has none: its rows are not bounded
        return ParsedDml(
            "MERGE",
            _target_names(target),
            on if isinstance(on, exp.Expr) else None,
            source,
            False,
            by_source or _reads_target(tree, target, ref),
            tree,
        )
    if isinstance(tree, exp.Update):
        target = tree.this
        from_ = tree.args.get("from_")
        joined = from_ is not None and bool(from_.this.args.get("joins")) if from_ else False
        where = tree.args.get("where")
        return ParsedDml(
            "UPDATE",
            _target_names(target),
            where.this if where else None,
            from_.this if from_ is not None and not joined else None,
            from_ is not None,
            _reads_target(tree, target, ref),
            tree,
        )
    if isinstance(tree, exp.Delete):
        target = tree.this
        using = tree.args.get("using") or []
        where = tree.args.get("where")
        return ParsedDml(
            "DELETE",
            _target_names(target),
            where.this if where else None,
            using[0] if len(using) == 1 else None,
            bool(using),
            _reads_target(tree, target, ref),
            tree,
        )
    raise ValueError("the statement is not a MERGE, UPDATE or DELETE")


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """Return the terms of the condition's top-level AND (the condition itself when it is no AND)."""
    node = condition.unnest()
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def target_column(node: exp.Expr, parsed: ParsedDml) -> str | None:
    """Return the target column `node` is (lower case), or None when it is not plainly one."""
    node = node.unnest()
    if not isinstance(node, exp.Column) or node.args.get("db") is not None:
        return None
    if node.table:
        return node.name.lower() if node.table.lower() in parsed.target_names else None
    return node.name.lower() if not parsed.has_other_sources and parsed.kind != "MERGE" else None


def _names_target(node: exp.Expr, parsed: ParsedDml) -> bool:
    for column in node.find_all(exp.Column):
        if column.table.lower() in parsed.target_names or (not column.table and target_column(column, parsed)):
            return True
    return False


def _literal(value: Any) -> Any:
    """Return `value` as pyiceberg takes a literal, or raise TypeError for a type it cannot compare."""
    if isinstance(value, bool | int | float | str | Decimal):
        return value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    raise TypeError("no literal")


def _values(connection: duckdb.DuckDBPyConnection, query: str) -> list[Any] | None:
    """Return the distinct non-null values the query's first column holds.

    None past MAX_VALUES or when DuckDB cannot run it.
    """
    try:
        rows = connection.sql(f"SELECT DISTINCT * FROM ({query}) WHERE 1 = 1 LIMIT {MAX_VALUES + 1}").fetchall()
        if len(rows) > MAX_VALUES:
            return None
        return [_literal(row[0]) for row in rows if row and row[0] is not None]
    except (duckdb.Error, TypeError):
        return None


def _bound(node: exp.Expr, parsed: ParsedDml, connection: duckdb.DuckDBPyConnection) -> BooleanExpression | None:
    """Return the row filter one conjunct implies on a target column, or None when it implies none this reads."""
    if isinstance(node, exp.Between):
        return _between_bound(node, parsed, connection)
    if isinstance(node, exp.In) and not node.args.get("unnest"):
        return _in_bound(node, parsed, connection)
    if type(node) in _PREDICATES:
        return _comparison_bound(node, parsed, connection)
    return None


def _between_bound(
    node: exp.Between, parsed: ParsedDml, connection: duckdb.DuckDBPyConnection
) -> BooleanExpression | None:
    """Return the range `column BETWEEN low AND high` bounds, when low and high read no column."""
    column = target_column(node.this, parsed)
    low, high = node.args.get("low"), node.args.get("high")
    if (
        column is None
        or low is None
        or high is None
        or list(low.find_all(exp.Column))
        or list(high.find_all(exp.Column))
    ):
        return None
    try:
        rows = connection.execute(f"SELECT {duckdb_text(low)}, {duckdb_text(high)}").fetchall()
        both = rows[0] if rows else None
        bounds = [_literal(value) for value in both] if both and None not in both else None
    except (duckdb.Error, TypeError):
        return None
    if bounds is None:
        return None
    return And(_PREDICATES[exp.GTE](column, bounds[0]), _PREDICATES[exp.LTE](column, bounds[1]))


def _in_bound(node: exp.In, parsed: ParsedDml, connection: duckdb.DuckDBPyConnection) -> BooleanExpression | None:
    """Return the values `column IN (...)` allows, from a list of constants or a query that reads no target."""
    column = target_column(node.this, parsed)
    if column is None:
        return None
    query = node.args.get("query")
    if query is not None:
        if _names_target(query, parsed):
            return None
        values = _values(connection, duckdb_text(query.this) if isinstance(query, exp.Subquery) else duckdb_text(query))
    else:
        if any(list(e.find_all(exp.Column)) for e in node.expressions):
            return None
        values = _values(connection, " UNION ALL ".join(f"SELECT {duckdb_text(e)}" for e in node.expressions))
    return None if values is None else _IN(column, values) if values else AlwaysFalse()


def _comparison_bound(
    node: exp.Expr, parsed: ParsedDml, connection: duckdb.DuckDBPyConnection
) -> BooleanExpression | None:
    """Return the bound a comparison of a target column with a value (either side) implies."""
    kind = type(node)
    for this, other, op in ((node.this, node.expression, kind), (node.expression, node.this, _FLIPPED[kind])):
        column = target_column(this, parsed)
        if column is None or _names_target(other, parsed):
            continue
        if not list(other.find_all(exp.Column)):
            values = _values(connection, f"SELECT {duckdb_text(other)}")
        elif op is exp.EQ and parsed.source is not None:
            values = _values(connection, f"SELECT {duckdb_text(other)} FROM {duckdb_text(parsed.source)}")
        else:
            continue
        if values is None:
            continue
        if op is exp.EQ:
            return _IN(column, values) if values else AlwaysFalse()
        return _PREDICATES[op](column, values[0]) if len(values) == 1 else None
    return None


def row_filter(
    parsed: ParsedDml, connection: duckdb.DuckDBPyConnection, known_columns: Sequence[str]
) -> BooleanExpression:
    """Return the row filter every target row the statement can change satisfies.

    ALWAYS_TRUE when nothing bounds it. The filter is made of the conjuncts that bound a column in `known_columns`;
    values are computed on `connection`, where the statement's sources are exposed.
    """
    if parsed.unbounded or parsed.condition is None:
        return AlwaysTrue()
    known = {name.lower() for name in known_columns}
    found: BooleanExpression = AlwaysTrue()
    for conjunct in conjuncts(parsed.condition):
        try:
            bound = _bound(conjunct, parsed, connection)
        except ValueError:  # a value pyiceberg cannot compare (NaN): the conjunct bounds nothing
            continue
        if bound is None:
            continue
        terms = [getattr(getattr(p, "term", None), "name", None) for p in _leaves(bound)]
        if all(term in known for term in terms if term is not None):
            found = And(found, bound)
    return found


def _leaves(expression: BooleanExpression) -> list[BooleanExpression]:
    if isinstance(expression, And):
        return _leaves(expression.left) + _leaves(expression.right)
    return [expression]
