"""Constructs whose lineage the engine does not trace: each is refused with a sentence naming it, before the
query is read, rather than given lineage that would leave out a column the output depends on."""

from __future__ import annotations

from sqlglot import exp

from airflow_lineage_governance.lineage.errors import (
    UnnamedColumnError,
    UnplaceableSourceError,
    UnsupportedConstructError,
)
from airflow_lineage_governance.lineage.redact import redacted_expression
from airflow_lineage_governance.refs import TableRef


def _construct(node: exp.Expr) -> tuple[str, str] | None:
    """Returns (what the construct is, what to write instead) when `node` is one the engine refuses."""
    if isinstance(node, exp.Pivot):
        return "PIVOT or UNPIVOT", "write the pivot with CASE (or FILTER) aggregates, one aliased column each"
    if isinstance(node, exp.Select) and node.args.get("windows") or (
            isinstance(node, exp.Window) and node.args.get("alias") is not None):
        return "a named WINDOW", "write the window's PARTITION BY and ORDER BY inside each OVER (...)"
    if isinstance(node, exp.Columns):
        return "COLUMNS(...)", "name the columns"
    if isinstance(node, exp.SetOperation) and node.args.get("by_name"):
        return "UNION ... BY NAME", "list the columns of each branch in the same order and drop BY NAME"
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Star):
        return "a .* over a value that is not a table", "name each field with AS"
    return None


def refuse_untraceable(query: exp.Query, target: TableRef, dialect: str) -> None:
    """Raises UnsupportedConstructError naming the first construct of `query` the engine does not trace, and
    UnnamedColumnError for an unnamed output of a derived table, CTE or set-operation branch (whose name DuckDB
    makes up from the expression's text)."""
    for node in query.walk():
        if isinstance(node, exp.Lateral) and not isinstance(node.this, (exp.Query, exp.Subquery, exp.Unnest)):
            raise UnplaceableSourceError(
                target, f"{redacted_expression(node.this, dialect, 60)} is not a catalog table, so its columns "
                "cannot be placed", "read the data through an Iceberg table of the catalog")
        found = _construct(node)
        if found is not None:
            what, advice = found
            raise UnsupportedConstructError(target, f"the query uses {what}, whose lineage is not traced", advice)
        if isinstance(node, exp.Select) and _names_matter(node):
            for projection in node.expressions:
                if isinstance(projection, (exp.Column, exp.Star)) or (
                        isinstance(projection, exp.Alias) and projection.alias):
                    continue
                raise UnnamedColumnError(
                    target, f"the output {redacted_expression(projection, dialect, 60)} of a subquery has no name "
                    "the lineage can follow", "give it one with AS")


def _names_matter(select: exp.Select) -> bool:
    """Returns whether the outer query reads this SELECT's outputs by name: a derived table, a CTE, a branch of a
    set operation."""
    parent = select.parent
    while isinstance(parent, (exp.Subquery, exp.SetOperation)) and not isinstance(parent.parent, exp.Create):
        if isinstance(parent, exp.Subquery) and (parent.alias or isinstance(parent.parent, (exp.From, exp.Join))):
            return True
        if isinstance(parent, exp.SetOperation):
            return True
        parent = parent.parent
    return isinstance(parent, exp.CTE) or (isinstance(parent, exp.Subquery)
                                           and isinstance(parent.parent, (exp.From, exp.Join)))


def refuse_whole_rows(qualified: exp.Expr, target: TableRef) -> None:
    """Raises UnsupportedConstructError when the qualified query reads a table's whole row as one value (`SELECT
    l FROM t AS l`): a struct of every column, which lineage would show with no inputs."""
    node = qualified.find(exp.TableColumn)
    if node is not None:
        raise UnsupportedConstructError(
            target, f"the query reads {node.name} as a whole row, whose lineage is not traced",
            f"select the columns of {node.name} it needs by name")
