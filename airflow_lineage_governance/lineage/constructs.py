"""Constructs whose lineage the engine does not trace.

Each is refused with a sentence naming it, before the query is read, rather than given lineage that would leave out a
column the output depends on.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from airflow_lineage_governance.lineage.errors import (
    UnnamedColumnError,
    UnplaceableSourceError,
    UnsupportedConstructError,
)
from airflow_lineage_governance.lineage.redact import redacted_expression
from airflow_lineage_governance.lineage.statement import CHECKED_CONSTRUCTS
from airflow_lineage_governance.lineage.subquery_names import listed_names, names_matter, positional
from airflow_lineage_governance.refs import TableRef

_IS_CHECKED: dict[type, bool] = {}
"""Each node class met so far, and whether it is one of CHECKED_CONSTRUCTS."""


def _construct(node: exp.Expr) -> tuple[str, str] | None:
    """Return (what the construct is, what to write instead) when `node` is one the engine refuses."""
    if isinstance(node, exp.Pivot):
        return (
            "a PIVOT or UNPIVOT of this form",
            "pivot one catalog table ON one column IN (a list of values) "
            "USING one aggregate (DuckDB names the columns of a PIVOT without IN after the values it reads), "
            "or unpivot columns INTO NAME ... VALUE one column",
        )
    if (
        isinstance(node, exp.Select)
        and node.args.get("windows")
        or (isinstance(node, exp.Window) and node.args.get("alias") is not None)
    ):
        return "a named WINDOW", "write the window's PARTITION BY and ORDER BY inside each OVER (...)"
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Star):
        return "a .* over a value that is not a table", "name each field with AS"
    return None


def inline_named_windows(query: exp.Query) -> None:
    """Write each `OVER w` of a SELECT with a `WINDOW w AS (...)` clause as the window it names.

    The window's PARTITION BY, ORDER BY and frame, with the reference's own ORDER BY or frame added; the clause is
    dropped: the same query, whose window columns the engine then reads. A reference it cannot place is left for
    refuse_untraceable.
    """
    for select in list(query.find_all(exp.Select)):
        definitions = {
            str(w.this.name).lower(): w for w in select.args.get("windows") or () if isinstance(w.this, exp.Identifier)
        }
        if not definitions or len(definitions) != len(select.args["windows"]):
            continue
        uses = [
            w
            for w in select.find_all(exp.Window)
            if w.args.get("alias") is not None and w.find_ancestor(exp.Select) is select and w.arg_key != "windows"
        ]
        if any(str(w.args["alias"].name).lower() not in definitions or w.args.get("partition_by") for w in uses):
            continue
        if any(isinstance(d.this, exp.Identifier) and d.args.get("alias") for d in definitions.values()):
            continue
        for use in uses:
            definition = definitions[str(use.args["alias"].name).lower()]
            if use.args.get("order") is not None and definition.args.get("order") is not None:
                break
            for key in ("partition_by", "order", "spec"):
                if not use.args.get(key) and definition.args.get(key):
                    use.set(
                        key,
                        definition.args[key].copy()
                        if key != "partition_by"
                        else [part.copy() for part in definition.args[key]],
                    )
            use.set("alias", None)
        else:
            select.set("windows", None)


def wrap_column_aliases(tables: list[exp.Table]) -> bool:
    """Write each table read with a column alias list as the derived table `(SELECT * FROM t) AS x (a, b)`.

    A column alias list (`FROM t AS x (a, b)`) renames t's first columns: the derived table has the same rows and names,
    and the engine reads its list. Returns whether any table was written so.
    """
    wrapped = False
    for table in tables:
        alias = table.args.get("alias")
        if not isinstance(alias, exp.TableAlias) or not alias.columns or not isinstance(table.this, exp.Identifier):
            continue
        if not isinstance(table.parent, (exp.From, exp.Join)):
            continue
        table.set("alias", None)
        inner = exp.select("*").from_(table.copy())
        table.replace(exp.Subquery(this=inner, alias=alias))
        wrapped = True
    return wrapped


def lateral_unnest(node: exp.Lateral) -> bool:
    """Return whether a LATERAL is one unwrap_lateral_unnest writes as a plain UNNEST (`LATERAL UNNEST(...)`).

    Args:
        node: a LATERAL of a query.

    Returns:
        Whether it is a LATERAL UNNEST, neither a LATERAL VIEW nor OUTER.
    """
    return isinstance(node.this, exp.Unnest) and not node.args.get("view") and not node.args.get("outer")


def unwrap_lateral_unnest(query: exp.Query) -> None:
    """Write each `LATERAL UNNEST(...) AS u (x)` as `UNNEST(...) AS u (x)`.

    DuckDB reads an UNNEST in FROM as lateral either way, and the engine reads the plain form.
    """
    for node in list(query.find_all(exp.Lateral)):
        unnest = node.this
        if not isinstance(unnest, exp.Unnest) or not lateral_unnest(node):
            continue
        alias = node.args.get("alias")
        if alias is not None and unnest.args.get("alias") is None:
            unnest.set("alias", alias.copy())
        node.replace(unnest)


def refuse_untraceable(
    query: exp.Query, target: TableRef, dialect: str, constructs: list[exp.Expr] | None = None
) -> None:
    """Raise UnsupportedConstructError naming the first construct of `query` the engine does not trace.

    And UnnamedColumnError for an unnamed output of a derived table, CTE or set-operation branch (whose name DuckDB
    makes up from the expression's text). `constructs` are the query's nodes of the classes looked at
    (statement.CHECKED_CONSTRUCTS) in the order of its walk, when the caller has them (its survey, the tree
    unchanged in shape since); else the query is walked for them.
    """
    for node in _checked_nodes(query) if constructs is None else constructs:
        if isinstance(node, exp.Lateral) and not isinstance(node.this, (exp.Query, exp.Subquery, exp.Unnest)):
            raise UnplaceableSourceError(
                target,
                f"{redacted_expression(node.this, dialect, 60)} is not a catalog table, so its columns "
                "cannot be placed",
                "read the data through an Iceberg table of the catalog",
            )
        found = _construct(node)
        if found is not None:
            what, advice = found
            raise UnsupportedConstructError(target, f"the query uses {what}, whose lineage is not traced", advice)
        if isinstance(node, exp.Select) and names_matter(node) and not positional(node):
            for projection in node.expressions[listed_names(node) :]:
                if isinstance(projection, (exp.Column, exp.Star)) or (
                    isinstance(projection, exp.Alias) and projection.alias
                ):
                    continue
                raise UnnamedColumnError(
                    target,
                    f"the output {redacted_expression(projection, dialect, 60)} of a subquery has no name "
                    "the lineage can follow",
                    "give it one with AS",
                )


def _checked_nodes(query: exp.Query) -> Iterator[exp.Expr]:
    """Yield the query's nodes of the classes refuse_untraceable looks at, in the order of its walk."""
    checked = _IS_CHECKED
    for node in query.walk():
        kind = type(node)
        looked_at = checked.get(kind)
        if looked_at is None:
            looked_at = checked[kind] = issubclass(kind, CHECKED_CONSTRUCTS)
        if looked_at:
            yield node


def refuse_whole_rows(qualified: exp.Expr, target: TableRef) -> None:
    """Raise UnsupportedConstructError when the qualified query reads a table's whole row as one value.

    As in `SELECT l FROM t AS l`: a struct of every column, which lineage would show with no inputs.
    """
    node = qualified.find(exp.TableColumn)
    if node is not None:
        raise UnsupportedConstructError(
            target,
            f"the query reads {node.name} as a whole row, whose lineage is not traced",
            f"select the columns of {node.name} it needs by name",
        )
