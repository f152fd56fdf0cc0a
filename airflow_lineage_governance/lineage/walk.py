"""How each source column takes part in one expression.

The OpenLineage type, subtype and masking of every column on the way from the expression's root to its leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import cast

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


(
    _COLUMN,
    _WHOLE_ROW,
    _WRAPPER,
    _QUERY,
    _EXISTS,
    _WINDOW,
    _FILTER,
    _CASE,
    _IF,
    _WITHIN_GROUP,
    _AGGREGATE,
    _HASH,
    _NAMED_FUNCTION,
    _OTHER,
) = range(14)
_KINDS: dict[type, int] = {}
"""Each node class met so far with its kind (node_kind), so that a walk tests a node's class once."""


def node_kind(kind: type) -> int:
    """Return how the walker reads nodes of class `kind`: the first of its cases that the class falls in.

    Args:
        kind: a sqlglot node class.

    Returns:
        One of the module's kinds, tested in the order the walker reads them (an anonymous function may be a hash,
        by its name).
    """
    for code, classes in (
        (_COLUMN, exp.Column),
        (_WHOLE_ROW, exp.TableColumn),
        (_WRAPPER, (exp.Alias, exp.Paren, exp.Subquery)),
        (_QUERY, exp.Query),
        (_EXISTS, exp.Exists),
        (_WINDOW, exp.Window),
        (_FILTER, exp.Filter),
        (_CASE, exp.Case),
        (_IF, exp.If),
        (_WITHIN_GROUP, exp.WithinGroup),
        (_AGGREGATE, exp.AggFunc),
        (_HASH, HASH_FUNCTIONS),
        (_NAMED_FUNCTION, exp.Anonymous),
    ):
        if issubclass(kind, classes):
            return code
    return _OTHER


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


_COMPUTED: dict[tuple[bool, type], Context] = {}
"""The context of a value computed by nodes of one class (whose name is the class's), masked or not."""


def _as_value(context: Context, node: exp.Expr) -> Context:
    if context.type != EdgeType.DIRECT or context.subtype != Subtype.IDENTITY:
        return context
    if isinstance(node, exp.Anonymous):  # named by the function the text calls
        return Context(EdgeType.DIRECT, Subtype.TRANSFORMATION, context.masking, f"computed by {_name(node)}")
    key = (context.masking, type(node))
    computed = _COMPUTED.get(key)
    if computed is None:
        computed = Context(EdgeType.DIRECT, Subtype.TRANSFORMATION, context.masking, f"computed by {_name(node)}")
        _COMPUTED[key] = computed
    return computed


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
        kind = _KINDS.get(type(node))
        if kind is None:
            kind = _KINDS[type(node)] = node_kind(type(node))
        if kind == _COLUMN:
            found.extend(compose(d, context) for d in self._resolve_column(cast(exp.Column, node)))
        elif kind == _OTHER:
            self._walk_children(node, _as_value(context, node) if node.args else context, found)
        elif kind == _WRAPPER:
            self._walk(node.this, context, found)
        else:
            self._walk_special(kind, node, context, found)

    def _walk_special(self, kind: int, node: exp.Expr, context: Context, found: list[Dependency]) -> None:
        """Walk a node of any kind but a column, a wrapper, or a node of no case of its own."""
        if kind == _WHOLE_ROW:  # a whole row: a struct of every column of its source
            row = _as_value(context, node)
            found.extend(compose(d, row) for d in self._resolve_column(cast(exp.TableColumn, node)))
        elif kind == _QUERY:
            value = _as_value(context, node)
            found.extend(compose(d, value) for d in self._resolve_query(cast(exp.Query, node)))
        elif kind == _EXISTS:
            return  # its rows are read by its own scope; it passes no value
        elif kind == _WINDOW:
            self._walk_window(cast(exp.Window, node), context, found)
        elif kind == _FILTER:
            self._walk_filter(cast(exp.Filter, node), context, found)
        elif kind == _CASE:
            self._walk_case(cast(exp.Case, node), context, found)
        elif kind == _IF:
            self._walk_if(cast(exp.If, node), context, found)
        elif kind == _WITHIN_GROUP:
            aggregate = _as_aggregate(context, node.this)
            self._walk(node.this, aggregate, found)
            self._walk_children(node.expression, aggregate, found)
        elif kind == _AGGREGATE:
            self._walk_aggregate(node, _as_aggregate(context, node), found)
        elif kind == _HASH or (kind == _NAMED_FUNCTION and _is_hash(node)):
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
