"""column_lineage: a CTAS or INSERT ... SELECT and the catalog schema in, exact column lineage out."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.schema import MappingSchema

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage.binding import BoundQuery, SchemaKey, binder, query_text, schema_key
from airflow_lineage_governance.lineage.constructs import (
    inline_named_windows,
    lateral_unnest,
    refuse_untraceable,
    unwrap_lateral_unnest,
    wrap_column_aliases,
)
from airflow_lineage_governance.lineage.errors import (
    BindError,
    ColumnCountError,
    LineageError,
    StatementTooLargeError,
    UnknownColumnError,
    UnknownTableError,
)
from airflow_lineage_governance.lineage.expansion import expand_columns, expand_struct_references, rewrite_pivots
from airflow_lineage_governance.lineage.model import ColumnLineage, OutputColumn, merge
from airflow_lineage_governance.lineage.naming import OUTPUT_NAME, deduplicated, mark_written_names, output_name
from airflow_lineage_governance.lineage.qualification import (
    alias_tables,
    mark_using,
    name_outputs,
    qualified_query,
    qualifier_schema,
    resolve_using_keys,
)
from airflow_lineage_governance.lineage.redact import redacted_expression
from airflow_lineage_governance.lineage.schema import (
    CatalogSchema,
    NestedSchema,
    Schema,
    name_for_duckdb,
    name_for_engine,
    normalized,
    place_tables,
    read_tables,
)
from airflow_lineage_governance.lineage.scopes import ScopeReader
from airflow_lineage_governance.lineage.statement import (
    Statement,
    Survey,
    parse_statement,
    survey,
)
from airflow_lineage_governance.lineage.subquery_names import Bind, name_expanded_outputs, name_subquery_outputs
from airflow_lineage_governance.refs import TableRef


@dataclass(frozen=True)
class _SchemaSet:
    """A schema as given, with what the engine makes of it once: reused while the next statements give the same."""

    given: Mapping[Any, object]
    """A copy of the schema as given (its nested mappings as dicts), compared with the next statement's."""
    tables: Schema
    key: SchemaKey
    mapping: MappingSchema
    dialect: str


_last_schema: list[_SchemaSet | None] = [None]
"""The schema set of the latest statement read, in its one slot (replaced whole, so threads may share it)."""


def _schema_set(schema: CatalogSchema | NestedSchema, dialect: str) -> _SchemaSet:
    """Return the schema set of `schema`: the latest one when `schema` is the same as its copy, else made here."""
    last = _last_schema[0]
    if last is not None and last.dialect == dialect and _same(last.given, schema):
        return last
    tables = normalized(schema)
    made = _SchemaSet(_copied(schema), tables, schema_key(tables), qualifier_schema(tables, dialect), dialect)
    _last_schema[0] = made
    return made


def _same(given: Mapping[Any, object], schema: Mapping[Any, object]) -> bool:
    """Return whether two nested mappings hold equal keys in the same order at every level, and equal values.

    The order matters: a table's columns are in it (`SELECT *` reads them so).
    """
    return given == schema and _same_order(given, schema)


def _same_order(given: Mapping[Any, Any], schema: Mapping[Any, Any]) -> bool:
    """Return whether two equal nested mappings hold their keys in the same order at every level.

    A level holds mappings throughout or none (a schema the engine read before, and one equal to it): the first
    value tells which, so the columns, the last level, are compared as one list of names.
    """
    if list(given) != list(schema):
        return False
    if not schema or not isinstance(next(iter(schema.values())), Mapping):
        return True
    for key, value in schema.items():
        if not _same_order(given[key], value):
            return False
    return True


def _copied(mapping: Mapping[Any, object]) -> dict[Any, object]:
    """Return a copy of a nested mapping, each mapping in it a dict (its other values shared)."""
    return {key: _copied(value) if isinstance(value, Mapping) else value for key, value in mapping.items()}


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block, and resume it after if it ran before.

    A statement's trees are many small objects linked both ways (each node knows its parent): the collector
    would walk them again and again while they are built and read, and they are freed when it resumes.
    """
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def column_lineage(
    statement: Statement | str, schema: CatalogSchema | NestedSchema, *, dialect: str = "duckdb"
) -> ColumnLineage:
    """Return the column lineage of one CTAS, INSERT … SELECT, MERGE, UPDATE or DELETE.

    One `CREATE [OR REPLACE] TABLE … AS SELECT`, `INSERT INTO … SELECT`, MERGE, UPDATE or DELETE (read by
    lineage/dml.py), given parsed (parse_statement) or as text (parsed here, in `dialect`).

    `schema` maps every table the statement reads and, for any kind but a CTAS, its target to `{column: type}` (the JSON
    form `{namespace: {table: {column: type}}}` is taken too). Raises LineageError (a subclass naming the
    target, table and column at fault) whenever the lineage cannot be read exactly; it never returns partial
    lineage. A Statement given is not changed: the engine reads a copy of its tree.
    """
    try:
        with collection_paused():
            return _lineage_of(statement, schema, dialect)
    except RecursionError:
        raise StatementTooLargeError(
            None, "the statement is nested too deeply to read", "flatten its subqueries into CTEs"
        ) from None


def _lineage_of(statement: Statement | str, schema: CatalogSchema | NestedSchema, dialect: str) -> ColumnLineage:
    """Return the lineage of one statement (column_lineage), its trees left unreferenced when it returns."""
    parsed = parse_statement(statement, dialect) if isinstance(statement, str) else statement
    if parsed.reads_target:  # MERGE, UPDATE, DELETE
        from airflow_lineage_governance.lineage.dml import dml_lineage

        return dml_lineage(parsed, normalized(schema))
    tables = _schema_set(schema, parsed.dialect)
    if isinstance(statement, str):
        return _column_lineage(parsed, parsed.tree, parsed.survey, tables, statement)
    work = statement.tree.copy()
    return _column_lineage(statement, work, survey(work.expression), tables, statement.tree)


def _column_lineage(
    statement: Statement, work: exp.Expr, found: Survey, tables: _SchemaSet, original: exp.Expr | str
) -> ColumnLineage:
    """Read the lineage from `work` (a tree of `statement` the engine may change) and its survey `found`.

    `original` (an unchanged tree, or the text to parse again) explains an unknown column.
    """
    target, dialect = statement.target, statement.dialect
    schema = tables.tables
    query = work.expression
    placed = place_tables(found.tables, found.ctes, schema, target)
    for table, ref in placed:
        name_for_engine(table, ref)
    if statement.kind == StatementKind.CREATE_TABLE_AS:
        _name_outputs(query, statement.text)
    # A LATERAL over a subquery is read as it is: only the other shorthands are written out, changing the tree.
    rewritten = any(not isinstance(node, exp.Lateral) or lateral_unnest(node) for node in found.shorthands)
    if rewritten:
        _write_out_shorthands(query, found, placed, tables, target)
    wrapped = wrap_column_aliases(found.tables)
    if found.named_windows or rewritten:  # a shorthand written out may copy an OVER w
        inline_named_windows(query)
    starred = named = False
    if found.queries > 1:
        # The survey's SELECTs are the tree's, in its walk's order, unless a rewrite above changed the tree's shape.
        walked = not (wrapped or found.named_windows or rewritten)
        selects = [node for node in found.constructs if isinstance(node, exp.Select)] if walked else None
        starred, named = name_subquery_outputs(query, schema, _binding(tables, target), selects)
    # The survey's constructs are the tree's, in its walk's order, unless a rewrite above changed the tree's shape.
    reshaped = wrapped or named or found.named_windows or rewritten
    refuse_untraceable(query, target, dialect, None if reshaped else found.constructs)
    if found.using_joins:
        mark_using(found.coalesces, found.using_joins)
    # DuckDB's names of subquery outputs, and the shorthands written out, may bring names of any case.
    lower_case = not (found.cased or rewritten or named)
    # Where naming the tables' aliases is all the qualifier's table step would do, it is done here from the survey.
    aliased = lower_case and not reshaped and alias_tables(found)
    # Where naming the outputs is all the qualifier's column step would do, that alone is done.
    if aliased and name_outputs(query, found, placed, schema, dialect):
        qualified = query
    else:
        qualified = qualified_query(
            query, schema, target, original, dialect, tables.mapping, lower_case=lower_case, aliased=aliased
        )
    if starred and name_expanded_outputs(qualified, schema, _binding(tables, target)):
        qualified = qualified_query(qualified, schema, target, original, dialect, tables.mapping)
    if found.using_joins:
        resolve_using_keys(qualified)
    root, rows = ScopeReader(schema, target).read(traverse_scope(qualified))
    if not root.placeable:
        raise LineageError(
            target, "the query's result cannot be placed in catalog tables", "select from Iceberg tables of the catalog"
        )
    bound = _bound(statement, tables)
    if len(bound.names) != len(root.columns):
        raise LineageError(
            target,
            f"DuckDB's result has {len(bound.names)} columns and the lineage read {len(root.columns)}",
            "name the columns the query returns instead of expanding *",
        )
    projections = _projections(qualified, [name for name, _ in root.columns])
    if _by_name_root(qualified) and [name.lower() for name in bound.names] != [name for name, _ in root.columns]:
        raise LineageError(
            target,
            "DuckDB matches the branches of the set operation BY NAME otherwise than the lineage read",
            "alias every output of each branch",
        )
    names = _written_names(statement, list(bound.names), schema)
    rendered = [_detached(_unaliased(projection)) for projection in projections]
    columns = tuple(
        OutputColumn(name, deps, partial(redacted_expression, expression, dialect))
        for name, (_, deps), expression in zip(names, root.columns, rendered, strict=True)
    )
    return ColumnLineage(target, statement.kind, columns, merge(rows), read_tables(placed), bound.types)


def _write_out_shorthands(
    query: exp.Query, found: Survey, placed: list[tuple[exp.Table, TableRef]], tables: _SchemaSet, target: TableRef
) -> None:
    """Write the query's COLUMNS(...), struct references, PIVOT/UNPIVOT and LATERAL unnest out as queries.

    The queries they stand for (lineage/expansion.py, constructs.unwrap_lateral_unnest).
    """
    schema = tables.tables
    kinds = {type(node) for node in found.shorthands}
    if exp.Columns in kinds:
        expand_columns(query, placed, schema, _binding(tables, target), target)
    if exp.Column in kinds:
        expand_struct_references([node for node in found.shorthands if isinstance(node, exp.Column)], placed, schema)
    if exp.Pivot in kinds:
        rewrite_pivots(query, placed, schema)
    if exp.Lateral in kinds:
        unwrap_lateral_unnest(query)


def _binding(tables: _SchemaSet, target: TableRef) -> Bind:
    """Return a function that binds one SELECT over the schema set (the set's Binder, made on first use)."""
    bind = binder(tables.tables, target, tables.key)
    return lambda sql: bind.bind(sql, target)


def _by_name_root(query: exp.Expr) -> bool:
    while isinstance(query, exp.Subquery):
        query = query.this
    return isinstance(query, exp.SetOperation) and bool(query.args.get("by_name"))


def _projections(query: exp.Expr, names: list[str]) -> list[exp.Expr | None]:
    """Return the expression of each output.

    The leftmost SELECT's, or for a set operation BY NAME the first branch's expression of that name.
    """
    if not _by_name_root(query):
        leftmost = _leftmost_select(query)
        return list(leftmost.selects) if leftmost is not None else [None] * len(names)
    found: dict[str, exp.Expr] = {}
    for select in query.find_all(exp.Select):
        if select.find_ancestor(exp.Select) is None:
            for projection in select.selects:
                found.setdefault(projection.alias_or_name.lower(), projection)
    return [found.get(name) for name in names]


def _leftmost_select(query: exp.Expr) -> exp.Select | None:
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this if isinstance(query, exp.Subquery) else query.left
    return query if isinstance(query, exp.Select) else None


def _name_outputs(query: exp.Query, text: str) -> None:
    """Mark each unaliased output expression with the name DuckDB gives it, and each alias with its case.

    The name where naming.output_name can tell it from the statement's `text` (the names written are DuckDB's own, from
    binding: this keeps the rendered expressions of the facet); an alias with the case it is written in. Unwraps a
    parenthesised column (`SELECT (x)`, `SELECT DISTINCT(x)`, which DuckDB names x).
    """
    if not text or text != text.lower():  # a name written in lower case reads the same after qualifying
        mark_written_names(query)
    select = _leftmost_select(query)
    for projection in list(select.expressions) if select else ():
        inner = projection
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if inner is not projection and isinstance(inner, exp.Column):
            projection.replace(inner)
            continue
        if isinstance(projection, (exp.Column, exp.Star)):
            continue
        if isinstance(projection, exp.Alias) and projection.alias:
            continue
        name = output_name(projection, text)
        if name is not None:
            projection.meta[OUTPUT_NAME] = name


def _by_name(target: TableRef, outputs: list[str], allowed: list[str], existing: Mapping[str, str]) -> list[str]:
    """Return the target column each output of an `INSERT ... BY NAME` writes.

    The one of its name (DuckDB matches names case-insensitively).
    """
    columns = {name.lower(): name for name in allowed}
    written: list[str] = []
    for output in outputs:
        column = columns.get(output.lower())
        if column is None or column not in existing:
            raise UnknownColumnError(
                target,
                f"{target} has no column {output}",
                "name each output of an INSERT ... BY NAME after a column of the table",
            )
        if column in written:
            raise ColumnCountError(
                target, f"the INSERT ... BY NAME writes {column} twice", "name each output after a different column"
            )
        written.append(column)
    return written


def _detached(node: exp.Expr) -> exp.Expr:
    """Return `node` taken out of its tree, so that the lineage keeps the expression alone and not the tree."""
    if node.parent is not None:
        node.pop()
    return node


def _unaliased(node: exp.Expr | None) -> exp.Expr:
    if node is None:
        return exp.Null()
    return node.this if isinstance(node, exp.Alias) else node


def query_text_of(statement: Statement) -> str | None:
    """Return the text of the statement's query as written (after the target), None when it cannot be found."""
    node = statement.tree
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    if not statement.text or not isinstance(target, exp.Table):
        return None
    end = max((part.meta.get("end", -1) for part in target.parts), default=-1)
    if not isinstance(end, int) or end < 0:
        return None
    keyword = "CREATE" if statement.kind == StatementKind.CREATE_TABLE_AS else "INSERT"
    return query_text(statement.text, end, keyword, isinstance(node.this, exp.Schema))


def _bound(statement: Statement, tables: _SchemaSet) -> BoundQuery:
    """Return DuckDB's binding of the statement's query as written, or of the SQL the operator runs.

    The SQL the operator runs when there is no text or DuckDB's parser does not take the text as written. Raises
    BindError with DuckDB's sentence when DuckDB cannot bind it.
    """
    schema = tables.tables
    text = query_text_of(statement)
    if text is not None:
        try:
            return binder(schema, statement.target, tables.key).bind(text, statement.target)
        except BindError as error:
            if "(Parser Error: " not in error.problem:
                raise
    # sqlglot reads more orders of clauses than DuckDB does: bind sqlglot's rendering of the same tree, which is
    # what the operator runs (from a fresh parse of the text: the engine may have changed the tree it was given).
    source = parse_statement(statement.text, statement.dialect) if statement.text else statement
    copy = source.query.copy()
    found = survey(copy)
    for table, ref in place_tables(found.tables, found.ctes, schema, statement.target):
        name_for_duckdb(table, ref)
    return binder(schema, statement.target, tables.key).bind(copy.sql(dialect="duckdb"), statement.target)


def _written_names(statement: Statement, outputs: list[str], schema: Schema) -> list[str]:
    target = statement.target
    if statement.kind == StatementKind.CREATE_TABLE_AS:
        return deduplicated(outputs)
    existing = schema.get(target)
    if existing is None:
        raise UnknownTableError(
            target,
            f"the catalog has no table {target} to insert into",
            "create it first (CREATE TABLE ... AS), or check the name",
        )
    if statement.by_name:
        return _by_name(target, outputs, list(statement.target_columns) or list(existing), existing)
    written = list(statement.target_columns) or list(existing)
    for name in written:
        if name not in existing:
            raise UnknownColumnError(
                target, f"{target} has no column {name}", "check the INSERT's column list against the catalog"
            )
    if len(written) != len(outputs):
        raise ColumnCountError(
            target,
            f"the INSERT writes {len(written)} columns, and its SELECT has {len(outputs)} values",
            "make the two lists match by position",
        )
    return written
