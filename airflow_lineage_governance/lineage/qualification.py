"""Qualifying a query's columns by their tables with sqlglot's qualifier over the catalog's schema.

And the USING keys of joins resolved to the side DuckDB keeps.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.qualify_columns import qualify_columns, qualify_outputs
from sqlglot.optimizer.qualify_tables import qualify_tables
from sqlglot.optimizer.scope import Scope
from sqlglot.schema import MappingSchema

from airflow_lineage_governance.lineage.errors import LineageError, UnknownColumnError
from airflow_lineage_governance.lineage.schema import Schema, engine_key
from airflow_lineage_governance.lineage.statement import Survey, quiet_sqlglot, table_ref
from airflow_lineage_governance.refs import TableRef


def mark_using(coalesces: list[exp.Coalesce], using_joins: list[exp.Join]) -> None:
    """Mark the COALESCEs the statement itself wrote, and each USING join with its key names.

    Done before the qualifier writes COALESCEs of its own for the USING keys.
    """
    for node in coalesces:
        node.meta["written"] = True
    for join in using_joins:
        join.meta["using"] = {identifier.name.lower() for identifier in join.args["using"]}


def resolve_using_keys(query: exp.Expr) -> None:
    """Replace the COALESCE that the qualifier writes for a USING key with the side the join keeps.

    The left for INNER and LEFT joins, the right for RIGHT joins; a FULL join keeps both.
    """
    for coalesce in list(query.find_all(exp.Coalesce)):
        if coalesce.meta.get("written") or coalesce.find_ancestor(exp.Join):
            continue
        args = [coalesce.this, *coalesce.expressions]
        select = coalesce.find_ancestor(exp.Select)
        if select is None or not all(isinstance(arg, exp.Column) for arg in args):
            continue
        name = args[0].name.lower()
        joins = [join for join in select.args.get("joins") or () if name in join.meta.get("using", ())]
        if not joins or any((join.side or "").upper() == "FULL" for join in joins):
            continue
        keep = args[-1] if (joins[-1].side or "").upper() == "RIGHT" else args[0]
        coalesce.replace(keep.copy())


def alias_tables(found: Survey) -> bool:
    """Give each table of a query without an alias its name as alias, when that is all sqlglot's `qualify_tables` does.

    That is when every table is a plain name in lower case, read in a FROM or JOIN, every parenthesized query in
    a FROM or JOIN has an alias and none is nested in another's parentheses or wraps a join, no source is a
    table-making function (UNNEST, VALUES, LATERAL, ...), and no column names a table by its namespace. Then
    `qualify_tables` would only name those tables' aliases (its scopes are left out with it). Otherwise nothing
    changes.

    Args:
        found: the survey of the query, taken after the last change to its tables and subqueries.

    Returns:
        Whether the tables were named (the qualifier's table step is then done); False when the query is not such a
        query, and nothing was changed.
    """
    if found.namespaced_columns:
        return False
    for node in found.derived:
        if not isinstance(node, exp.Subquery) or node.args.get("pivots"):
            return False
        if isinstance(node.this, (exp.Subquery, exp.Table)) or isinstance(node.parent, exp.Subquery):
            return False
        if isinstance(node.parent, (exp.From, exp.Join)) and not node.alias:
            return False
    unnamed: list[exp.Table] = []
    for table in found.tables:
        if not isinstance(table.this, exp.Identifier) or not isinstance(table.parent, (exp.From, exp.Join)):
            return False
        if table.args.get("pivots") or table.args.get("joins"):
            return False
        alias = table.args.get("alias")
        if alias is None:
            name = table.name
            if not exp.SAFE_IDENTIFIER_RE.match(name) or name != name.lower():
                return False
            unnamed.append(table)
        elif not alias.name or alias.columns:
            return False
    for table in unnamed:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
    return True


def outputs_unnamed_only(
    query: exp.Query, found: Survey, placed: list[tuple[exp.Table, TableRef]], schema: Schema, dialect: str
) -> bool:
    """Return whether naming the query's outputs is all sqlglot's `qualify_columns` would do to it.

    That is for one SELECT over catalog tables, each under an alias of its own (after alias_tables), with no
    subquery, CTE, shorthand, USING or NATURAL join, named window, star, ORDER BY, DISTINCT ON or position in its
    GROUP BY, and whose every column reference names its table's alias and a column of that table, in a dialect
    whose qualifier has no pseudo-columns, CTE column pushdown or type annotation of its own. Every other step of
    `qualify_columns` then leaves the query as it is.

    Args:
        query: the query, its tables named (alias_tables done) and placed.
        found: the survey of the query, taken after the last change to its tables and subqueries.
        placed: each of the query's tables with the catalog table it reads.
        schema: the schema set, its names folded to lower case.
        dialect: the dialect the statement is written in.

    Returns:
        Whether the query is such a query; nothing is changed.
    """
    if not isinstance(query, exp.Select) or found.queries != 1 or found.derived or found.ctes or found.shorthands:
        return False
    if found.using_joins or found.named_windows or found.namespaced_columns or len(placed) != len(found.tables):
        return False
    language = Dialect.get_or_raise(dialect)
    if language.PSEUDOCOLUMNS or language.PREFER_CTE_ALIAS_COLUMN or language.ANNOTATE_ALL_SCOPES:
        return False
    distinct = query.args.get("distinct")
    if query.args.get("order") or (distinct is not None and distinct.args.get("on")):
        return False
    if any(join.method for join in query.args.get("joins") or ()):
        return False
    group = query.args.get("group")
    if group is not None and any(isinstance(key, exp.Literal) and key.is_int for key in group.expressions):
        return False
    if any(projection.is_star for projection in query.selects):
        return False
    sources: dict[str, dict[str, str]] = {}
    for table, ref in placed:
        name = table.alias
        if not name or name in sources or ref not in schema:
            return False
        sources[name] = schema[ref]
    for column in found.columns:
        columns = sources.get(column.table)
        if columns is None or not isinstance(column.this, exp.Identifier) or column.name not in columns:
            return False
    return True


def qualifier_schema(schema: Schema, dialect: str) -> MappingSchema:
    """Return the schema set as sqlglot's qualifier reads it: each table under its engine key (engine_key).

    Args:
        schema: the schema set, its names folded to lower case.
        dialect: the dialect the statement is written in.

    Returns:
        sqlglot's schema of the set; the qualifier only reads it, so one serves every statement over the set.
    """
    nested: dict[str, object] = {}
    for ref, columns in schema.items():
        db, name = engine_key(ref)
        tables = nested.setdefault(db, {})
        assert isinstance(tables, dict)
        tables[name] = columns
    # The schema's names are already folded to lower case, as DuckDB folds them: no second normalization.
    return MappingSchema(nested, dialect=dialect, normalize=False)


def qualified_query(
    query: exp.Query,
    schema: Schema,
    target: TableRef,
    original: exp.Expr | str,
    dialect: str,
    mapping: MappingSchema | None = None,
    *,
    lower_case: bool = False,
    aliased: bool = False,
    outputs_only: bool = False,
) -> exp.Query:
    """Return `query` with every column qualified by its table, as sqlglot's qualifier reads it over `schema`.

    `mapping` is `qualifier_schema(schema, dialect)` when the caller has it already. `lower_case` says that every
    name in the query is in lower case already: the qualifier's first step, which folds the names' case, would
    change nothing and is left out (its other steps run as `qualify` runs them). `aliased` says that alias_tables
    did the qualifier's table step on the query already: it is left out too, with `lower_case` only.
    `outputs_only` says that naming the outputs is all the column step would do (outputs_unnamed_only), with
    `aliased` only: that alone is done. Raises
    LineageError (UnknownColumnError naming the table and column) when it cannot be read.
    """
    try:
        if mapping is None:
            mapping = qualifier_schema(schema, dialect)
        if lower_case and aliased and outputs_only:
            qualify_outputs(Scope(query), dialect=Dialect.get_or_raise(dialect))
            return query
        if lower_case:
            tables = query if aliased else qualify_tables(query, dialect=Dialect.get_or_raise(dialect))
            return qualify_columns(tables, mapping, expand_alias_refs=True, expand_stars=True)
        return qualify(
            query,
            schema=mapping,
            dialect=dialect,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
    except OptimizeError as error:
        message = str(error)
        if message.startswith("Unknown column:"):
            raise unknown_column_error(message.split(":", 1)[1].strip(), original, schema, target, dialect) from None
        raise LineageError(
            target, f"the query cannot be read against the catalog ({message})", "check its table and column names"
        ) from None
    except SqlglotError as error:
        raise LineageError(
            target, f"the query cannot be read against the catalog ({error})", "check its table and column names"
        ) from None
    except (AssertionError, AttributeError, KeyError, TypeError, ValueError):
        # sqlglot's qualifier asserts its own assumptions (a positional ORDER BY over a struct's .*, ...)
        raise LineageError(
            target,
            "the query uses a construct the lineage engine cannot qualify",
            "simplify it (name each output column with AS, avoid .* over expressions)",
        ) from None


def unknown_column_error(
    name: str, original: exp.Expr | str, schema: Schema, target: TableRef, dialect: str
) -> LineageError:
    """Return the error naming where the query's unknown column `name` was looked for."""
    if isinstance(original, str):  # the engine changed the only tree: read the text again, on this error only
        with quiet_sqlglot():
            original = sqlglot.parse_one(original, read=dialect)
    aliases = {t.alias_or_name.lower(): t for t in original.find_all(exp.Table)}
    ctes = {c.alias_or_name.lower() for c in original.find_all(exp.CTE)}
    derived = {s.alias_or_name.lower() for s in original.find_all(exp.Subquery) if s.alias}
    for column in original.find_all(exp.Column):
        if column.name.lower() != name.lower() or not column.table:
            continue
        qualifier = column.table.lower()
        table = aliases.get(qualifier)
        if qualifier in derived:
            return UnknownColumnError(
                target, f"the subquery {qualifier} has no column {name}", "check the spelling against its SELECT list"
            )
        if qualifier in ctes:
            return UnknownColumnError(
                target, f"the CTE {qualifier} has no column {name}", "check the spelling against its SELECT list"
            )
        if table is not None and isinstance(table.this, exp.Identifier):
            ref = table_ref(table) or next((r for r in schema if r.name == table.name.lower()), None)
            if ref is not None and name.lower() not in schema.get(ref, {name.lower(): ""}):
                return UnknownColumnError(
                    target, f"{ref} has no column {name}", "check the spelling against the catalog"
                )
    return UnknownColumnError(
        target, f"no table the query reads has a column {name}", "check the spelling against the catalog"
    )
