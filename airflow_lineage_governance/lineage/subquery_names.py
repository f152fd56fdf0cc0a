"""Name the outputs of a query's derived tables, CTEs and set-operation branches as DuckDB does.

Only outputs the outer query reads by name are named: DuckDB's own names, asked of DuckDB by binding the part of
the query that holds them, are written on the outputs as aliases for the engine to read.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from airflow_lineage_governance.lineage.binding import BoundQuery
from airflow_lineage_governance.lineage.errors import BindError
from airflow_lineage_governance.lineage.naming import WRITTEN_NAME
from airflow_lineage_governance.lineage.schema import Schema, engine_key, name_for_duckdb

Bind = Callable[[str], BoundQuery]
"""Binds one SELECT over the catalog's schema set and returns its output names (binding.Binder.bind)."""


def names_matter(select: exp.Select) -> bool:
    """Return whether the outer query reads the SELECT's outputs by name.

    Args:
        select: a SELECT of a query.

    Returns:
        True for a derived table, a CTE, a branch of a set operation BY NAME, or the first branch of a set
        operation that is one of those (a later branch is read by position).
    """
    node: exp.Expr = select
    parent = select.parent
    while isinstance(parent, (exp.Subquery, exp.SetOperation)):
        if isinstance(parent, exp.SetOperation) and parent.args.get("by_name"):
            return True
        if isinstance(parent.parent, exp.Create):
            break
        if isinstance(parent, exp.Subquery) and (parent.alias or isinstance(parent.parent, (exp.From, exp.Join))):
            return True
        if isinstance(parent, exp.SetOperation) and node is not parent.this:
            return False  # a later branch is read by position
        node, parent = parent, parent.parent
    return isinstance(parent, exp.CTE) or (
        isinstance(parent, exp.Subquery) and isinstance(parent.parent, (exp.From, exp.Join))
    )


def by_name_branch(select: exp.Select) -> bool:
    """Return whether the SELECT is a branch of a set operation BY NAME.

    Args:
        select: a SELECT of a query.

    Returns:
        True when a set operation BY NAME matches the SELECT's outputs by name.
    """
    parent = select.parent
    while isinstance(parent, (exp.Subquery, exp.SetOperation)):
        if isinstance(parent, exp.SetOperation) and parent.args.get("by_name"):
            return True
        parent = parent.parent
    return False


def positional(select: exp.Select) -> bool:
    """Return whether the lineage may read the SELECT's unnamed outputs by position.

    An outer query naming such an output by DuckDB's name for it is refused as an unknown column; the
    statement's own output names are DuckDB's.

    Args:
        select: a SELECT of a query.

    Returns:
        True when it is no branch of a set operation BY NAME, and no output of it is called like the placeholder
        the qualifier gives an unnamed one (`_col_0`).
    """
    if by_name_branch(select):
        return False
    return not any(projection.alias_or_name.lower().startswith("_col_") for projection in select.expressions)


def listed_names(select: exp.Select) -> int:
    """Return how many of the SELECT's outputs a column list names.

    Args:
        select: a SELECT of a query.

    Returns:
        The length of the column list of `(SELECT ...) AS s (a, b)` or `WITH s (a, b) AS (SELECT ...)` (2 there),
        whatever the SELECT calls those outputs; 0 without one.
    """
    node: exp.Expr = select
    parent = select.parent
    while isinstance(parent, exp.SetOperation) and node is parent.this:  # a first branch names the operation
        node, parent = parent, parent.parent
    if isinstance(parent, (exp.Subquery, exp.CTE)):
        alias = parent.args.get("alias")
        if isinstance(alias, exp.TableAlias):
            return len(alias.columns)
    return 0


def unnamed(projection: exp.Expr) -> bool:
    """Return whether an output has no name of its own (DuckDB names it after its expression's text).

    Args:
        projection: one output of a SELECT.

    Returns:
        True for an expression that is no column, star or aliased expression.
    """
    if isinstance(projection, (exp.Column, exp.Star)):
        return False
    return not (isinstance(projection, exp.Alias) and projection.alias)


def duckdb_text(node: exp.Expr, schema: Schema, place: exp.Expr | None = None) -> str | None:
    """Return the SQL of a part of a query the engine reads, as DuckDB binds it on its own.

    Args:
        node: a query (or a part of one) whose tables the engine named by their engine keys.
        schema: the catalog's schema set.
        place: the node of the query where `node` stands (`node` itself when not given): it decides which CTEs
            `node` can see.

    Returns:
        The part's SQL with its tables named as DuckDB finds them and the CTEs it can see written before it, or
        None when those CTEs cannot be written so (a WITH RECURSIVE, or the part is inside a CTE's own query).
    """
    refs = {engine_key(ref): ref for ref in schema}
    levels: list[list[exp.CTE]] = []
    path: list[exp.Expr] = []
    current: exp.Expr | None = node if place is None else place
    while current is not None:
        with_ = current.args.get("with_") if isinstance(current, exp.Query) else None
        if isinstance(with_, exp.With) and current is not node:
            if with_.args.get("recursive"):
                return None
            inside = path[-2] if len(path) > 1 and path[-1] is with_ else None
            level = []
            for cte in with_.expressions:
                if cte is inside:
                    break
                level.append(cte)
            levels.append(level)
        path.append(current)
        current = current.parent
    ctes = [cte for level in reversed(levels) for cte in level]
    copies = [node.copy(), *(cte.copy() for cte in ctes)]
    for copy in copies:
        for table in copy.find_all(exp.Table):
            ref = refs.get((table.db, table.name)) if table.db and not table.catalog else None
            if ref is not None:
                name_for_duckdb(table, ref)
    query, *written = copies
    text = query.sql(dialect="duckdb")
    if written:
        text = "WITH " + ", ".join(cte.sql(dialect="duckdb") for cte in written) + " " + text
    return text


def _bound_names(select: exp.Select, schema: Schema, bind: Bind) -> list[str] | None:
    """Return the names DuckDB gives the SELECT's outputs where the outer query reads them.

    A derived table's names are deduplicated. None is returned when DuckDB cannot bind the SELECT on its own (it
    reads an outer query's columns).
    """
    text = duckdb_text(select, schema)
    if text is None:
        return None
    if not by_name_branch(select):
        text = f"SELECT * FROM ({text}) AS named"
    try:
        return list(bind(text).names)
    except BindError:
        return None


def _alias(projection: exp.Expr, name: str) -> None:
    """Name an output `name` (the node itself kept: the engine may hold its parts by identity)."""
    identifier = exp.to_identifier(name, quoted=True)
    identifier.meta[WRITTEN_NAME] = name
    if isinstance(projection, exp.Alias):
        projection.set("alias", identifier)
        return
    alias = exp.Alias(alias=identifier)
    projection.replace(alias)
    alias.set("this", projection)


def name_subquery_outputs(
    query: exp.Query, schema: Schema, bind: Bind, selects: list[exp.Select] | None = None
) -> tuple[bool, bool]:
    """Write DuckDB's names on the outputs the SELECTs read by name leave to DuckDB.

    Those are an unnamed output, and outputs that share a name (a derived table's or CTE's later ones are `x_1`,
    `x_2`, ... there). A SELECT holding a star or COLUMNS(...) keeps its outputs as they are (its outputs are not
    one per expression; name_expanded_outputs names them once the qualifier has written the star out), and so does
    one DuckDB cannot bind on its own; refuse_untraceable refuses an unnamed output left.

    Args:
        query: a query whose tables the engine named by their engine keys (a tree the engine owns).
        schema: the catalog's schema set.
        bind: binds a SELECT over the schema set.
        selects: the query's SELECTs in the order of a breadth-first walk, when the caller has them from a walk of
            the query as it is (which found no COLUMNS(...) in it); else they are found here.

    Returns:
        Whether a SELECT the outer query reads by name holds a star (name_expanded_outputs is then to be called),
        and whether any output was named.
    """
    return _name_outputs(query, schema, bind, (selects, False) if selects is not None else None)


def name_expanded_outputs(query: exp.Query, schema: Schema, bind: Bind) -> bool:
    """Write DuckDB's names on the outputs that share a name in a derived table or CTE of a qualified query.

    The qualified query has its stars written out as columns.

    Args:
        query: the qualified query (a tree the engine owns).
        schema: the catalog's schema set.
        bind: binds a SELECT over the schema set.

    Returns:
        Whether any output was named (an outer star over it is then to be written out again).
    """
    return _name_outputs(query, schema, bind)[1]


def selects_and_columns(query: exp.Expr) -> tuple[list[exp.Select], bool]:
    """Return the SELECTs of a query in the order of a breadth-first walk, and whether it holds a COLUMNS(...).

    Args:
        query: a query.

    Returns:
        Its SELECTs (the query itself first when it is one), and whether any node of it is a COLUMNS(...).
    """
    selects: list[exp.Select] = []
    columns = False
    for node in query.walk():
        if isinstance(node, exp.Select):
            selects.append(node)
        elif isinstance(node, exp.Columns):
            columns = True
    return selects, columns


def _name_outputs(
    query: exp.Query, schema: Schema, bind: Bind, found: tuple[list[exp.Select], bool] | None = None
) -> tuple[bool, bool]:
    """Name the outputs of the query's SELECTs read by name as DuckDB does.

    `found` is selects_and_columns(query) when the caller has it. Returns whether one of them holds a star, and
    whether any output was named.
    """
    starred = named = False
    selects, columns = found if found is not None else selects_and_columns(query)
    for select in selects:
        if not names_matter(select):
            continue
        projections = list(select.expressions)
        if any(p.is_star or (columns and p.find(exp.Columns)) for p in projections):
            starred = True
            continue
        by_name = by_name_branch(select)
        if not by_name and not positional(select):
            continue
        first = listed_names(select)
        seen = [projection.alias_or_name.lower() for projection in projections]
        duplicates = not by_name and len(set(seen)) != len(seen)
        if not duplicates and not any(unnamed(projection) for projection in projections[first:]):
            continue
        names = _bound_names(select, schema, bind)
        if names is None or len(names) != len(projections):
            continue
        for position, (projection, name, was) in enumerate(zip(projections, names, seen, strict=True)):
            if position >= first and (unnamed(projection) or name.lower() != was):
                _alias(projection, name)
                named = True
    return starred, named
