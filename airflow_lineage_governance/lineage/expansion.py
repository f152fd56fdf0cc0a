"""DuckDB's shorthands written out as the queries they stand for, for the engine to read.

COLUMNS(...) as the columns DuckDB expands it to (DuckDB binds the bare expression over empty stand-ins of the SELECT's
tables), struct references by DuckDB's name rules, and PIVOT/UNPIVOT of a catalog table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import duckdb
from sqlglot import exp

from airflow_lineage_governance.lineage.binding import duckdb_type
from airflow_lineage_governance.lineage.errors import LineageError, UnsupportedConstructError
from airflow_lineage_governance.lineage.subquery_names import Bind, duckdb_text, unnamed
from airflow_lineage_governance.refs import TableRef


def expand_columns(
    query: exp.Query,
    placed: Sequence[tuple[exp.Table, TableRef]],
    schema: dict[TableRef, dict[str, str]],
    bind: Bind,
    target: TableRef,
) -> None:
    """Write every COLUMNS(...) of `query` (a tree the engine owns) as the columns DuckDB matches.

    An output becomes one output per column, a row clause the AND of one copy per column. Raises
    UnsupportedConstructError for a COLUMNS over a source that is not a catalog table, an unpacked `*COLUMNS`, or two in
    one expression.
    """
    tables = {id(table): ref for table, ref in placed}
    for select in list(query.find_all(exp.Select)):
        uses = [node for node in select.find_all(exp.Columns) if node.find_ancestor(exp.Select) is select]
        if not uses:
            continue
        sources = _sources(select, tables, schema, bind, target)
        for node in uses:
            if node.args.get("unpack"):
                raise UnsupportedConstructError(
                    target, "the query uses *COLUMNS(...), whose lineage is not traced", "name the columns"
                )
        for projection in list(select.expressions):
            found = list(projection.find_all(exp.Columns))
            if found:
                _expand(projection, found, sources, bind, target, select)
        for key in ("where", "having", "qualify"):
            clause = select.args.get(key)
            found = list(clause.find_all(exp.Columns)) if clause is not None else []
            if clause is not None and found:
                condition = clause.this
                copies = _copies(condition, found, sources, bind, target)
                clause.set("this", exp.and_(*copies) if copies else exp.true())
        if any(node.find_ancestor(exp.Select) is select for node in select.find_all(exp.Columns)):
            raise UnsupportedConstructError(
                target, "the query uses COLUMNS(...) where its lineage is not traced", "name the columns"
            )


def _sources(
    select: exp.Select,
    tables: dict[int, TableRef],
    schema: dict[TableRef, dict[str, str]],
    bind: Bind,
    target: TableRef,
) -> list[tuple[str, list[tuple[str, str]]]]:
    """Return the SELECT's FROM and JOIN sources in order, each (alias, its columns' names and DuckDB types).

    A catalog table's from the schema, any other's (a subquery, CTE, UNNEST) as DuckDB binds `alias.*` over the SELECT's
    FROM clause. Raises for a source DuckDB cannot bind so, and for a subquery holding an output DuckDB names after its
    expression's text (a COLUMNS pattern would be matched against a rendering of it).
    """
    found: list[tuple[str, list[tuple[str, str]]]] = []
    from_ = select.args.get("from_") or select.args.get("from")
    nodes = [from_.this] if from_ is not None else []
    nodes += [join.this for join in select.args.get("joins") or ()]
    for node in nodes:
        ref = tables.get(id(node)) if isinstance(node, exp.Table) else None
        if ref is not None:
            found.append(
                (node.alias_or_name, [(name, duckdb_type(kind) or "VARCHAR") for name, kind in schema[ref].items()])
            )
            continue
        columns = _bound_source(select, node, schema, bind)
        if columns is None:
            raise UnsupportedConstructError(
                target,
                "the query uses COLUMNS(...) over a source whose columns DuckDB cannot name on their own (a "
                "correlated subquery, a table function, or a subquery output named after its expression)",
                "name the columns",
            )
        found.append((node.alias_or_name, columns))
    return found


def _bound_source(
    select: exp.Select, node: exp.Expr, schema: dict[TableRef, dict[str, str]], bind: Bind
) -> list[tuple[str, str]] | None:
    """Return the names and types DuckDB gives `alias.*` of one FROM source of the SELECT.

    None is returned when DuckDB cannot tell them exactly.
    """
    if any(unnamed(p) for inner in node.find_all(exp.Select) for p in inner.expressions):
        return None
    alias = node.alias_or_name
    if not alias:
        return None
    probe = exp.Select(expressions=[exp.Column(this=exp.Star(), table=exp.to_identifier(alias, quoted=True))])
    from_ = select.args.get("from_") or select.args.get("from")
    probe.set("from_", from_.copy() if from_ is not None else None)
    probe.set("joins", [join.copy() for join in select.args.get("joins") or ()])
    text = duckdb_text(probe, schema, place=select)
    if text is None:
        return None
    try:
        bound = bind(text)
    except LineageError:
        return None
    return list(zip(bound.names, bound.types, strict=True))


def _matched(
    node: exp.Columns,
    sources: list[tuple[str, list[tuple[str, str]]]],
    bind: Bind,
    target: TableRef,
) -> list[tuple[str, str]]:
    """Return the (alias, column) pairs DuckDB expands the COLUMNS expression to, in its order."""
    stand_ins = []
    star: list[tuple[str, str]] = []
    for alias, columns in sources:
        listed = ", ".join(f"NULL::{kind} AS {_quoted(name)}" for name, kind in columns)
        stand_ins.append(f"(SELECT {listed}) AS {_quoted(alias)}")
        star.extend((alias, name) for name, _ in columns)
    names = bind(f"SELECT {node.sql(dialect='duckdb')} FROM {', '.join(stand_ins)}").names
    matched: list[tuple[str, str]] = []
    position = 0
    for name in names:  # DuckDB matches by name only, in the order of the star: a subsequence of it
        while position < len(star) and star[position][1].lower() != name.lower():
            position += 1
        if position == len(star):
            raise UnsupportedConstructError(
                target,
                "the query uses a COLUMNS(...) that DuckDB expands to columns the lineage cannot place",
                "name the columns",
            )
        matched.append(star[position])
        position += 1
    held = Counter(name.lower() for _, name in star)
    if any(held[name.lower()] != count for name, count in Counter(name.lower() for name in names).items()):
        raise UnsupportedConstructError(  # which of two sources' columns of one name DuckDB took is not told
            target,
            "the query uses a COLUMNS(...) that matches some but not all of the columns of one name",
            "name the columns",
        )
    return matched


def _copies(
    expression: exp.Expr,
    found: list[exp.Columns],
    sources: list[tuple[str, list[tuple[str, str]]]],
    bind: Bind,
    target: TableRef,
) -> list[exp.Expr]:
    if len(found) != 1:
        raise UnsupportedConstructError(
            target, "the query uses two COLUMNS(...) in one expression, whose lineage is not traced", "name the columns"
        )
    node = found[0]
    copies = []
    for alias, name in _matched(node, sources, bind, target):
        column = exp.column(name, table=alias)
        copies.append(
            column
            if expression is node
            else expression.transform(lambda n, node=node, column=column: column.copy() if n == node else n)
        )
    return copies


def _expand(
    projection: exp.Expr,
    found: list[exp.Columns],
    sources: list[tuple[str, list[tuple[str, str]]]],
    bind: Bind,
    target: TableRef,
    select: exp.Select,
) -> None:
    copies = _copies(projection, found, sources, bind, target)
    position = next(index for index, item in enumerate(select.expressions) if item is projection)
    select.set("expressions", [*select.expressions[:position], *copies, *select.expressions[position + 1 :]])


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def expand_struct_references(
    columns: Sequence[exp.Column], placed: Sequence[tuple[exp.Table, TableRef]], schema: dict[TableRef, dict[str, str]]
) -> None:
    """Write the struct references among `columns` as field accesses the engine reads.

    `columns` are nodes of a query the engine owns; the references are those DuckDB binds by its name rules as field
    accesses: `st.*` (a struct column of one table of the SELECT, no table of that name) as one output per field, and
    `schema.table.column.field` as `table.column.field`.
    """
    tables = {id(table): ref for table, ref in placed}
    for column in columns:
        star = isinstance(column.this, exp.Star)
        if star and column.table and not column.args.get("db"):
            shape = _expand_struct_star
        elif not star and column.args.get("catalog") and column.args.get("db"):
            shape = _shorten
        else:
            continue
        select = column.find_ancestor(exp.Select)
        if select is not None:
            shape(column, select, _table_sources(select, tables), schema)


def _table_sources(select: exp.Select, tables: dict[int, TableRef]) -> dict[str, TableRef | None]:
    from_ = select.args.get("from_") or select.args.get("from")
    nodes = [from_.this] if from_ is not None else []
    nodes += [join.this for join in select.args.get("joins") or ()]
    return {node.alias_or_name.lower(): tables.get(id(node)) if isinstance(node, exp.Table) else None for node in nodes}


def _expand_struct_star(
    column: exp.Column, select: exp.Select, sources: dict[str, TableRef | None], schema: dict[TableRef, dict[str, str]]
) -> None:
    name = column.table.lower()
    if name in sources or column.parent is not select:
        return
    holders = [(alias, ref) for alias, ref in sources.items() if ref is not None and name in schema[ref]]
    if len(holders) != 1 or any(ref is None for ref in sources.values()):
        return
    alias, ref = holders[0]
    spelt = duckdb_type(schema[ref][name])
    if spelt is None or not spelt.upper().startswith("STRUCT"):
        return
    fields = [field for field, _ in duckdb.sqltype(spelt).children]
    outputs = [
        exp.alias_(
            exp.Dot(this=exp.column(name, table=alias), expression=exp.to_identifier(field)),
            exp.to_identifier(field, quoted=True),
        )
        for field in fields
    ]
    position = next(index for index, item in enumerate(select.expressions) if item is column)
    select.set("expressions", [*select.expressions[:position], *outputs, *select.expressions[position + 1 :]])


def _shorten(
    column: exp.Column, select: exp.Select, sources: dict[str, TableRef | None], schema: dict[TableRef, dict[str, str]]
) -> None:
    namespace, table, name = column.catalog.lower(), column.db.lower(), column.table.lower()
    for alias, ref in sources.items():
        if ref is None or ref.namespace != (namespace,) or ref.name != table or name not in schema[ref]:
            continue
        field = column.this.copy()
        access = exp.Dot(this=exp.column(name, table=alias), expression=field)
        if isinstance(column.parent, exp.Select) and column.arg_key == "expressions":
            column.replace(exp.alias_(access, field.copy()))
        else:
            column.replace(access)
        return


def rewrite_pivots(
    query: exp.Query, placed: Sequence[tuple[exp.Table, TableRef]], schema: dict[TableRef, dict[str, str]]
) -> None:
    """Write each UNPIVOT and each PIVOT of a catalog table as the queries the engine reads.

    An UNPIVOT (`ON a, b INTO NAME k VALUE v`) becomes the UNION ALL of one SELECT per column (the other columns, the
    name, the column's non-NULL values); a PIVOT of one catalog table with an `IN (...)` list and one aggregate becomes
    the aggregate FILTERed by each value, grouped as DuckDB groups it (the GROUP BY given, else every column in neither
    ON nor USING): the same columns and values. Any other PIVOT or UNPIVOT is left for refuse_untraceable.
    """
    tables = {id(table): ref for table, ref in placed}
    for pivot in list(query.find_all(exp.Pivot)):
        source = pivot.this
        ref = tables.get(id(source)) if isinstance(source, exp.Table) else None
        if ref is None or not isinstance(pivot.parent, exp.Subquery) or pivot.args.get("alias"):
            continue
        rewritten = (
            _unpivot(pivot, source, schema[ref]) if pivot.args.get("unpivot") else _pivot(pivot, source, schema[ref])
        )
        if rewritten is not None:
            pivot.replace(rewritten)


def _unpivot(pivot: exp.Pivot, source: exp.Table, columns: dict[str, str]) -> exp.Query | None:
    into = pivot.args.get("into")
    names = [node.name.lower() for node in pivot.expressions if isinstance(node, exp.Column) and not node.table]
    if (
        not isinstance(into, exp.UnpivotColumns)
        or len(into.expressions) != 1
        or len(names) != len(pivot.expressions)
        or not names
        or any(name not in columns for name in names)
        or pivot.args.get("include_nulls")
    ):
        return None
    key, value = into.this.name, into.expressions[0].name
    others = [name for name in columns if name not in names]
    branches: list[exp.Query] = []
    for name in names:
        select = exp.select(
            *[exp.column(other, table="unpivoted") for other in others],
            exp.alias_(exp.Literal.string(name), key),
            exp.alias_(exp.column(name, table="unpivoted"), value),
        )
        table = source.copy()
        table.set("alias", exp.TableAlias(this=exp.to_identifier("unpivoted")))
        branches.append(select.from_(table).where(exp.column(name, table="unpivoted").is_(exp.null()).not_()))
    union = branches[0]
    for branch in branches[1:]:
        union = exp.union(union, branch, distinct=False)
    return union


def _pivot(pivot: exp.Pivot, source: exp.Table, columns: dict[str, str]) -> exp.Query | None:
    fields = pivot.expressions
    using = pivot.args.get("using") or []
    if len(fields) != 1 or not isinstance(fields[0], exp.In) or len(using) != 1 or isinstance(using[0], exp.Alias):
        return None
    on, values = fields[0].this, fields[0].expressions
    if (
        not isinstance(on, exp.Column)
        or on.table
        or on.name.lower() not in columns
        or not values
        or not all(isinstance(value, exp.Literal) for value in values)
    ):
        return None
    aggregate = using[0]
    group = pivot.args.get("group")
    used = {on.name.lower()} | {column.name.lower() for column in aggregate.find_all(exp.Column)}
    keys = (
        [exp.column(name) for name in columns if name not in used]
        if group is None
        else [key.copy() for key in group.expressions]
    )
    outputs = [
        exp.alias_(
            exp.Filter(
                this=aggregate.copy(), expression=exp.Where(this=exp.EQ(this=on.copy(), expression=value.copy()))
            ),
            exp.to_identifier(str(value.this), quoted=True),
        )
        for value in values
    ]
    select = exp.select(*[key.copy() for key in keys], *outputs).from_(source.copy())
    return select.group_by(*keys) if keys else select
