"""The forms of MERGE, UPDATE and DELETE the lineage engine reads.

They are checked on the parsed tree before any lineage is read: each form it does not read is refused with a sentence
naming it.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage.errors import UnsupportedStatementError

DML_NODES: dict[type[exp.Expr], StatementKind] = {
    exp.Merge: StatementKind.MERGE,
    exp.Update: StatementKind.UPDATE,
    exp.Delete: StatementKind.DELETE,
}
_STATEMENTS = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Command)
_ACTIONS = {"DELETE", "DO NOTHING"}


def dml_kind(node: exp.Expr) -> StatementKind | None:
    """Return the kind of a MERGE, UPDATE or DELETE node, None for any other node."""
    return DML_NODES.get(type(node))


def category(when: exp.When) -> str:
    """Return which rows a MERGE's WHEN clause acts on.

    `MATCHED`, `NOT MATCHED` (source rows no target row meets: BY TARGET) or `NOT MATCHED BY SOURCE` (target rows no
    source row meets).
    """
    if when.args.get("matched"):
        return "MATCHED"
    return "NOT MATCHED BY SOURCE" if when.args.get("source") else "NOT MATCHED"


def refuse_unread_forms(node: exp.Expr, kind: StatementKind, target: str | None) -> None:
    """Raise UnsupportedStatementError for a form of the MERGE, UPDATE or DELETE `node` the engine does not read.

    The error names the form and what to write instead. The forms: a RETURNING that reads a subquery, a statement nested
    in another, DELETE with ORDER BY or LIMIT, an assignment that is not `column = value`, an INSERT BY NAME or DEFAULT
    VALUES, an unknown action, and a WHEN clause DuckDB would never reach.
    """
    returning = node.args.get("returning")
    if isinstance(returning, exp.Expr) and returning.find(exp.Query) is not None:
        raise UnsupportedStatementError(
            target,
            f"the RETURNING of a {kind} reads a subquery, whose tables the lineage does not list",
            "return the changed rows' own columns",
        )
    for inner in node.walk():
        if inner is not node and isinstance(inner, _STATEMENTS) and not isinstance(inner.parent, exp.When):
            raise UnsupportedStatementError(
                target,
                f"the {kind} holds a {inner.key.upper()}, and lineage is read from one statement at a time",
                "move that statement to a task of its own",
            )
    if isinstance(node, exp.Delete) and (node.args.get("order") or node.args.get("limit")):
        raise UnsupportedStatementError(
            target, "a DELETE with ORDER BY or LIMIT is not read", "select the rows to delete in its WHERE"
        )
    if isinstance(node, exp.Update):
        if not node.expressions:
            raise UnsupportedStatementError(target, "an UPDATE without SET is not read", "list its assignments")
        for assignment in node.expressions:
            _check_assignment(assignment, target, star=False)
    if isinstance(node, exp.Merge):
        _check_merge(node, target)


def _check_assignment(assignment: exp.Expr, target: str | None, *, star: bool) -> None:
    if star and isinstance(assignment, exp.Star):
        return
    if isinstance(assignment, exp.EQ):
        left, right = assignment.this, assignment.expression
        if isinstance(left, exp.Column) and not isinstance(left.this, exp.Star):
            return
        if (
            isinstance(left, exp.Tuple)
            and isinstance(right, exp.Tuple)
            and len(left.expressions) == len(right.expressions)
            and all(isinstance(column, exp.Column) for column in left.expressions)
        ):
            return
    raise UnsupportedStatementError(
        target,
        "a SET assignment that is not column = value (or (a, b) = (x, y)) is not read",
        "write each column as its own assignment, column = value",
    )


def _check_merge(node: exp.Merge, target: str | None) -> None:
    if not isinstance(node.args.get("on"), exp.Expr) and not node.args.get("using_cond"):
        raise UnsupportedStatementError(target, "a MERGE without ON is not read", "write its ON condition")
    whens = node.args.get("whens")
    clauses = list(whens.expressions) if isinstance(whens, exp.Whens) else []
    if not clauses:
        raise UnsupportedStatementError(target, "a MERGE without WHEN clauses is not read", "write its WHEN clauses")
    unconditional: set[str] = set()
    for when in clauses:
        which = category(when)
        if which in unconditional:
            raise UnsupportedStatementError(
                target,
                f"a WHEN {which} clause follows an unconditional one, so it is never reached (DuckDB refuses it)",
                "give the earlier clause an AND condition, or drop the later one",
            )
        if when.args.get("condition") is None:
            unconditional.add(which)
        _check_action(when, which, target)
        _check_side(when, which, node, target)


def _check_side(when: exp.When, which: str, node: exp.Merge, target: str | None) -> None:
    """Raise UnsupportedStatementError when a clause reads the side its rows do not have, as DuckDB does.

    A NOT MATCHED clause the target's columns, a NOT MATCHED BY SOURCE clause the source's.
    """
    if which == "MATCHED":
        return
    missing = node.this if which == "NOT MATCHED" else node.args["using"]
    alias = missing.alias_or_name.lower()
    side = "target" if which == "NOT MATCHED" else "source"
    for column in when.find_all(exp.Column):
        if column.table.lower() == alias and column.find_ancestor(exp.Query) is None:
            raise UnsupportedStatementError(
                target,
                f"a WHEN {which} clause reads {alias}.{column.name}, and its rows have no {side} row",
                f"read only the {'source' if side == 'target' else 'target'}'s columns there",
            )


def _check_action(when: exp.When, which: str, target: str | None) -> None:
    then = when.args.get("then")
    if isinstance(then, exp.Var) and then.name.upper() in _ACTIONS:
        if which == "NOT MATCHED" and then.name.upper() == "DELETE":
            raise UnsupportedStatementError(
                target,
                "WHEN NOT MATCHED THEN DELETE has no target row to delete",
                "write it as WHEN MATCHED or WHEN NOT MATCHED BY SOURCE",
            )
        return
    if isinstance(then, exp.Update) and which != "NOT MATCHED":
        for assignment in then.expressions or ():
            _check_assignment(assignment, target, star=True)
        return
    if isinstance(then, exp.Insert) and which == "NOT MATCHED":
        columns, values = then.this, then.expression
        if isinstance(columns, exp.Star) and not values:
            return
        if columns is None and not values:
            return  # a bare INSERT: every source column by position, as INSERT *
        if isinstance(values, exp.Tuple) and (
            columns is None
            or (isinstance(columns, exp.Tuple) and all(isinstance(c, exp.Column) for c in columns.expressions))
        ):
            return
        raise UnsupportedStatementError(
            target,
            "an INSERT of a MERGE by name, by position or of DEFAULT VALUES is not read",
            "list the columns and their values: INSERT (a, b) VALUES (s.a, s.b)",
        )
    shown = then.sql(dialect="duckdb")[:40] if isinstance(then, exp.Expr) else "nothing"
    raise UnsupportedStatementError(
        target,
        f"a WHEN {which} clause that does {shown.split(' ')[0].upper()} is not read",
        "write UPDATE SET, INSERT, DELETE or DO NOTHING (UPDATE and DELETE only when a target row is there)",
    )
