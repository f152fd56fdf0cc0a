"""The lineage of every SELECT of a qualified query, scope by scope, children before parents.

Each scope's output columns in base source columns, and the columns of its row clauses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType

from airflow_lineage_governance.kinds import EdgeType, Subtype
from airflow_lineage_governance.lineage.errors import (
    AmbiguousColumnError,
    LineageError,
    UnknownColumnError,
    UnplaceableSourceError,
    UnsupportedConstructError,
)
from airflow_lineage_governance.lineage.model import Dependency, merge
from airflow_lineage_governance.lineage.naming import OUTPUT_NAME, WRITTEN_COLUMNS, WRITTEN_NAME
from airflow_lineage_governance.lineage.schema import Schema, engine_key
from airflow_lineage_governance.lineage.walk import Context, ExpressionWalker, compose
from airflow_lineage_governance.refs import TableRef

_NAMED_SCOPES = (ScopeType.DERIVED_TABLE, ScopeType.CTE, ScopeType.SET_OPERATION)
ROW_CLAUSES = (
    ("where", Subtype.FILTER, "WHERE"),
    ("group", Subtype.GROUP_BY, "GROUP BY"),
    ("having", Subtype.FILTER, "HAVING"),
    ("qualify", Subtype.FILTER, "QUALIFY"),
)


@dataclass
class ScopeLineage:
    """One scope's output columns in order and the dependencies of its row clauses.

    Each output column is its name and its dependencies in base columns.
    """

    columns: list[tuple[str, tuple[Dependency, ...]]] = field(default_factory=list)
    rows: list[Dependency] = field(default_factory=list)
    placeable: bool = True
    written: list[str] = field(default_factory=list)
    """The output names as DuckDB writes them (an alias's case kept), one per column; empty when not read."""

    def __post_init__(self) -> None:
        self.outputs: dict[str, tuple[Dependency, ...]] = {}
        for name, deps in self.columns:
            self.outputs.setdefault(name, deps)
        self.written_names: dict[str, str] = {}
        """Each output's name as DuckDB writes it, by the engine's (lower-case) name; the first of duplicates."""
        if len(self.written) == len(self.columns):
            for (name, _), written in zip(self.columns, self.written, strict=True):
                self.written_names.setdefault(name, written)


def _aggregates(projection: exp.Expr, select: exp.Select) -> bool:
    """Return whether an output of `select` aggregates or is a window (GROUP BY ALL groups by the others)."""
    for node in projection.find_all(exp.AggFunc, exp.Window):
        if node.find_ancestor(exp.Select) is select:
            return True
    return False


def _recursive(scope: Scope) -> bool:
    """Return whether the scope is a CTE of WITH RECURSIVE whose later branch reads the CTE itself.

    sqlglot places that reference on the first branch.
    """
    node = scope.expression
    if scope.scope_type != ScopeType.CTE or not isinstance(node, exp.SetOperation):
        return False
    with_ = node.parent.parent if isinstance(node.parent, exp.CTE) else None
    if not isinstance(with_, exp.With) or not with_.args.get("recursive"):
        return False
    branches = scope.set_operation_scopes
    first = branches[0].expression if branches else None
    return any(
        isinstance(source, Scope) and source.expression is first
        for branch in branches[1:]
        for source in branch.sources.values()
    )


def _selected(scope: Scope) -> dict[str, exp.Table | Scope]:
    """Return the sources the scope's FROM and JOINs name (a CTE the scope can see but does not read is none)."""
    return {alias: source for alias, (_, source) in scope.selected_sources.items()}


def _distinct(scope: Scope) -> bool:
    """Return whether the scope's query removes duplicate rows (SELECT DISTINCT, UNION without ALL)."""
    node = scope.expression
    if isinstance(node, exp.Select):
        return node.args.get("distinct") is not None
    return isinstance(node, exp.SetOperation) and bool(node.args.get("distinct"))


class ScopeReader:
    """Reads the lineage of every scope of one statement; raises LineageError on any column it cannot place."""

    def __init__(self, schema: Schema, target: TableRef) -> None:
        self._schema = schema
        self._target = target
        self._refs = {engine_key(ref): ref for ref in schema}
        self._lineage: dict[int, ScopeLineage] = {}
        self._base: dict[tuple[TableRef, str], tuple[Dependency, ...]] = {}

    def read(self, scopes: list[Scope]) -> tuple[ScopeLineage, list[Dependency]]:
        """Return the root scope's lineage and the row dependencies of every scope."""
        rows: list[Dependency] = []
        lineage = ScopeLineage()
        for scope in scopes:
            lineage = self._read_scope(scope)
            if _recursive(scope):
                lineage = self._fixpoint(scope, lineage, rows)
            if scope.scope_type in _NAMED_SCOPES and _distinct(scope):
                # The outer query may drop a column this DISTINCT (or UNION) compared: every output shapes the rows.
                context = Context(EdgeType.INDIRECT, Subtype.GROUP_BY, False, "DISTINCT of a subquery")
                lineage.rows.extend(compose(dep, context) for _, deps in lineage.columns for dep in deps)
            self._lineage[id(scope.expression)] = lineage
            rows.extend(lineage.rows)
        return lineage, rows

    def _fixpoint(self, scope: Scope, lineage: ScopeLineage, rows: list[Dependency]) -> ScopeLineage:
        """Return the lineage of a recursive CTE.

        Its recursive branch read again over the union so far (what the CTE's name stands for there) until no column
        gains a dependency; adds each pass's row dependencies to `rows`.
        """
        branches = scope.set_operation_scopes
        if len(branches) != 2 or not isinstance(branches[1].expression, exp.Select):
            raise UnsupportedConstructError(
                self._target,
                "the query uses a WITH RECURSIVE of more than one recursive branch, whose lineage is not traced",
                "write the recursive part as one SELECT",
            )
        anchor = self._lineage[id(branches[0].expression)]
        for _ in range(len(lineage.columns) * max(1, len(self._schema)) + 2):
            so_far = [(name, deps) for (name, _), (_, deps) in zip(anchor.columns, lineage.columns, strict=True)]
            self._lineage[id(branches[0].expression)] = ScopeLineage(columns=so_far, written=anchor.written)
            recursive = self._read_scope(branches[1])
            self._lineage[id(branches[1].expression)] = recursive
            rows.extend(recursive.rows)
            found = self._read_scope(scope)
            if [deps for _, deps in found.columns] == [deps for _, deps in lineage.columns]:
                return found
            lineage = found
        raise LineageError(
            self._target, "the recursive CTE's lineage does not settle", "write the recursion without WITH RECURSIVE"
        )

    def _read_scope(self, scope: Scope) -> ScopeLineage:
        node = scope.expression
        if isinstance(node, exp.Select):
            return self._read_select(scope, node)
        if isinstance(node, exp.SetOperation):
            return self._read_set_operation(scope, node)
        if isinstance(node, exp.Values):
            alias = node.args.get("alias")
            names = [c.name.lower() for c in alias.columns] if alias else []
            return ScopeLineage(columns=[(name, ()) for name in names])
        if isinstance(node, exp.Unnest):
            return self._read_unnest(scope, node)
        if isinstance(node, exp.Lateral):
            inner = node.this.this if isinstance(node.this, exp.Subquery) else node.this
            known = self._lineage.get(id(inner))
            if known is not None:
                return ScopeLineage(columns=list(known.columns))
        return ScopeLineage(placeable=False)

    def _walker(
        self, scope: Scope, aliases: dict[str, tuple[Dependency, ...]] | None = None, *, aliases_last: bool = False
    ) -> ExpressionWalker:
        return ExpressionWalker(lambda column: self._resolve(column, scope, aliases, aliases_last), self._query_inputs)

    def _read_select(self, scope: Scope, select: exp.Select) -> ScopeLineage:
        walker = self._walker(scope)
        columns = [
            (projection.alias_or_name.lower(), merge(walker.dependencies(projection))) for projection in select.selects
        ]
        rows: list[Dependency] = []
        for join in select.args.get("joins") or ():
            on = join.args.get("on")
            if on is not None:
                rows.extend(walker.dependencies(on, Context(EdgeType.INDIRECT, Subtype.JOIN, False, "JOIN ON")))
        for key, subtype, clause in ROW_CLAUSES:
            part = select.args.get(key)
            if part is not None:
                rows.extend(walker.dependencies(part, Context(EdgeType.INDIRECT, subtype, False, clause)))
        group = select.args.get("group")
        if group is not None and group.args.get("all"):
            grouped = Context(EdgeType.INDIRECT, Subtype.GROUP_BY, False, "GROUP BY ALL")
            for projection in select.selects:
                if not _aggregates(projection, select):
                    rows.extend(walker.dependencies(projection, grouped))
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            rows.extend(
                walker.dependencies(
                    distinct.args["on"], Context(EdgeType.INDIRECT, Subtype.GROUP_BY, False, "DISTINCT ON")
                )
            )
        order = select.args.get("order")
        if order is not None:
            rows.extend(self._order_dependencies(scope, order, columns))
        return ScopeLineage(columns=columns, rows=rows, written=self._written_names(scope, select))

    def _order_dependencies(
        self,
        scope: Scope,
        order: exp.Order,
        columns: list[tuple[str, tuple[Dependency, ...]]],
        outputs_only: bool = False,
    ) -> list[Dependency]:
        """Return the SORT dependencies of an ORDER BY as DuckDB binds it: ORDER BY ALL sorts by every output.

        A key that is a bare name is an output's alias first, and a name inside an expression is a source column first
        (an alias only when no source has that column). A set operation's ORDER BY (`outputs_only`) reads its outputs
        only.
        """
        sort = Context(EdgeType.INDIRECT, Subtype.SORT, False, "ORDER BY")
        outputs = dict(reversed(columns))
        found: list[Dependency] = []
        for ordered in order.expressions:
            key = ordered.this if isinstance(ordered, exp.Ordered) else ordered
            if isinstance(key, exp.Var) and str(key.this).upper() == "ALL":
                found.extend(compose(dep, sort) for _, deps in columns for dep in deps)
            elif outputs_only or (isinstance(key, exp.Column) and not key.table):
                found.extend(self._walker(scope, outputs).dependencies(key, sort))
            else:
                found.extend(self._walker(scope, outputs, aliases_last=True).dependencies(key, sort))
        return found

    def _written_names(self, scope: Scope, select: exp.Select) -> list[str]:
        """Return the SELECT's output names as DuckDB writes them.

        An alias as written, an unaliased expression by DuckDB's rendering of it, a column by the name its source gives
        it, a column list's names over all.
        """
        names = []
        for projection in select.selects:
            alias = projection.args.get("alias") if isinstance(projection, exp.Alias) else None
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            rendered = inner.meta.get(OUTPUT_NAME)
            if isinstance(alias, exp.Identifier) and WRITTEN_NAME in alias.meta:
                names.append(str(alias.meta[WRITTEN_NAME]))
            elif isinstance(rendered, str):
                names.append(rendered)
            elif isinstance(inner, exp.Column) and inner.name.lower() == projection.alias_or_name.lower():
                names.append(self._source_name(inner, scope))
            else:
                names.append(projection.alias_or_name.lower())
        listed = select.parent.meta.get(WRITTEN_COLUMNS) if select.parent is not None else None
        if isinstance(listed, list):
            names[: len(listed)] = listed[: len(names)]
        return names

    def _source_name(self, column: exp.Column, scope: Scope) -> str:
        """Return the name the source of a bare output column gives it (a subquery's output as written)."""
        name, table = column.name.lower(), column.table.lower()
        holder: Scope | None = scope
        while holder is not None and table:
            source = holder.sources.get(table)
            if isinstance(source, Scope):
                known = self._lineage.get(id(source.expression))
                return known.written_names.get(name, name) if known is not None else name
            if source is not None:
                return name
            holder = holder.parent
        return name

    def _read_unnest(self, scope: Scope, node: exp.Unnest) -> ScopeLineage:
        """An UNNEST of list columns as a source (`FROM t, unnest(t.tags) AS u(tag)`).

        Each named output is its list's elements (DIRECT TRANSFORMATION), and the lists shape the rows (INDIRECT JOIN).
        """
        alias = node.args.get("alias")
        names = [column.name.lower() for column in alias.columns] if alias else []
        if len(names) != len(node.expressions) or node.args.get("offset"):
            return ScopeLineage(placeable=False)
        walker = self._walker(scope)
        element = Context(EdgeType.DIRECT, Subtype.TRANSFORMATION, False, "an element of the list UNNEST reads")
        columns = [
            (name, merge(walker.dependencies(value, element)))
            for name, value in zip(names, node.expressions, strict=True)
        ]
        rows = walker.dependencies(node, Context(EdgeType.INDIRECT, Subtype.JOIN, False, "rows made by UNNEST"))
        return ScopeLineage(columns=columns, rows=rows)

    def _read_set_operation(self, scope: Scope, node: exp.SetOperation) -> ScopeLineage:
        branches = [self._lineage[id(branch.expression)] for branch in scope.set_operation_scopes]
        if node.args.get("by_name"):
            return self._read_by_name(scope, node, branches)
        names = [name for name, _ in branches[0].columns]
        for branch in branches[1:]:
            if len(branch.columns) != len(names):
                raise LineageError(
                    self._target,
                    f"the branches of a {node.key.upper()} have {len(names)} and {len(branch.columns)} columns",
                    "give every branch the same columns",
                )
        rows: list[Dependency] = []
        if isinstance(node, (exp.Except, exp.Intersect)):
            # Only the left side's values are returned; every column of both sides decides which rows are.
            compared = Context(EdgeType.INDIRECT, Subtype.FILTER, False, f"compared by {node.key.upper()}")
            rows.extend(compose(dep, compared) for branch in branches for _, deps in branch.columns for dep in deps)
            columns = list(branches[0].columns)
        else:
            columns = [
                (name, merge(dep for branch in branches for dep in branch.columns[i][1]))
                for i, name in enumerate(names)
            ]
        written = list(branches[0].written)
        listed = node.parent.meta.get(WRITTEN_COLUMNS) if node.parent is not None else None
        if isinstance(listed, list) and len(written) == len(names):
            written[: len(listed)] = listed[: len(written)]
        order = node.args.get("order")
        if order is not None:
            rows.extend(self._order_dependencies(scope, order, columns, outputs_only=True))
        return ScopeLineage(columns=columns, rows=rows, written=written)

    def _read_by_name(self, scope: Scope, node: exp.SetOperation, branches: list[ScopeLineage]) -> ScopeLineage:
        """A set operation BY NAME.

        One output per name of any branch, in order of first appearance, each the union of the branches' columns of that
        name (a branch without it gives NULL).
        """
        if isinstance(node, (exp.Except, exp.Intersect)):
            raise UnsupportedConstructError(
                self._target,
                f"the query uses {node.key.upper()} ... BY NAME, whose lineage is not traced",
                "list the columns of each side in one order",
            )
        merged: dict[str, list[Dependency]] = {}
        written: dict[str, str] = {}
        for branch in branches:
            for position, (name, deps) in enumerate(branch.columns):
                merged.setdefault(name, []).extend(deps)
                if len(branch.written) == len(branch.columns):
                    written.setdefault(name, branch.written[position])
        columns = [(name, merge(deps)) for name, deps in merged.items()]
        rows: list[Dependency] = []
        order = node.args.get("order")
        if order is not None:
            rows.extend(self._order_dependencies(scope, order, columns, outputs_only=True))
        return ScopeLineage(columns=columns, rows=rows, written=[written.get(name, name) for name, _ in columns])

    def _query_inputs(self, query: exp.Query) -> list[Dependency]:
        known = self._lineage.get(id(query))
        if known is None:
            raise LineageError(
                self._target,
                f"the subquery {query.sql(dialect='duckdb')[:60]} could not be placed in the statement",
                "rewrite it as a CTE",
            )
        return [dep for _, deps in known.columns for dep in deps]

    def _table(self, source: exp.Table) -> TableRef | None:
        return self._refs.get((source.db.lower(), source.name.lower()))

    def _base_column(self, table: TableRef, column: str) -> tuple[Dependency, ...]:
        key = (table, column)
        known = self._base.get(key)
        if known is None:
            if column not in self._schema[table]:
                raise UnknownColumnError(
                    self._target, f"{table} has no column {column}", "check the spelling against the catalog"
                )
            known = (Dependency(table.column(column), EdgeType.DIRECT, Subtype.IDENTITY, False, "copied as is"),)
            self._base[key] = known
        return known

    def _source_columns(self, source: exp.Table | Scope) -> list[str]:
        if isinstance(source, exp.Table):
            table = self._table(source)
            return list(self._schema[table]) if table is not None else []
        known = self._lineage.get(id(source.expression))
        return list(known.outputs) if known else []

    def _resolve(
        self,
        column: exp.Column | exp.TableColumn,
        scope: Scope,
        aliases: dict[str, tuple[Dependency, ...]] | None,
        aliases_last: bool = False,
    ) -> tuple[Dependency, ...]:
        if isinstance(column, exp.TableColumn):
            return self._whole_row(column.name.lower(), scope)
        name, table = column.name.lower(), column.table.lower()
        if not table:
            if (
                aliases is not None
                and aliases_last
                and name in aliases
                and not any(name in self._source_columns(source) for source in _selected(scope).values())
            ):
                return aliases[name]
            return self._resolve_unqualified(column, name, scope, None if aliases_last else aliases)
        holder: Scope | None = scope
        while holder is not None:
            source = holder.sources.get(table)
            if source is not None:
                return self._from_source(source, table, name)
            holder = holder.parent
        raise UnplaceableSourceError(
            self._target,
            f"{table}.{name} names {table}, which is no table, CTE or subquery of the statement",
            "qualify the column with a table alias",
        )

    def _from_source(self, source: exp.Table | Scope, alias: str, name: str) -> tuple[Dependency, ...]:
        if isinstance(source, exp.Table):
            table = self._table(source)
            if table is None:
                raise UnplaceableSourceError(
                    self._target,
                    f"{alias}.{name} comes from {source.name.lower()}, which is neither a catalog table nor a query",
                    "name a catalog table",
                )
            return self._base_column(table, name)
        known = self._lineage.get(id(source.expression))
        if known is None or not known.placeable:
            raise UnplaceableSourceError(
                self._target,
                f"{alias}.{name} comes from {source.expression.sql(dialect='duckdb')[:60]}, "
                "which is not a catalog table",
                "read it from an Iceberg table of the catalog",
            )
        deps = known.outputs.get(name)
        if deps is None:
            kind = "CTE" if source.scope_type == ScopeType.CTE else "subquery"
            raise UnknownColumnError(
                self._target, f"the {kind} {alias} has no column {name}", "check the spelling against its SELECT list"
            )
        return deps

    def _resolve_unqualified(
        self, column: exp.Column, name: str, scope: Scope, aliases: dict[str, tuple[Dependency, ...]] | None
    ) -> tuple[Dependency, ...]:
        if aliases is not None and name in aliases:
            return aliases[name]
        selected = _selected(scope)
        if name in selected and not any(name in self._source_columns(source) for source in selected.values()):
            return self._whole_row(name, scope)
        holders: list[tuple[str, exp.Table | Scope]] = []
        readable: list[str] = []
        for alias, source in selected.items():
            readable.append(self._describe(alias, source))
            if name in self._source_columns(source):
                holders.append((alias, source))
        if len(holders) == 1:
            alias, source = holders[0]
            return self._from_source(source, alias, name)
        if holders:
            names = " or ".join(self._describe(alias, source) for alias, source in holders)
            raise AmbiguousColumnError(
                self._target, f"the column {name} could come from {names}", "qualify it with its table's alias"
            )
        if len(readable) == 1:
            raise UnknownColumnError(
                self._target, f"{readable[0]} has no column {name}", "check the spelling against the catalog"
            )
        raise UnknownColumnError(
            self._target,
            f"no table the query reads has a column {name} (it reads {', '.join(readable) or 'no table'})",
            "check the spelling against the catalog",
        )

    def _whole_row(self, alias: str, scope: Scope) -> tuple[Dependency, ...]:
        """Return the dependencies of a whole row read as one value (`SELECT l FROM t AS l`).

        Every column of its source.
        """
        holder: Scope | None = scope
        while holder is not None:
            source = holder.sources.get(alias)
            if source is not None:
                return tuple(
                    dep for name in self._source_columns(source) for dep in self._from_source(source, alias, name)
                )
            holder = holder.parent
        raise UnplaceableSourceError(
            self._target,
            f"{alias} is no table, CTE or subquery of the statement",
            "qualify the column with a table alias",
        )

    def _describe(self, alias: str, source: exp.Table | Scope) -> str:
        if isinstance(source, exp.Table):
            table = self._table(source)
            return str(table) if table is not None else source.name.lower()
        return f"the CTE {alias}" if source.scope_type == ScopeType.CTE else f"the subquery {alias}"
