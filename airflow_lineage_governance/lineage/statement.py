"""Which statements the engine reads, and what they write: the target, its columns and the query."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import cast

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Tokenizer

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage.dml_forms import dml_kind, refuse_unread_forms
from airflow_lineage_governance.lineage.errors import (
    SqlSyntaxError,
    StatementTooLargeError,
    UnknownTableError,
    UnsupportedStatementError,
)
from airflow_lineage_governance.refs import TableRef

MAX_STATEMENT_CHARS = 2_000_000
MAX_NAMESPACE_LEVELS = 2
"""DuckDB names a table by at most catalog.schema.table, so a namespace has at most two levels."""
MAX_NESTING = 120

_COMMENT = re.compile(r"\s*(--[^\n]*(\n|$)|/\*.*?\*/)", re.S)
_FIRST_WORD = re.compile(r"[\s(]*([A-Za-z_]+)")
_TARGET_AFTER = {
    "MERGE": re.compile(r"\bMERGE\s+INTO\s+([\w.\"`]+)", re.I),
    "UPDATE": re.compile(r"\bUPDATE\s+([\w.\"`]+)", re.I),
    "DELETE": re.compile(r"\bDELETE\s+FROM\s+([\w.\"`]+)", re.I),
    "CREATE": re.compile(r"\b(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"`]+)", re.I),
    "INSERT": re.compile(r"\bINTO\s+([\w.\"`]+)", re.I),
    "TRUNCATE": re.compile(r"\bTRUNCATE\s+(?:TABLE\s+)?([\w.\"`]+)", re.I),
    "DROP": re.compile(r"\bDROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?([\w.\"`]+)", re.I),
    "ALTER": re.compile(r"\bALTER\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?([\w.\"`]+)", re.I),
}
_ONLY = "lineage is read only from CREATE ... AS SELECT, INSERT ... SELECT, MERGE, UPDATE and DELETE"
_KEYWORDS = ("CREATE", "INSERT", "MERGE", "UPDATE", "DELETE", "WITH")


@dataclass
class Survey:
    """The nodes of a query the engine needs, found in one walk of its tree."""

    tables: list[exp.Table] = field(default_factory=list)
    ctes: set[str] = field(default_factory=set)
    using_joins: list[exp.Join] = field(default_factory=list)
    coalesces: list[exp.Coalesce] = field(default_factory=list)
    queries: int = 0
    nested: exp.Expr | None = None
    shorthands: list[exp.Expr] = field(default_factory=list)
    """DuckDB shorthands the engine writes out: COLUMNS(...), PIVOT/UNPIVOT, LATERAL, a star or a reference
    deeper than table.column on a column."""
    named_windows: bool = False
    """Whether a SELECT of the query has a WINDOW clause."""
    cased: bool = False
    """Whether a name in the query holds a letter that is not lower case (the qualifier then folds its case)."""
    constructs: list[exp.Expr] = field(default_factory=list)
    """The query's nodes of the classes constructs.refuse_untraceable looks at (CHECKED_CONSTRUCTS), in walk order."""
    derived: list[exp.Expr] = field(default_factory=list)
    """The query's parenthesized queries (sqlglot's Subquery) and the sources that are no table (UNNEST, VALUES,
    LATERAL and other table-making functions), in walk order."""
    namespaced_columns: bool = False
    """Whether a column reference has three parts or more (`ns.t.c`, or a struct's field read so)."""
    columns: list[exp.Column] = field(default_factory=list)
    """The query's column references, in walk order."""


_NESTED = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Command)
_SHORTHANDS = (exp.Columns, exp.Pivot, exp.Lateral)
CHECKED_CONSTRUCTS = (exp.Lateral, exp.Pivot, exp.Select, exp.Window, exp.Dot)
"""The node classes constructs.refuse_untraceable looks at: no node of another class is refused."""
_OTHER, _COLUMN, _TABLE, _QUERY, _CTE, _JOIN, _COALESCE, _NESTED_STATEMENT, _IDENTIFIER, _TABLE_MAKER = range(10)
_ROLES: dict[type, tuple[bool, int, bool]] = {}
"""Each node class met so far with its role in a survey (node_role), so that a walk tests a node's class once."""


_PLAIN = (False, _OTHER, False)
"""The role of a node the survey passes over (one tuple, compared by identity)."""
_NAME = (False, _IDENTIFIER, False)
"""The role of an identifier (one tuple, compared by identity)."""


def node_role(kind: type) -> tuple[bool, int, bool]:
    """Return the role in a survey of nodes of class `kind`.

    Whether they are DuckDB shorthands, which part of a survey they belong to, and whether they are constructs
    refuse_untraceable looks at.

    Args:
        kind: a sqlglot node class.

    Returns:
        (shorthand, role, checked): role is one of the module's roles, tested in the order `survey` reads them.
    """
    if issubclass(kind, exp.Column):
        return False, _COLUMN, False
    if issubclass(kind, exp.Identifier):
        return _NAME
    shorthand = issubclass(kind, _SHORTHANDS)
    checked = issubclass(kind, CHECKED_CONSTRUCTS)
    for role, classes in (
        (_TABLE, exp.Table),
        (_QUERY, exp.Query),
        (_CTE, exp.CTE),
        (_JOIN, exp.Join),
        (_COALESCE, exp.Coalesce),
        (_NESTED_STATEMENT, _NESTED),
        (_TABLE_MAKER, exp.UDTF),
    ):
        if issubclass(kind, classes):
            return shorthand, role, checked
    return _PLAIN if not (shorthand or checked) else (shorthand, _OTHER, checked)


def survey(query: exp.Expr) -> Survey:
    """Return the tables, CTE names, USING joins, COALESCEs, nested statements and DuckDB shorthands of the query.

    And whether a name in it holds a letter that is not lower case, and the nodes refuse_untraceable looks at.
    """
    found = Survey()
    roles = _ROLES
    cased = False
    for node in query.walk():
        kind = type(node)
        role = roles.get(kind)
        if role is None:
            role = roles[kind] = node_role(kind)
        if role is _PLAIN:
            continue
        if role is _NAME:
            if not cased:
                name = node.this
                cased = not isinstance(name, str) or not (name.islower() or name == name.lower())
            continue
        shorthand, part, checked = role
        if checked:
            found.constructs.append(node)
        if part == _COLUMN:
            found.columns.append(cast(exp.Column, node))
            if isinstance(node.this, exp.Star) or node.args.get("catalog"):
                found.shorthands.append(node)
            elif node.args.get("db"):
                found.namespaced_columns = True
            continue
        if shorthand:
            found.shorthands.append(node)
        if part != _OTHER:
            _note(found, node, part)
    found.cased = cased
    return found


def _note(found: Survey, node: exp.Expr, part: int) -> None:
    """Add a table, query, CTE, join, COALESCE, nested statement or table-making source of the query to its survey."""
    if part == _TABLE:
        found.tables.append(cast(exp.Table, node))
    elif part == _QUERY:
        found.queries += 1
        if node.args.get("windows"):
            found.named_windows = True
        if isinstance(node, exp.Subquery):
            found.derived.append(node)
    elif part == _CTE:
        found.ctes.add(node.alias_or_name.lower())
    elif part == _JOIN:
        if node.args.get("using"):
            found.using_joins.append(cast(exp.Join, node))
    elif part == _COALESCE:
        found.coalesces.append(cast(exp.Coalesce, node))
    elif part == _NESTED_STATEMENT and found.nested is None:
        found.nested = node
    elif part == _TABLE_MAKER:
        found.derived.append(node)


@dataclass(frozen=True)
class Statement:
    """A parsed CTAS, INSERT ... SELECT, MERGE, UPDATE or DELETE.

    What it does, the table it writes, the tables it names, and the sqlglot tree. Parsed once and read by everything
    downstream, which never changes `tree` in place (the lineage engine, `runnable_select` and `runnable_statement` work
    on copies).

    A MERGE, UPDATE or DELETE (`reads_target`) reads the target's current rows as well as writing it: `target` is
    the table written, `sources` the other tables it reads, and `tables` holds both.
    """

    kind: StatementKind
    target: TableRef
    target_columns: tuple[str, ...]
    """An INSERT's column list (empty for every other kind)."""
    sources: tuple[TableRef, ...]
    """The tables the query names with a namespace, in order of first appearance (the target left out)."""
    unplaced: bool
    """Whether the query also names tables without a namespace (then the whole catalog places them)."""
    replace: bool
    tree: exp.Expr = field(repr=False, compare=False)
    dialect: str = "duckdb"
    survey: Survey = field(default_factory=Survey, repr=False, compare=False)
    text: str = field(default="", repr=False, compare=False)
    """The statement's text, whose positions the tree's nodes carry (DuckDB names an unaliased output by it)."""
    by_name: bool = False
    """An INSERT ... BY NAME: its outputs write the target's columns of their names, not by position."""
    if_not_exists: bool = False
    """A CREATE TABLE IF NOT EXISTS ... AS: it writes nothing (and has no lineage to report) when the target
    exists; the lineage read is what it writes when it does not."""

    @property
    def reads_target(self) -> bool:
        """Return whether the statement reads the target's current rows (MERGE, UPDATE, DELETE).

        The target is then an input (the version read) as well as the output (the version written).
        """
        return self.kind.reads_target

    @property
    def query(self) -> exp.Query:
        """Return the statement's SELECT, a node of `tree` (not a copy: do not change it).

        Raises UnsupportedStatementError for a MERGE, UPDATE or DELETE, which has no one SELECT (`runnable_statement`
        gives the statement DuckDB runs).
        """
        query = self.tree.expression
        if self.reads_target or not isinstance(query, exp.Query):
            raise UnsupportedStatementError(
                self.target,
                f"a {self.kind} has no one SELECT whose rows are written",
                "run the whole statement (runnable_statement) on a copy of the target",
            )
        return query

    @property
    def tables(self) -> tuple[TableRef, ...]:
        """Return the target and the namespaced sources, each once: every table whose schema lineage needs."""
        return tuple(dict.fromkeys((self.target, *self.sources)))


class _QuietFilter(logging.Filter):
    """Drop the sqlglot records below ERROR logged in a context that reads a statement."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not _reading.get()


_reading: ContextVar[bool] = ContextVar("reading_statement", default=False)
_quiet_filter = _QuietFilter()
_sqlglot_logger = logging.getLogger("sqlglot")


@contextmanager
def quiet_sqlglot() -> Iterator[None]:
    """Keep sqlglot's records below ERROR out of the log while parsing, in this thread or task only.

    sqlglot logs the whole statement text at WARNING when it falls back to a raw command, a statement may hold personal
    data in its literals, and no log line may carry it. The logger's level is left alone: other threads, and other
    users of sqlglot, log as they configured.
    """
    if _quiet_filter not in _sqlglot_logger.filters:
        _sqlglot_logger.addFilter(_quiet_filter)
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


def table_ref(table: exp.Table, target: TableRef | str | None = None) -> TableRef | None:
    """Return the catalog table a sqlglot table node names, or None when it names no namespace.

    Names are folded to lower case; `a.b.t` is namespace ("a", "b"). Raises UnknownTableError when the namespace is
    deeper than DuckDB can name.
    """
    parts = [part.name.lower() for part in table.parts]
    if len(parts) < 2:
        return None
    ref = TableRef(tuple(parts[:-1]), parts[-1])
    if len(ref.namespace) > MAX_NAMESPACE_LEVELS:
        raise UnknownTableError(
            target if target is not None else ref,
            f"{ref} has a namespace of {len(ref.namespace)} levels, and DuckDB names at most {MAX_NAMESPACE_LEVELS}",
            "keep the table in a namespace of one or two levels",
        )
    return ref


def _strip_leading_comments(sql: str) -> str:
    while True:
        match = _COMMENT.match(sql)
        if not match:
            return sql
        sql = sql[match.end() :]


def _named_target(sql: str, keyword: str) -> str | None:
    pattern = _TARGET_AFTER.get(keyword)
    match = pattern.search(sql) if pattern else None
    return match.group(1).replace('"', "").replace("`", "") if match else None


def check_kind(sql: str) -> str:
    """Return the statement's first keyword (CREATE, INSERT, MERGE, UPDATE, DELETE or WITH).

    Raises UnsupportedStatementError for any other statement, before any parser is asked, and StatementTooLargeError
    past the size bound.
    """
    if len(sql) > MAX_STATEMENT_CHARS:
        raise StatementTooLargeError(
            None,
            f"the statement has {len(sql):,} characters, more than the {MAX_STATEMENT_CHARS:,} read",
            "split it into smaller statements",
        )
    body = _strip_leading_comments(sql)
    match = _FIRST_WORD.match(body)
    keyword = match.group(1).upper() if match else ""
    if keyword not in _KEYWORDS:
        shown = keyword or "an empty statement"
        raise UnsupportedStatementError(
            _named_target(body, keyword), f"{_ONLY}, not from {shown}", "write it as one of those"
        )
    return keyword


_readers = threading.local()
"""This thread's sqlglot tokenizer and parser of each dialect, in `by_dialect`: made once, reused by every parse."""


def _parsed(sql: str, dialect: str) -> list[exp.Expr | None]:
    """Return sqlglot's trees of `sql`, as `sqlglot.parse(sql, read=dialect)` does, by this thread's reader.

    The tokenizer and parser are left holding no text after.
    """
    kept: dict[str, tuple[Tokenizer, Parser]] | None = getattr(_readers, "by_dialect", None)
    if kept is None:
        kept = _readers.by_dialect = {}
    reader = kept.get(dialect)
    if reader is None:
        language = Dialect.get_or_raise(dialect)
        reader = kept[dialect] = (language.tokenizer(), language.parser())
    tokenizer, parser = reader
    try:
        return parser.parse(tokenizer.tokenize(sql), sql)
    finally:
        parser.reset()
        tokenizer.tokenize("")


def _duckdb_parses(sql: str) -> bool:
    """Return whether DuckDB's own parser reads `sql`: asked only of a text sqlglot could not parse.

    The text is parsed, never run, in an in-memory database of its own that loads no extension.
    """
    import duckdb

    connection = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        connection.extract_statements(sql)
    except duckdb.Error:
        return False
    finally:
        connection.close()
    return True


def _one_statement(sql: str, dialect: str) -> exp.Expr:
    try:
        with quiet_sqlglot():
            statements = [s for s in _parsed(sql, dialect) if s is not None]
    except (ParseError, TokenError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        if dialect == "duckdb" and _duckdb_parses(sql):
            raise UnsupportedStatementError(
                None,
                f"DuckDB reads it, but the lineage engine does not read this form of it ({first})",
                "write that part in standard SQL, such as a MERGE action with its columns named "
                "(UPDATE SET a = s.a, INSERT (a) VALUES (s.a))",
            ) from None
        raise SqlSyntaxError(
            None, f"the statement does not parse as {dialect} SQL ({first})", "fix the syntax"
        ) from None
    except RecursionError:
        raise StatementTooLargeError(
            None, "the statement is nested too deeply to parse", "flatten its subqueries into CTEs"
        ) from None
    if len(statements) != 1:
        raise UnsupportedStatementError(
            None,
            f"the text holds {len(statements)} statements, and lineage is read from exactly one",
            "give each statement a task of its own",
        )
    return statements[0]


def _nesting(node: exp.Expr) -> int:
    depth, deepest = 0, 0
    for query in node.find_all(exp.Select):
        depth = 0
        parent: exp.Expr | None = query
        while parent is not None and depth <= MAX_NESTING:
            if isinstance(parent, (exp.Select, exp.SetOperation)):
                depth += 1
            parent = parent.parent
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break
    return deepest


def parse_statement(sql: str, dialect: str = "duckdb") -> Statement:
    """Return the parsed CTAS, INSERT ... SELECT, MERGE, UPDATE or DELETE (the one parse of its text).

    Raises LineageError (a subclass) for anything else, for a form of those the engine does not read, and for a target
    without a namespace.
    """
    keyword = check_kind(sql)
    node = _one_statement(sql, dialect)
    if isinstance(node, exp.Command):
        raise SqlSyntaxError(
            _named_target(_strip_leading_comments(sql), keyword),
            f"the statement does not parse as {dialect} SQL",
            "fix the syntax",
        )
    kind = dml_kind(node)
    if kind is not None:
        return _dml_statement(node, kind, dialect)
    if keyword == "WITH":
        raise UnsupportedStatementError(
            None, f"{_ONLY}, not from WITH ... {node.key.upper()}", "write it as one of those"
        )
    if isinstance(node, exp.Create):
        target = node.this.this if isinstance(node.this, exp.Schema) else node.this
        query = node.expression
        if (node.kind or "").upper() != "TABLE" or not isinstance(query, exp.Query):
            raise UnsupportedStatementError(
                _shown(target, dialect),
                f"{_ONLY}, not from CREATE {node.kind or ''} without AS SELECT".replace("  ", " "),
                "write it as CREATE TABLE ... AS SELECT",
            )
        if isinstance(node.this, exp.Schema):
            raise UnsupportedStatementError(
                _shown(target, dialect),
                "a CREATE TABLE ... AS with a column list is not read",
                "name the columns with aliases in the SELECT",
            )
        kind, columns, replace = StatementKind.CREATE_TABLE_AS, (), bool(node.args.get("replace"))
    elif isinstance(node, exp.Insert):
        target_node = node.this
        columns = ()
        if isinstance(target_node, exp.Schema):
            columns = tuple(c.name.lower() for c in target_node.expressions)
            target_node = target_node.this
        target = target_node
        query = node.expression
        if not isinstance(query, exp.Query):
            raise UnsupportedStatementError(
                _shown(target, dialect),
                f"{_ONLY}, not from INSERT ... VALUES or DEFAULT VALUES",
                "write the values as a SELECT",
            )
        if node.args.get("conflict") or node.args.get("overwrite") or node.args.get("alternative"):
            raise UnsupportedStatementError(
                _shown(target, dialect),
                "an INSERT that may update existing rows (OR REPLACE, ON CONFLICT) is not read",
                "write a plain INSERT INTO ... SELECT",
            )
        kind, replace = StatementKind.INSERT, False
    else:
        raise UnsupportedStatementError(
            None, f"{_ONLY}, not from {keyword} {node.key.upper()}", "write it as one of those"
        )
    if not isinstance(target, exp.Table) or not isinstance(target.this, (exp.Identifier, exp.Dot)):
        raise UnsupportedStatementError(
            None, "the statement's target is not a table name", "name the target as namespace.table"
        )
    found = survey(query)
    if found.nested is not None:
        raise UnsupportedStatementError(
            _shown(target, dialect),
            f"its query holds a {found.nested.key.upper()}, and {_ONLY}",
            "move that statement to a task of its own",
        )
    # Nesting cannot be deeper than the number of queries: measure it only when that could exceed the bound.
    if found.queries > MAX_NESTING and _nesting(query) > MAX_NESTING:
        raise StatementTooLargeError(
            _shown(target, dialect),
            f"queries are nested more than {MAX_NESTING} deep",
            "flatten the subqueries into CTEs",
        )
    target_ref = _target_ref(target)
    sources, unplaced = _named_tables(found, target_ref)
    return Statement(
        kind,
        target_ref,
        columns,
        sources,
        unplaced,
        replace,
        node,
        dialect,
        found,
        sql,
        by_name=bool(node.args.get("by_name")) if isinstance(node, exp.Insert) else False,
        if_not_exists=bool(node.args.get("exists")) if isinstance(node, exp.Create) else False,
    )


def _shown(target: exp.Expr, dialect: str) -> str | None:
    """Return the target's name as an error shows it (rendered only when one is raised)."""
    return target.sql(dialect=dialect) if isinstance(target, exp.Table) else None


def _dml_statement(node: exp.Expr, kind: StatementKind, dialect: str) -> Statement:
    """Return the Statement of a MERGE, UPDATE or DELETE.

    Its target the table it writes, its sources every other table it names; raises LineageError for a form the engine
    does not read.
    """
    target = node.this
    if not isinstance(target, exp.Table) or not isinstance(target.this, (exp.Identifier, exp.Dot)):
        raise UnsupportedStatementError(
            None, f"the {kind}'s target is not a table name", "name the target as namespace.table"
        )
    target_ref = _target_ref(target)
    refuse_unread_forms(node, kind, str(target_ref))
    found = survey(node)
    if found.queries > MAX_NESTING and _nesting(node) > MAX_NESTING:
        raise StatementTooLargeError(
            target_ref, f"queries are nested more than {MAX_NESTING} deep", "flatten the subqueries into CTEs"
        )
    sources, unplaced = _named_tables(found, target_ref)
    return Statement(kind, target_ref, (), sources, unplaced, False, node, dialect, found)


def _target_ref(target: exp.Table) -> TableRef:
    ref = table_ref(target)
    if ref is None:
        name = target.name.lower()
        raise UnknownTableError(name, "the target names no namespace", f"write it as namespace.{name}")
    return ref


def _named_tables(found: Survey, target: TableRef) -> tuple[tuple[TableRef, ...], bool]:
    names: dict[TableRef, None] = {}
    unplaced = False
    for table in found.tables:
        if not isinstance(table.this, (exp.Identifier, exp.Dot)):
            continue  # a table function or a file: the engine names it when it reads the query
        ref = table_ref(table, target)
        if ref is not None:
            names[ref] = None
        elif table.name.lower() not in found.ctes:
            unplaced = True
    names.pop(target, None)
    return tuple(names), unplaced
