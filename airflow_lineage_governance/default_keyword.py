"""The keyword DEFAULT as a value of a SET or an INSERT.

sqlglot reads it as a column named DEFAULT, and writes it back quoted ("DEFAULT", a column) unless told.
"""

from __future__ import annotations

from sqlglot import exp


def is_default_keyword(node: exp.Expr) -> bool:
    """Return whether `node` is the keyword DEFAULT as a value.

    sqlglot reads it as a column; a column quoted "default" is not the keyword.
    """
    if isinstance(node, exp.Var):
        return node.name.upper() == "DEFAULT"
    return (
        isinstance(node, exp.Column)
        and not node.table
        and isinstance(node.this, exp.Identifier)
        and not node.this.quoted
        and node.name.upper() == "DEFAULT"
    )


def written_defaults(tree: exp.Expr) -> list[exp.Expr]:
    """Return the DEFAULT keywords a MERGE's or UPDATE's SET values and a MERGE's INSERT values write."""
    values: list[exp.Expr] = []
    for update in tree.find_all(exp.Update):  # the tree itself among them when it is an UPDATE
        for assignment in update.expressions:
            if isinstance(assignment, exp.EQ):
                value = assignment.expression  # (a, b) = (DEFAULT, x) writes each of its values
                values += value.expressions if isinstance(value, exp.Tuple) else [value]
    for insert in tree.find_all(exp.Insert):
        if isinstance(insert.expression, exp.Tuple):
            values += insert.expression.expressions
    return [value for value in values if is_default_keyword(value)]


def with_default_keywords(tree: exp.Expr) -> exp.Expr:
    """Return `tree` with each DEFAULT its SET and INSERT values write as the keyword, so it renders as DEFAULT.

    Args:
        tree: a parsed MERGE or UPDATE; changed in place.

    Returns:
        The same tree.
    """
    for default in written_defaults(tree):
        default.replace(exp.var("DEFAULT"))
    return tree
