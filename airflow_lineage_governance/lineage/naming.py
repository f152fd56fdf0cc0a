"""How DuckDB names an output column that the statement does not name.

By its own rendering of the expression (`SUM(x)` is `sum(x)`, `a+1` is `(a + 1)`, `count(*)` is `count_star()`), and how
a CTAS renames a duplicate output name (`x`, `x` are written `x`, `x_1`). Each rule here was read off DuckDB by
executing it (tests/lineage/test_naming.py checks every rendered class against DuckDB); an expression class whose
rendering sqlglot's tree cannot reproduce exactly (a type name whose spelling the tree loses, ORDER BY inside OVER,
LIKE, subqueries, ...) gets no name, and the engine refuses it rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlglot import exp

OUTPUT_NAME = "duckdb_output_name"
"""The meta key under which the engine keeps the name DuckDB gives an unaliased output."""
WRITTEN_NAME = "written_name"
"""The meta key of an output alias's name as the statement writes it (DuckDB keeps an alias's case)."""
WRITTEN_COLUMNS = "written_columns"
"""The meta key of a derived table's or CTE's column list (`AS s (A, B)`) as written, kept on its Subquery or
CTE node (sqlglot's qualifier moves the list into the SELECT and folds its case)."""

KEYWORDS = frozenset(
    """
    abort absolute access action add admin after aggregate all also alter always analyse analyze and anti any approx
    array as asc asof assertion assignment asymmetric at attach attribute authorization backward before begin
    between bigint binary bit boolean both by cache call called cascade cascaded case cast catalog centuries century
    chain char character characteristics check checkpoint class close cluster coalesce collate collation column
    columns columns comment comments commit committed compression concurrently configuration conflict connect
    connection constraint constraints content continue conversion copy cost create cross csv cube current cursor
    cycle data database day days deallocate dec decade decades decimal declare default defaults deferrable deferred
    definer delete delimiter delimiters depends desc describe destroy detach dictionary disable discard disconnect
    distance distinct do document domain double drop each else enable encoding encrypted end enum error escape event
    exact except exclude excluding exclusive execute exists explain export export_state extension extensions
    external extract false family fetch filter first float following for force foreign forward freeze from full
    function functions generated generated glob global grant granted group grouping grouping_id groups handler
    having header hold hour hours identity if ignore ilike immediate immutable implicit import in include including
    increment index indexes inherit inherits initially inline inner inout input insensitive insert install instead
    int integer intersect interval into invoker is isnull isolation join json key label lambda language large last
    lateral leading leakproof left level like limit listen load local location lock locked logged macro map map
    mapping match matched materialized maxvalue merge method microsecond microseconds millennia millennium
    millisecond milliseconds minute minutes minvalue mode month months move name names national natural nchar
    nearest new next no none not nothing notify notnull nowait null nullif nulls numeric object of off offset oids
    old on only operator option options or order ordinality others out outer over overlaps overlay overriding owned
    owner parallel parser partial partition partitioned passing password percent persistent pivot pivot_longer
    pivot_wider placing plans policy position positional pragma preceding precision prepare prepared preserve
    primary prior privileges procedural procedure program publication qualify quarter quarters quote range read real
    reassign recheck recursive ref references referencing refresh register reindex relative release rename
    repeatable replace replica reset resource resources respect restart restrict returning returns revoke right role
    rollback rollup row rows rule sample savepoint schema schemas scope scroll search second seconds secret secure
    security select semi sequence sequences serializable server session set setof sets share show similar similarity
    simple skip smallint snapshot some sorted source sql stable standalone start statement statistics stdin stdout
    storage stored strict strip struct struct subscription substring summarize symmetric sysid system table tables
    tablesample tablespace target temp template temporary text then ties time timestamp to trailing transaction
    transform treat trigger trim true truncate trusted try_cast try_cast tuple tuple type types unbounded
    uncommitted unencrypted union unique unknown unlisten unlogged unpack unpivot until update use user using vacuum
    valid validate validator value values varchar variable variadic varying verbose version view views virtual
    volatile week weeks when where whitespace window with within without work wrapper write xml xmlattributes
    xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable year years
    yes zone""".split()
)
"""DuckDB's keywords (`SELECT keyword_name FROM duckdb_keywords()`): a name that is one is written quoted."""

_PLAIN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_NUMBER = re.compile(r"\d+(\.\d*)?|\.\d+")
_BINARY: dict[type[exp.Expr], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.IntDiv: "//",
    exp.DPipe: "||",
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_CONNECTIVES: dict[type[exp.Expr], str] = {exp.And: "AND", exp.Or: "OR"}
# sqlglot's function classes whose arguments DuckDB renders in this order, and no other argument set.
_FUNCTION_ARGS: dict[type[exp.Expr], tuple[str, ...]] = {
    exp.Sum: ("this",),
    exp.Avg: ("this",),
    exp.Min: ("this",),
    exp.Max: ("this",),
    exp.Count: ("this",),
    exp.Round: ("this", "decimals"),
    exp.Substring: ("this", "start", "length"),
    exp.Abs: ("this",),
    exp.Upper: ("this",),
    exp.Lower: ("this",),
    exp.Year: ("this",),
    exp.First: ("this",),
    exp.Nullif: ("this", "expression"),
    exp.Stddev: ("this",),
    exp.StddevSamp: ("this",),
    exp.StddevPop: ("this",),
    exp.Variance: ("this",),
    exp.RowNumber: (),
    exp.Rank: (),
    exp.DenseRank: (),
    exp.Length: ("this",),
    exp.MD5: ("this",),
    exp.Ln: ("this",),
    exp.Sqrt: ("this",),
    exp.Exp: ("this",),
    exp.Sign: ("this",),
    exp.Month: ("this",),
    exp.Day: ("this",),
    exp.Quarter: ("this",),
    exp.Trunc: ("this",),
    exp.Reverse: ("this",),
    exp.Ascii: ("this",),
    exp.Median: ("this",),
    exp.Mode: ("this",),
    exp.Last: ("this",),
    exp.ArrayAgg: ("this",),
    exp.LogicalAnd: ("this",),
    exp.Left: ("this", "expression"),
    exp.Right: ("this", "expression"),
    exp.Pow: ("this", "expression"),
    exp.Corr: ("this", "expression"),
    exp.CovarPop: ("this", "expression"),
}
# A function sqlglot parses by a syntax of its own records no position for its name: the one name that syntax has.
_SPECIAL_SYNTAX: dict[type[exp.Expr], str] = {exp.Substring: "substring", exp.Min: "min", exp.Max: "max"}
# Flags sqlglot's DuckDB parser sets on a function that change nothing DuckDB renders.
_FLAGS: dict[type[exp.Expr], frozenset[str]] = {exp.Count: frozenset({"big_int"})}


class _NoName(Exception):
    """The expression holds a part whose DuckDB rendering this module does not reproduce."""


def output_name(node: exp.Expr, text: str) -> str | None:
    """Return the name DuckDB gives the unaliased output expression `node`.

    `node` is parsed from `text`, whose positions its nodes carry; None when that name cannot be told from the tree
    exactly.
    """
    try:
        return _render(node, text)
    except _NoName:
        return None


def deduplicated(names: Iterable[str]) -> list[str]:
    """Return the names as a DuckDB CTAS writes them.

    A name equal (case-insensitively) to an earlier one gets the first free suffix `_1`, `_2`, ... (free among the names
    so far, renamed ones included).
    """
    used: set[str] = set()
    written: list[str] = []
    for name in names:
        candidate, suffix = name, 0
        while candidate.lower() in used:
            suffix += 1
            candidate = f"{name}_{suffix}"
        used.add(candidate.lower())
        written.append(candidate)
    return written


def identifier(name: str) -> str:
    """Return `name` as DuckDB writes an identifier: quoted when it is a keyword or not a plain name."""
    if _PLAIN.fullmatch(name) and name.lower() not in KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def mark_written_names(query: exp.Expr) -> None:
    """Mark every output alias of `query` with the name as written, before the qualifier folds their case.

    Every derived table's or CTE's column list is marked on its node too.
    """
    for node in query.find_all(exp.Alias, exp.TableAlias):
        if isinstance(node, exp.Alias):
            alias = node.args.get("alias")
            if isinstance(alias, exp.Identifier) and alias.this:
                alias.meta[WRITTEN_NAME] = alias.this
        elif node.args.get("columns") and isinstance(node.parent, (exp.Subquery, exp.CTE)):
            node.parent.meta[WRITTEN_COLUMNS] = [column.name for column in node.args["columns"]]


def _written(node: exp.Expr, text: str) -> str | None:
    """Return the text of the token `node` was parsed at (a function's name, a literal), if positions are known."""
    start, end = node.meta.get("start"), node.meta.get("end")
    if not text or not isinstance(start, int) or not isinstance(end, int):
        return None
    return text[start : end + 1]


def _render(node: exp.Expr, text: str) -> str:
    kind = type(node)
    if kind is exp.Paren:
        return _render(node.this, text)
    if kind is exp.Column:
        return _column(node)
    if kind in (exp.Literal, exp.Null, exp.Boolean, exp.Neg):
        return _constant(node, text)
    if kind in _BINARY:
        return f"({_render(node.this, text)} {_BINARY[kind]} {_render(node.expression, text)})"
    if kind in _CONNECTIVES:
        return "(" + f" {_CONNECTIVES[kind]} ".join(_render(part, text) for part in _flattened(node, kind)) + ")"
    if kind is exp.Not:
        inner = node.this
        if type(inner) is exp.Is and type(inner.expression) is exp.Null:
            return f"({_render(inner.this, text)} IS NOT NULL)"
        return f"(NOT {_render(inner, text)})"
    if kind is exp.Is and type(node.expression) is exp.Null:
        return f"({_render(node.this, text)} IS NULL)"
    if kind is exp.In and not node.args.get("query") and not node.args.get("unnest") and node.expressions:
        values = ", ".join(_render(value, text) for value in node.expressions)
        return f"({_render(node.this, text)} IN ({values}))"
    if kind is exp.Between and not node.args.get("symmetric"):
        return (
            f"({_render(node.this, text)} BETWEEN {_render(node.args['low'], text)} AND "
            f"{_render(node.args['high'], text)})"
        )
    return _render_call(node, text)


def _render_call(node: exp.Expr, text: str) -> str:
    """Return the name of a CASE, CAST, COALESCE, FILTER, window or function call; raise _NoName otherwise."""
    kind = type(node)
    if kind is exp.Case:
        return _case(node, text)
    if kind is exp.Cast:
        return _cast(node, text)
    if kind is exp.Coalesce and set(_set_args(node)) <= {"this", "expressions"}:
        return "COALESCE(" + ", ".join(_render(arg, text) for arg in [node.this, *node.expressions]) + ")"
    if kind is exp.Filter:
        return f"{_render(node.this, text)} FILTER (WHERE {_render(node.expression.this, text)})"
    if kind is exp.Window:
        return _window(node, text)
    if kind is exp.Anonymous or kind in _FUNCTION_ARGS:
        return _function(node, text)
    raise _NoName


def _set_args(node: exp.Expr) -> list[str]:
    return [key for key, value in node.args.items() if value is not None and value != []]


def _flattened(node: exp.Expr, kind: type[exp.Expr]) -> list[exp.Expr]:
    """Return the operands of a chain of one connective (DuckDB flattens `(a AND b) AND c` into one)."""
    parts: list[exp.Expr] = []
    for side in (node.this, node.expression):
        while type(side) is exp.Paren:
            side = side.this
        parts.extend(_flattened(side, kind) if type(side) is kind else [side])
    return parts


def _column(node: exp.Expr) -> str:
    parts = node.parts if isinstance(node, exp.Column) else []
    if not parts or any(not isinstance(part, exp.Identifier) for part in parts):
        raise _NoName
    return ".".join(identifier(part.this) for part in parts)


def _constant(node: exp.Expr, text: str) -> str:
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Neg):
        inner = node.this
        while type(inner) is exp.Paren:
            inner = inner.this
        if type(inner) is exp.Literal and not inner.is_string:
            return "-" + _constant(inner, text)
        return f"(-({_render(node.this, text)}))"
    value = str(node.this)
    if node.is_string:
        if "\\" in value or not value.isprintable():
            raise _NoName
        return "'" + value.replace("'", "''") + "'"
    written = _written(node, text)
    if written is None and value.isdigit():
        written = value
    if written is None or not _NUMBER.fullmatch(written):
        raise _NoName
    return written


def _case(node: exp.Expr, text: str) -> str:
    subject = node.this
    parts = ["CASE "]
    for branch in node.args.get("ifs") or ():
        condition = _render(branch.this, text)
        if subject is not None:
            condition = f"({_render(subject, text)} = {condition})"
        parts.append(f" WHEN ({condition}) THEN ({_render(branch.args['true'], text)})")
    default = node.args.get("default")
    parts.append(f" ELSE {_render(default, text) if default is not None else 'NULL'} END")
    return "".join(parts)


def _cast(node: exp.Expr, text: str) -> str:
    """A CAST to DECIMAL(p, s): DuckDB writes DECIMAL and NUMERIC alike.

    Other types are refused, since the tree loses how the type was spelled (`INT` is written INTEGER, `INT4` INT4) and a
    bare DECIMAL reads as (18, 3).
    """
    to = node.args.get("to")
    if not isinstance(to, exp.DataType):
        raise _NoName
    params = to.expressions
    if to.this != exp.DataType.Type.DECIMAL or len(params) != 2 or set(_set_args(node)) - {"this", "to"}:
        raise _NoName
    precision, scale = (_render(param.this, text) for param in params)
    if (precision, scale) == ("18", "3"):
        raise _NoName
    return f"CAST({_render(node.this, text)} AS DECIMAL({precision}, {scale}))"


def _window(node: exp.Expr, text: str) -> str:
    """A window with PARTITION BY only: the tree cannot tell `ORDER BY x` from `ORDER BY x NULLS LAST`.

    DuckDB writes `count(*)` over a window as `count()`, and `count_star()` elsewhere.
    """
    if set(_set_args(node)) - {"this", "partition_by", "over"}:
        raise _NoName
    partition = node.args.get("partition_by") or []
    inside = "PARTITION BY " + ", ".join(_render(key, text) for key in partition) if partition else ""
    function = _render(node.this, text)
    if function.startswith("count_star()"):  # over a window DuckDB writes count(*) as count()
        function = "count()" + function.removeprefix("count_star()")
    return f"{function} OVER ({inside})"


def _function(node: exp.Expr, text: str) -> str:
    kind = type(node)
    if kind is exp.Anonymous:
        args = list(node.expressions)
        if set(_set_args(node)) - {"this", "expressions"}:
            raise _NoName
    else:
        keys = _FUNCTION_ARGS[kind]
        if set(_set_args(node)) - set(keys) - _FLAGS.get(kind, frozenset()):
            raise _NoName
        args = [node.args[key] for key in keys if node.args.get(key) is not None]
    written = _written(node, text)
    if written is None:
        written = _SPECIAL_SYNTAX.get(kind) if kind is not exp.Anonymous else None
    if written is None or not _PLAIN.fullmatch(written):
        raise _NoName
    name = written.lower()
    distinct = ""
    if len(args) == 1 and type(args[0]) is exp.Distinct:
        inner = args[0]
        if set(_set_args(inner)) - {"expressions"}:
            raise _NoName
        distinct, args = "DISTINCT ", list(inner.expressions)
    if kind is exp.Count and len(args) == 1 and type(args[0]) is exp.Star and not distinct:
        return "count_star()"
    if any(type(arg) is exp.Star for arg in args):
        raise _NoName
    return f"{identifier(name)}({distinct}{', '.join(_render(arg, text) for arg in args)})"
