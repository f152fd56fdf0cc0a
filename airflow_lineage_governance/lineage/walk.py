"""How each source column takes part in one expression.

The OpenLineage type, subtype and masking of every column on the way from the expression's root to its leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from sqlglot import exp

from airflow_lineage_governance.kinds import DIRECT_RANK, EdgeType, Subtype
from airflow_lineage_governance.lineage.model import Dependency

HASH_FUNCTIONS = (exp.MD5, exp.MD5Digest, exp.SHA, exp.SHA2, exp.StandardHash)
# Window functions that pick a row's value rather than aggregate: TRANSFORMATION, not AGGREGATION.
NAVIGATION_FUNCTIONS = (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue)
HASH_NAMES = frozenset(
    {
        "md5",
        "md5_number",
        "md5_number_lower",
        "md5_number_upper",
        "sha1",
        "sha256",
        "sha512",
        "sha2",
        "hash",
        "xxhash",
        "xxh64",
        "murmurhash3_32",
        "crc32",
        "blake3",
        "hmac",
        "fnv_hash",
    }
)


@dataclass(frozen=True)
class Context:
    """Where in an expression a column sits: how its value reaches the output."""

    type: EdgeType
    subtype: Subtype
    masking: bool = False
    description: str = ""


ROOT = Context(EdgeType.DIRECT, Subtype.IDENTITY, False, "copied as is")

ResolveColumn = Callable[[exp.Column | exp.TableColumn], tuple[Dependency, ...]]
ResolveQuery = Callable[[exp.Query], Iterable[Dependency]]


def compose(dependency: Dependency, context: Context) -> Dependency:
    """Return a dependency of a derived column seen through the context that reads that column."""
    masking = dependency.masking or context.masking
    if context.type == EdgeType.INDIRECT:
        return Dependency(dependency.source, EdgeType.INDIRECT, context.subtype, masking, context.description)
    if dependency.type == EdgeType.INDIRECT:
        return replace(dependency, masking=masking) if masking != dependency.masking else dependency
    if DIRECT_RANK[context.subtype] > DIRECT_RANK[dependency.subtype]:
        return Dependency(dependency.source, EdgeType.DIRECT, context.subtype, masking, context.description)
    if masking == dependency.masking:
        return dependency
    return replace(dependency, masking=masking)


def _as_value(context: Context, node: exp.Expr) -> Context:
    if context.type != EdgeType.DIRECT or context.subtype != Subtype.IDENTITY:
        return context
    return Context(EdgeType.DIRECT, Subtype.TRANSFORMATION, context.masking, f"computed by {_name(node)}")


def _as_aggregate(context: Context, node: exp.Expr) -> Context:
    if context.type != EdgeType.DIRECT or context.subtype == Subtype.AGGREGATION:
        return context
    return Context(EdgeType.DIRECT, Subtype.AGGREGATION, context.masking, f"aggregated by {_name(node)}")


def _indirect(context: Context, subtype: Subtype, description: str) -> Context:
    if context.type == EdgeType.INDIRECT:
        return context
    return Context(EdgeType.INDIRECT, subtype, context.masking, description)


def _name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).upper()
    if isinstance(node, exp.Func):
        return node.sql_name()
    if isinstance(node, exp.TableColumn):
        return "a whole row"
    return node.key.upper()


def _is_hash(node: exp.Expr) -> bool:
    if isinstance(node, HASH_FUNCTIONS):
        return True
    return isinstance(node, exp.Anonymous) and str(node.name).lower() in HASH_NAMES


class ExpressionWalker:
    """Collects the dependencies of expressions of one scope.

    Columns and subqueries are resolved through the callables it is given.
    """

    def __init__(self, resolve_column: ResolveColumn, resolve_query: ResolveQuery) -> None:
        self._resolve_column = resolve_column
        self._resolve_query = resolve_query

    def dependencies(self, node: exp.Expr, context: Context = ROOT) -> list[Dependency]:
        """Return every dependency of `node` read in `context` (unmerged)."""
        found: list[Dependency] = []
        self._walk(node, context, found)
        return found

    def _walk(self, node: exp.Expr | None, context: Context, found: list[Dependency]) -> None:
        if node is None:  # an argument the text leaves out (`sum(ORDER BY x)`): DuckDB's binding refuses it
            return
        if isinstance(node, exp.Column):
            found.extend(compose(d, context) for d in self._resolve_column(node))
        elif isinstance(node, exp.TableColumn):  # a whole row: a struct of every column of its source
            row = _as_value(context, node)
            found.extend(compose(d, row) for d in self._resolve_column(node))
        elif isinstance(node, (exp.Alias, exp.Paren, exp.Subquery)):
            self._walk(node.this, context, found)
        elif isinstance(node, exp.Query):
            value = _as_value(context, node)
            found.extend(compose(d, value) for d in self._resolve_query(node))
        elif isinstance(node, exp.Exists):
            return  # its rows are read by its own scope; it passes no value
        elif isinstance(node, exp.Window):
            self._walk_window(node, context, found)
        elif isinstance(node, exp.Filter):
            self._walk_filter(node, context, found)
        elif isinstance(node, exp.Case):
            self._walk_case(node, context, found)
        elif isinstance(node, exp.If):
            self._walk_if(node, context, found)
        elif isinstance(node, exp.WithinGroup):
            aggregate = _as_aggregate(context, node.this)
            self._walk(node.this, aggregate, found)
            self._walk_children(node.expression, aggregate, found)
        elif isinstance(node, exp.AggFunc):
            self._walk_aggregate(node, _as_aggregate(context, node), found)
        elif _is_hash(node):
            hashed = _as_value(context, node)
            self._walk_children(node, replace(hashed, masking=True), found)
        else:
            self._walk_children(node, _as_value(context, node) if node.args else context, found)

    def _walk_children(self, node: exp.Expr, context: Context, found: list[Dependency]) -> None:
        for child in node.iter_expressions():
            self._walk(child, context, found)

    def _walk_aggregate(self, node: exp.Expr, context: Context, found: list[Dependency]) -> None:
        for child in node.iter_expressions():
            if isinstance(child, exp.Order):
                self._walk(child.this, context, found)
                sort = _indirect(context, Subtype.SORT, f"ORDER BY inside {_name(node)}")
                for key in child.expressions:
                    self._walk(key, sort, found)
            else:
                self._walk(child, context, found)

    def _walk_window(self, node: exp.Window, context: Context, found: list[Dependency]) -> None:
        function = node.this
        if isinstance(function, NAVIGATION_FUNCTIONS):
            self._walk_children(function, _as_value(context, function), found)
        elif isinstance(function, exp.AggFunc) or (
            isinstance(function, exp.Filter) and isinstance(function.this, exp.AggFunc)
        ):
            self._walk(function, context, found)
        else:
            self._walk_children(function, _as_value(context, function), found)
        window = _indirect(context, Subtype.WINDOW, f"PARTITION BY / ORDER BY of the {_name(function)} window")
        for key in node.args.get("partition_by") or ():
            self._walk(key, window, found)
        order = node.args.get("order")
        if order is not None:
            for key in order.expressions:
                self._walk(key, window, found)

    def _walk_filter(self, node: exp.Filter, context: Context, found: list[Dependency]) -> None:
        self._walk(node.this, context, found)
        where = node.expression
        filtered = _indirect(context, Subtype.FILTER, f"FILTER (WHERE …) of {_name(node.this)}")
        self._walk(where, filtered, found)

    def _walk_if(self, node: exp.If, context: Context, found: list[Dependency]) -> None:
        condition = _indirect(context, Subtype.CONDITIONAL, "condition of IF")
        self._walk(node.this, condition, found)
        for branch in (node.args.get("true"), node.args.get("false")):
            if branch is not None:
                self._walk(branch, _as_value(context, node), found)

    def _walk_case(self, node: exp.Case, context: Context, found: list[Dependency]) -> None:
        condition = _indirect(context, Subtype.CONDITIONAL, "condition of CASE")
        value = _as_value(context, node)
        if node.this is not None:
            self._walk(node.this, condition, found)
        for branch in node.args.get("ifs") or ():
            self._walk(branch.this, condition, found)
            self._walk(branch.args["true"], value, found)
        default = node.args.get("default")
        if default is not None:
            self._walk(default, value, found)
