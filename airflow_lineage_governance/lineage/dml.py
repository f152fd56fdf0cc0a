"""Column lineage of MERGE, UPDATE and DELETE, in the same model as a CTAS's.

The engine reads every expression of the statement (SET and INSERT values, WHEN ... AND conditions, ON, WHERE) as
one projection of a SELECT over the target and the tables the statement reads, with the statement's CTEs, and
reads that SELECT scope by scope as it reads a CTAS: the same qualification, the same strictness, the same
dependency rules. Then each target column gets what can write it:

- MERGE: a column <- every SET or INSERT value that can write it (DIRECT, subtypes as in a SELECT), and <- itself
  (DIRECT IDENTITY) where some rows keep it (a matched or unmatched target row no clause rewrites or deletes);
  the ON columns decide which rows meet (INDIRECT JOIN in `rows`); a `WHEN ... AND cond` is INDIRECT CONDITIONAL
  on the columns that clause and the later clauses of its kind write, or in `rows` when one of those inserts or
  deletes. INSERT * and UPDATE SET * (and a bare INSERT or UPDATE) write the source's columns by position, as
  DuckDB does.
- UPDATE: a SET column <- its value (DIRECT) and <- itself (IDENTITY) when a WHERE or FROM may leave rows as they
  are; whatever decides which rows are updated and from which rows of FROM (the WHERE, and the joins, filters and
  groupings of the tables FROM reads) is INDIRECT CONDITIONAL on each SET column. No row is added or removed, so
  nothing is in `rows`. A column no SET writes <- itself.
- DELETE: every column <- itself; the WHERE (with USING's columns and what its subqueries read) decides which rows
  stay (INDIRECT FILTER in `rows`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from airflow_lineage_governance.default_keyword import is_default_keyword, written_defaults
from airflow_lineage_governance.kinds import EdgeType, StatementKind, Subtype
from airflow_lineage_governance.lineage.binding import binder
from airflow_lineage_governance.lineage.constructs import inline_named_windows, refuse_untraceable, refuse_whole_rows
from airflow_lineage_governance.lineage.dml_forms import category
from airflow_lineage_governance.lineage.errors import (
    ColumnCountError,
    LineageError,
    UnknownColumnError,
    UnknownTableError,
    UnsupportedStatementError,
)
from airflow_lineage_governance.lineage.model import ColumnLineage, Dependency, OutputColumn, merge
from airflow_lineage_governance.lineage.qualification import mark_using, qualified_query, resolve_using_keys
from airflow_lineage_governance.lineage.redact import redacted_expression
from airflow_lineage_governance.lineage.runnable import runnable_statement
from airflow_lineage_governance.lineage.schema import Schema, name_for_engine, place_tables, read_tables
from airflow_lineage_governance.lineage.scopes import ScopeReader
from airflow_lineage_governance.lineage.statement import Statement, survey
from airflow_lineage_governance.lineage.walk import Context, compose
from airflow_lineage_governance.refs import TableRef

KEPT = "kept where the statement leaves the row's value"
OUTSIDE = -1
"""The key of the row dependencies of the scopes under no part: the tables read, their joins, the CTEs."""
_VERB = {StatementKind.MERGE: "merge into", StatementKind.UPDATE: "update", StatementKind.DELETE: "delete from"}


@dataclass
class Part:
    """One expression the engine reads.

    Its role (`value`, `condition`, `on`, `where`, `star`), the WHEN clause it belongs to (-1 outside a MERGE's clauses)
    and, for a value, the target column it writes.
    """

    role: str
    node: exp.Expr
    clause: int = -1
    column: str = ""


@dataclass
class Clause:
    """One WHEN clause of a MERGE.

    Which rows it acts on, what it does, its condition's part, and the columns it writes (column -> index of its value
    part; by position from the source when `star`).
    """

    category: str
    action: str
    condition: int | None
    writes: dict[str, int] = field(default_factory=dict)
    star: bool = False

    @property
    def changes_rows(self) -> bool:
        """Return whether the clause adds or remove rows (INSERT, DELETE)."""
        return self.action in ("INSERT", "DELETE")


@dataclass
class Read:
    """What the engine read.

    Each part's dependencies, the source's columns when a clause writes by position, the row dependencies of the scopes
    under each part (by part index; OUTSIDE for the others), the tables read.
    """

    parts: list[tuple[Dependency, ...]]
    star: list[tuple[Dependency, ...]]
    rows: dict[int, list[Dependency]]
    sources: tuple[TableRef, ...]

    def of(self, index: int | None) -> list[Dependency]:
        """Return a part's dependencies with those of the subqueries it holds (none for no part)."""
        if index is None:
            return []
        return [*self.parts[index], *self.rows.get(index, ())]


def dml_lineage(statement: Statement, schema: Schema) -> ColumnLineage:
    """Return the column lineage of a parsed MERGE, UPDATE or DELETE against the normalized `schema`.

    The schema holds the target and every table it reads. DuckDB binds the statement first, over empty tables of the
    schema (BindError with DuckDB's sentence when it cannot). Raises LineageError whenever the lineage cannot be read
    exactly. Reads a copy of the tree.
    """
    target, kind = statement.target, statement.kind
    known = schema.get(target)
    if known is None:
        raise UnknownTableError(
            target,
            f"the catalog has no table {target} to {_VERB[kind]}",
            "create it first (CREATE TABLE ... AS), or check the name",
        )
    binder(schema, target).bind_statement(runnable_statement(statement, schema, written_in="duckdb"), target)
    columns = list(known)
    work = statement.tree.copy()
    work.set("returning", None)  # its rows go to the caller, not to a table
    _defaults_as_null(work)
    if isinstance(work, exp.Merge):
        _qualify_by_side(work)
    parts: list[Part] = []
    clauses: list[Clause] = []
    if isinstance(work, exp.Merge):
        clauses = _merge_parts(work, columns, target, parts)
    elif isinstance(work, exp.Update):
        _assignments(work.expressions, columns, target, parts, -1, {})
    where = work.args.get("where")
    if isinstance(where, exp.Where):
        parts.append(Part("where", where.this))
    read = _read(statement, work, parts, schema)
    _check_star(clauses, read, columns, target)
    render = partial(_render, parts, statement.dialect)
    if kind == StatementKind.DELETE:
        where_index = _index(parts, "where")
        rows = _as(read.parts[where_index] if where_index is not None else (), Subtype.FILTER, "WHERE of the DELETE")
        rows += [dep for deps in read.rows.values() for dep in deps]
        kept = {name: [_kept(target, name)] for name in columns}
        return ColumnLineage(target, kind, _outputs(kept, render), merge(rows), read.sources)
    if kind == StatementKind.UPDATE:
        return ColumnLineage(
            target, kind, _outputs(_update_columns(work, parts, read, columns, target), render), (), read.sources
        )
    outputs, rows = _merge_columns(parts, clauses, read, columns, target)
    return ColumnLineage(target, kind, _outputs(outputs, render), merge(rows), read.sources)


def _defaults_as_null(work: exp.Expr) -> None:
    """Replace each DEFAULT a SET or INSERT value writes with NULL.

    NULL is the value an Iceberg column of a version 1 or 2 table takes for it (those tables declare no column
    defaults).
    """
    for value in written_defaults(work):
        value.replace(exp.null())


def _qualify_by_side(work: exp.Merge) -> None:
    """Qualify, as DuckDB binds them, the unqualified columns a MERGE's clauses read where only one side has a row.

    A NOT MATCHED clause reads the source, a NOT MATCHED BY SOURCE clause the target, and a key of `USING (columns)` is
    the source's in a matched row. Turns `USING (columns)` into its ON condition.
    """
    target = exp.to_identifier(work.this.alias_or_name)
    source = exp.to_identifier(work.args["using"].alias_or_name)
    keys = {key.name.lower() for key in work.args.get("using_cond") or ()}
    if keys:
        work.set(
            "on",
            exp.and_(
                *(
                    exp.EQ(this=exp.column(key, target.copy()), expression=exp.column(key, source.copy()))
                    for key in sorted(keys)
                )
            ),
        )
        work.set("using_cond", None)
    for when in work.args["whens"].expressions:
        which = category(when)
        then = when.args.get("then")
        for column in list(when.find_all(exp.Column)):
            if column.table or column.find_ancestor(exp.Query) is not None or is_default_keyword(column):
                continue
            if isinstance(then, exp.Insert) and column.parent is then.this:
                continue  # the INSERT's column list names the target's columns
            if (
                isinstance(column.parent, exp.EQ)
                and column.arg_key == "this"
                and isinstance(column.parent.parent, exp.Update)
            ):
                continue  # the column a SET writes
            if which == "NOT MATCHED BY SOURCE":
                column.set("table", target.copy())
            elif which == "NOT MATCHED" or column.name.lower() in keys:
                column.set("table", source.copy())


def _outputs(columns: dict[str, list[Dependency]], render: Callable[[str], str]) -> tuple[OutputColumn, ...]:
    return tuple(OutputColumn(name, merge(deps), partial(render, name)) for name, deps in columns.items())


def _index(parts: list[Part], role: str) -> int | None:
    return next((i for i, part in enumerate(parts) if part.role == role), None)


def _kept(target: TableRef, name: str) -> Dependency:
    return Dependency(target.column(name), EdgeType.DIRECT, Subtype.IDENTITY, False, KEPT)


def _as(deps: Iterable[Dependency], subtype: Subtype, description: str) -> list[Dependency]:
    context = Context(EdgeType.INDIRECT, subtype, False, description)
    return [compose(dep, context) for dep in deps]


def _render(parts: list[Part], dialect: str, name: str) -> str:
    values = [
        redacted_expression(part.node, dialect, 200) for part in parts if part.role == "value" and part.column == name
    ]
    return " | ".join(dict.fromkeys(values)) if values else name


def _assignments(
    assignments: Iterable[exp.Expr],
    columns: list[str],
    target: TableRef,
    parts: list[Part],
    clause: int,
    writes: dict[str, int],
) -> None:
    """Adds a value part per `column = value` (a `(a, b) = (x, y)` is two) and records it in `writes`.

    Raises UnknownColumnError for a column the target lacks and UnsupportedStatementError for one assigned twice.
    """
    for assignment in assignments:
        left, right = assignment.this, assignment.expression
        pairs = (
            zip(left.expressions, right.expressions, strict=True) if isinstance(left, exp.Tuple) else [(left, right)]
        )
        for column, value in pairs:
            name = column.name.lower()
            if name not in columns:
                raise UnknownColumnError(
                    target, f"{target} has no column {column.name}", "check the SET list against the catalog"
                )
            if name in writes:
                raise UnsupportedStatementError(
                    target, f"the column {name} is written twice by one SET or INSERT", "assign it once"
                )
            writes[name] = len(parts)
            parts.append(Part("value", value, clause, name))


def _merge_parts(work: exp.Merge, columns: list[str], target: TableRef, parts: list[Part]) -> list[Clause]:
    """Add the MERGE's ON, each clause's condition and values as parts; return its clauses.

    The source's columns come last, when a clause writes by position.
    """
    parts.append(Part("on", work.args["on"]))
    clauses: list[Clause] = []
    for number, when in enumerate(work.args["whens"].expressions):
        condition = when.args.get("condition")
        index = None
        if condition is not None:
            index = len(parts)
            parts.append(Part("condition", condition, number))
        then = when.args["then"]
        action = then.name.upper() if isinstance(then, exp.Var) else then.key.upper()
        clause = Clause(category(when), action, index)
        if isinstance(then, exp.Update):
            if not then.expressions or isinstance(then.expressions[0], exp.Star):
                clause.star = True
            else:
                _assignments(then.expressions, columns, target, parts, number, clause.writes)
        elif isinstance(then, exp.Insert):
            values = then.expression
            if not isinstance(values, exp.Tuple):
                clause.star = True
            else:
                names = (
                    [column.name for column in then.this.expressions] if isinstance(then.this, exp.Tuple) else columns
                )
                if len(names) != len(values.expressions):
                    raise ColumnCountError(
                        target,
                        f"an INSERT of the MERGE writes {len(names)} columns, and its "
                        f"VALUES has {len(values.expressions)}",
                        "make the two lists match by position",
                    )
                pairs = [
                    exp.EQ(this=exp.column(name), expression=value)
                    for name, value in zip(names, values.expressions, strict=True)
                ]
                _assignments(pairs, columns, target, parts, number, clause.writes)
        if clause.star:
            clause.writes = {name: position for position, name in enumerate(columns)}
        clauses.append(clause)
    if any(clause.star for clause in clauses):
        using = work.args["using"]
        parts.append(Part("star", exp.Column(this=exp.Star(), table=exp.to_identifier(using.alias_or_name))))
    return clauses


def _select(work: exp.Expr, parts: list[Part]) -> exp.Select:
    """Return the SELECT of every part over the target and the tables the statement reads, with its CTEs.

    Each part is aliased `__p<n>`, a source's `*` last; the tables read are a MERGE's source, an UPDATE's FROM, a
    DELETE's USING.
    """
    projections = [
        part.node.copy()
        if part.role == "star"
        else exp.Alias(this=part.node.copy(), alias=exp.to_identifier(f"__p{i}"))
        for i, part in enumerate(parts)
    ]
    select = exp.Select(expressions=projections or [exp.Alias(this=exp.null(), alias=exp.to_identifier("__p"))])
    select.set("from_", exp.From(this=work.this.copy()))
    read: list[exp.Expr] = []
    if isinstance(work, exp.Merge):
        read = [work.args["using"]]
    elif isinstance(work, exp.Update) and isinstance(work.args.get("from_"), exp.From):
        read = [work.args["from_"].this]
    elif isinstance(work, exp.Delete):
        read = list(work.args.get("using") or ())
    joins: list[exp.Expr] = []
    for source in read:
        source = source.copy()
        inner = source.args.get("joins") or []
        source.set("joins", None)
        joins.append(exp.Join(this=source))
        joins.extend(inner)
    select.set("joins", joins or None)
    with_ = work.args.get("with_")
    if with_ is not None:
        select.set("with_", with_.copy())
    return select


def _owner(node: exp.Expr, root: exp.Expr) -> int:
    """Return the index of the root projection that holds `node`, OUTSIDE when none does."""
    child, parent = node, node.parent
    while parent is not None and parent is not root:
        child, parent = parent, parent.parent
    if parent is root and child.arg_key == "expressions" and child.index is not None:
        return child.index
    return OUTSIDE


def _read(statement: Statement, work: exp.Expr, parts: list[Part], schema: Schema) -> Read:
    """Read the SELECT of the parts as the engine reads a CTAS's query; raise LineageError."""
    target, dialect = statement.target, statement.dialect
    select = _select(work, parts)
    found = survey(select)
    placed = place_tables(found.tables, found.ctes, schema, target)
    for table, ref in placed:
        name_for_engine(table, ref)
    inline_named_windows(select)
    refuse_untraceable(select, target, dialect)
    if found.using_joins:
        mark_using(found.coalesces, found.using_joins)
    qualified = qualified_query(select, schema, target, statement.tree, dialect)
    refuse_whole_rows(qualified, target)
    if found.using_joins:
        resolve_using_keys(qualified)
    reader = ScopeReader(schema, target)
    rows: dict[int, list[Dependency]] = defaultdict(list)
    columns: list[tuple[str, tuple[Dependency, ...]]] = []
    for scope in traverse_scope(qualified):
        lineage, scope_rows = reader.read([scope])
        rows[_owner(scope.expression, qualified)].extend(scope_rows)
        columns = lineage.columns
    named = [part for part in parts if part.role != "star"]
    if len(columns) < len(named) or any(
        isinstance(p, exp.Star) or isinstance(p, exp.Column) and isinstance(p.this, exp.Star)
        for p in qualified.expressions
    ):
        raise LineageError(
            target,
            "the source's columns cannot be listed from the catalog",
            "write the INSERT and SET lists column by column",
        )
    return Read(
        [deps for _, deps in columns[: len(named)]],
        [deps for _, deps in columns[len(named) :]],
        dict(rows),
        read_tables(placed),
    )


def _check_star(clauses: list[Clause], read: Read, columns: list[str], target: TableRef) -> None:
    """Raise ColumnCountError when a clause writes by position from a source with another number of columns."""
    if any(clause.star for clause in clauses) and len(read.star) != len(columns):
        raise ColumnCountError(
            target,
            f"an INSERT * or UPDATE SET * writes the source's {len(read.star)} columns by "
            f"position into the {len(columns)} of {target}",
            "list the columns: UPDATE SET a = s.a, ... and INSERT (a, ...) VALUES (s.a, ...)",
        )


def _update_columns(
    work: exp.Expr, parts: list[Part], read: Read, columns: list[str], target: TableRef
) -> dict[str, list[Dependency]]:
    """Return each target column's dependencies under an UPDATE."""
    where = _index(parts, "where")
    deciding = _as(
        [*read.of(where), *read.rows.get(OUTSIDE, ())], Subtype.CONDITIONAL, "decides which rows the UPDATE changes"
    )
    some_kept = where is not None or work.args.get("from_") is not None
    outputs: dict[str, list[Dependency]] = {}
    for name in columns:
        index = next((i for i, part in enumerate(parts) if part.role == "value" and part.column == name), None)
        if index is None:
            outputs[name] = [_kept(target, name)]
        else:
            outputs[name] = [*read.of(index), *deciding, *([_kept(target, name)] if some_kept else [])]
    return outputs


def _merge_columns(
    parts: list[Part], clauses: list[Clause], read: Read, columns: list[str], target: TableRef
) -> tuple[dict[str, list[Dependency]], list[Dependency]]:
    """Return each target column's dependencies under a MERGE, and the dependencies that shape its rows."""
    rows = _as(read.of(_index(parts, "on")), Subtype.JOIN, "ON of the MERGE")
    rows += read.rows.get(OUTSIDE, [])
    outputs: dict[str, list[Dependency]] = {name: [] for name in columns}
    by_category: dict[str, list[Clause]] = defaultdict(list)
    for clause in clauses:
        by_category[clause.category].append(clause)
    for which, group in by_category.items():
        for position, clause in enumerate(group):
            for name, index in clause.writes.items():
                outputs[name].extend(read.star[index] if clause.star else read.of(index))
            if clause.condition is None:
                continue
            later = group[position:]
            deciding = _as(read.of(clause.condition), Subtype.CONDITIONAL, f"condition of a WHEN {which} clause")
            if any(other.changes_rows for other in later):
                rows.extend(deciding)
                continue
            for name in {name for other in later for name in other.writes}:
                outputs[name].extend(deciding)
    for name in columns:
        if _kept_somewhere(name, by_category):
            outputs[name].append(_kept(target, name))
    return outputs, rows


def _kept_somewhere(name: str, by_category: dict[str, list[Clause]]) -> bool:
    """Return whether some target row may keep the column's value.

    A matched row, or one no source row meets, that no clause rewrites or deletes.
    """
    for which in ("MATCHED", "NOT MATCHED BY SOURCE"):
        group = by_category.get(which, [])
        if not group or group[-1].condition is not None:
            return True
        if any(clause.action != "DELETE" and name not in clause.writes for clause in group):
            return True
    return False
