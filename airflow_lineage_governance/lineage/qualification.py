"""Qualifying a query's columns by their tables with sqlglot's qualifier over the catalog's schema.

And the USING keys of joins resolved to the side DuckDB keeps.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.qualify_columns import qualify_columns, qualify_outputs
from sqlglot.optimizer.qualify_tables import qualify_tables
from sqlglot.optimizer.scope import Scope, traverse_scope
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


def name_outputs(
    query: exp.Query, found: Survey, placed: list[tuple[exp.Table, TableRef]], schema: Schema, dialect: str
) -> bool:
    """Name the query's outputs, where that is all sqlglot's `qualify_columns` would do to it.

    That is for a query of SELECTs over catalog tables, each under an alias of its own (after alias_tables), and
    over CTEs and aliased subqueries without column lists whose outputs all have names, with no set operation,
    recursive CTE, shorthand, USING or NATURAL (or other method's) join, named window, star, ORDER BY, DISTINCT ON,
    position in a GROUP BY or clause other than FROM, JOIN, WHERE, GROUP BY, HAVING, QUALIFY, LIMIT and OFFSET,
    whose every column reference names a source of its own SELECT and a column that source has, in a dialect whose
    qualifier has no pseudo-columns, CTE column pushdown or type annotation of its own. Every other step of
    `qualify_columns` then leaves the query as it is; its `qualify_outputs` names each SELECT's outputs.

    Args:
        query: the query, its tables named (alias_tables done) and placed.
        found: the survey of the query, taken after the last change to its tables and subqueries.
        placed: each of the query's catalog tables with the catalog table it reads.
        schema: the schema set, its names folded to lower case.
        dialect: the dialect the statement is written in.

    Returns:
        Whether the outputs were named (the qualifier's column step is then done); False when the query is not
        such a query, and nothing was changed.
    """
    if found.shorthands or found.using_joins or found.named_windows or found.namespaced_columns:
        return False
    if any(not isinstance(node, exp.Subquery) for node in found.derived):
        return False
    with_ = query.args.get("with_")
    if with_ is not None and with_.recursive:
        return False
    language = _dialect(dialect)
    if language.PSEUDOCOLUMNS or language.PREFER_CTE_ALIAS_COLUMN or language.ANNOTATE_ALL_SCOPES:
        return False
    if any(not isinstance(column.this, exp.Identifier) or not column.table for column in found.columns):
        return False
    tables = {id(table): schema.get(ref) for table, ref in placed}
    scopes = _one_scope(query, found, placed, tables) if found.queries == 1 else _scopes(query, found, tables)
    if scopes is None:
        return False
    for scope in scopes:
        qualify_outputs(scope, dialect=language)
    return True


@lru_cache(maxsize=8)
def _dialect(name: str) -> Dialect:
    """Return the dialect of a name, made once (a dialect only holds its settings)."""
    return Dialect.get_or_raise(name)


def _one_scope(
    query: exp.Query,
    found: Survey,
    placed: list[tuple[exp.Table, TableRef]],
    tables: dict[int, dict[str, str] | None],
) -> list[Scope] | None:
    """Return the one scope of a query without subqueries when each column reads a column of its table, else None."""
    if not isinstance(query, exp.Select) or len(placed) != len(found.tables) or not _plain_clauses(query):
        return None
    sources = {table.alias_or_name: tables[id(table)] for table, _ in placed}
    for column in found.columns:
        columns = sources.get(column.table)
        if columns is None or column.name not in columns:
            return None
    return [Scope(query)]


def _scopes(query: exp.Query, found: Survey, tables: dict[int, dict[str, str] | None]) -> list[Scope] | None:
    """Return the query's scopes when each is a plain SELECT whose columns read named columns of its own sources."""
    try:
        scopes = traverse_scope(query)
    except (SqlglotError, AssertionError, AttributeError, KeyError, TypeError, ValueError):
        return None  # the whole step meets the same, and says why
    outputs: dict[int, set[str]] = {}
    read: set[int] = set()
    for scope in scopes:
        select = scope.expression
        if not isinstance(select, exp.Select) or scope.outer_columns or not _plain_clauses(select):
            return None
        for column in scope.columns:
            source = scope.sources.get(column.table)
            columns = outputs.get(id(source)) if isinstance(source, Scope) else tables.get(id(source))
            if columns is None or column.name not in columns:
                return None
            read.add(id(column))
        # An outer SELECT reads this one's outputs by the names they have: each must have one already.
        names = {projection.output_name for projection in select.selects}
        if "" in names and scope is not scopes[-1]:
            return None
        outputs[id(scope)] = names
    return scopes if len(read) == len(found.columns) else None


_PLAIN_CLAUSES = frozenset(("expressions", "from_", "joins", "where", "group", "having", "qualify", "limit", "offset"))
"""The clauses of a SELECT whose outputs name_outputs may name (with a WITH and a plain DISTINCT)."""


def _plain_clauses(select: exp.Select) -> bool:
    """Return whether a SELECT has only plain clauses: no star, GROUP BY position, join method, name of two sources."""
    for key, value in select.args.items():
        if value is not None and value != [] and key not in _PLAIN_CLAUSES and key not in ("with_", "distinct"):
            return False
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on"):
        return False
    if any(join.method for join in select.args.get("joins") or ()):
        return False
    group = select.args.get("group")
    if group is not None and any(isinstance(key, exp.Literal) and key.is_int for key in group.expressions):
        return False
    if any(projection.is_star for projection in select.selects):
        return False
    # Two sources of one name: the whole step refuses the query.
    from_ = select.args.get("from_")
    names = [from_.this.alias_or_name] if from_ is not None else []
    names.extend(join.this.alias_or_name for join in select.args.get("joins") or ())
    return len(set(names)) == len(names)


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
) -> exp.Query:
    """Return `query` with every column qualified by its table, as sqlglot's qualifier reads it over `schema`.

    `mapping` is `qualifier_schema(schema, dialect)` when the caller has it already. `lower_case` says that every
    name in the query is in lower case already: the qualifier's first step, which folds the names' case, would
    change nothing and is left out (its other steps run as `qualify` runs them). `aliased` says that alias_tables
    did the qualifier's table step on the query already: it is left out too, with `lower_case` only. Raises
    LineageError (UnknownColumnError naming the table and column) when it cannot be read.
    """
    try:
        if mapping is None:
            mapping = qualifier_schema(schema, dialect)
        if lower_case:
            tables = query if aliased else qualify_tables(query, dialect=_dialect(dialect))
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
