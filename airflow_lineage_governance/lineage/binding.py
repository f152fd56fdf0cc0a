"""DuckDB's meaning of a query.

The output names and types DuckDB gives it, bound over empty tables of the catalog's schemas (nothing is read), or
DuckDB's own sentence for why it cannot bind it.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import duckdb
from duckdb.sqltypes import DuckDBPyType

from airflow_lineage_governance.lineage.errors import BindError, UnknownColumnError
from airflow_lineage_governance.lineage.schema import Schema
from airflow_lineage_governance.refs import TableRef

_SCALARS = {
    "string": "VARCHAR",
    "large_string": "VARCHAR",
    "utf8": "VARCHAR",
    "large_utf8": "VARCHAR",
    "text": "VARCHAR",
    "long": "BIGINT",
    "int64": "BIGINT",
    "int": "INTEGER",
    "int32": "INTEGER",
    "int16": "SMALLINT",
    "int8": "TINYINT",
    "uint8": "UTINYINT",
    "uint16": "USMALLINT",
    "uint32": "UINTEGER",
    "uint64": "UBIGINT",
    "boolean": "BOOLEAN",
    "bool": "BOOLEAN",
    "double": "DOUBLE",
    "float64": "DOUBLE",
    "float": "FLOAT",
    "float32": "FLOAT",
    "date": "DATE",
    "date32[day]": "DATE",
    "date32": "DATE",
    "time": "TIME",
    "time64[us]": "TIME",
    "timestamp": "TIMESTAMP",
    "timestamp_ns": "TIMESTAMP_NS",
    "timestamptz": "TIMESTAMPTZ",
    "timestamptz_ns": "TIMESTAMPTZ",
    "uuid": "UUID",
    "binary": "BLOB",
    "large_binary": "BLOB",
    "null": "INTEGER",
}
_TIMESTAMP = re.compile(r"timestamp\[(s|ms|us|ns)(?:, tz=[^\]]+)?\]")
_DECIMAL = re.compile(r"decimal(?:128|256)?\((\d+), ?(\d+)\)")
_FIXED = re.compile(r"(?:fixed\[\d+\]|fixed_size_binary\[\d+\])")
_FIELD_ID = re.compile(r"^\d+: ")
_ERROR_KIND = re.compile(r"^([A-Za-z ]+ Error): ")
_QUOTED_VALUE = re.compile(r"'(?:[^']|'')*'")
_GAP = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)+", re.S)
_AS = re.compile(r"AS\b", re.I)
_BY = re.compile(r"BY\s+(?:NAME|POSITION)\b", re.I)
_SIGNS = re.compile(rb"[?$;]")
_DML = (duckdb.StatementType.UPDATE, duckdb.StatementType.DELETE, duckdb.StatementType.MERGE_INTO)
DESCRIBED_JOINS = 12
"""From this many JOINs on, DuckDB binds a query faster by DESCRIBE than by its binder's call (DuckDB 2.0.1)."""
DESCRIBED_BYTES = 4096
"""From this many bytes of text on, DuckDB binds a SELECT faster by DESCRIBE than by its binder's call."""
_SELECT_WORDS = (b"select", b"with", b"from")
_SELECT_OPENING = re.compile(r"[ \t\n\r\f\v]*(?:[Ss][Ee][Ll][Ee][Cc][Tt]|[Ww][Ii][Tt][Hh]|[Ff][Rr][Oo][Mm])(?!\w)")
"""A text that opens with SELECT, WITH or FROM (in ASCII letters of any case, no other word character after):
DuckDB's first token of it is that keyword."""


@dataclass(frozen=True)
class BoundQuery:
    """A query as DuckDB binds it: its output columns' names and types, in order."""

    names: tuple[str, ...]
    types: tuple[str, ...]


def duckdb_type(kind: str) -> str | None:
    """Return the DuckDB type of a catalog column type (an Iceberg, Arrow or DuckDB spelling).

    None when the spelling is not one this module knows.
    """
    text = kind.strip()
    lower = text.lower()
    if lower in _SCALARS:
        return _SCALARS[lower]
    timestamp = _TIMESTAMP.fullmatch(lower)
    if timestamp is not None:
        unit = {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[timestamp[1]]
        return "TIMESTAMPTZ" if ", tz=" in lower else unit
    decimal = _DECIMAL.fullmatch(lower)
    if decimal is not None:
        return f"DECIMAL({decimal[1]}, {decimal[2]})"
    if _FIXED.fullmatch(lower):
        return "BLOB"
    for opener in ("list<", "large_list<", "struct<", "map<"):
        if lower.startswith(opener) and lower.endswith(">"):
            return _nested(opener[:-1], text[len(opener) : -1])
    try:
        return str(duckdb.sqltype(text)) if text else None
    except (duckdb.Error, RuntimeError, TypeError, ValueError):
        return None


def _split(body: str) -> list[str]:
    """Return the top-level comma-separated parts of a nested type's body."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        if char in "<([":
            depth += 1
        elif char in ">)]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index].strip())
            start = index + 1
    parts.append(body[start:].strip())
    return [part for part in parts if part]


def _field(part: str) -> tuple[str, str] | None:
    """Return (name, type) of a struct field written `name: type` (`1: name: optional type` in Iceberg)."""
    part = _FIELD_ID.sub("", part)
    name, colon, kind = part.partition(":")
    if not colon:
        return None
    kind = kind.strip()
    for flag in ("optional ", "required "):
        if kind.startswith(flag):
            kind = kind[len(flag) :]
    return name.strip(), kind.strip()


def _nested(kind: str, body: str) -> str | None:
    parts = _split(body)
    if kind in ("list", "large_list"):
        element = _field(parts[0]) if len(parts) == 1 and ":" in parts[0] else None
        inner = duckdb_type(element[1] if element else parts[0]) if parts else None
        return f"{inner}[]" if inner is not None and len(parts) == 1 else None
    if kind == "map":
        if len(parts) != 2:
            return None
        key, value = duckdb_type(parts[0]), duckdb_type(parts[1])
        return f"MAP({key}, {value})" if key is not None and value is not None else None
    fields = []
    for part in parts:
        found = _field(part)
        inner = duckdb_type(found[1]) if found else None
        if found is None or inner is None:
            return None
        fields.append(f"{_quoted(found[0])} {inner}")
    return f"STRUCT({', '.join(fields)})" if fields else None


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _UnknownType(Exception):
    """A column's type has no DuckDB spelling this module knows."""

    def __init__(self, ref: TableRef, column: str, kind: str) -> None:
        super().__init__(column)
        self.ref, self.column, self.kind = ref, column, kind


class Binder:
    """One sandboxed DuckDB connection holding an empty table of each catalog table of one schema set.

    It binds queries over them (reading nothing, touching no file) and is reused for every statement over that set.
    """

    def __init__(self, schema: Schema) -> None:
        self._lock = threading.Lock()
        # It binds over empty tables, reading no row: a small memory limit, within which it never spills.
        self._connection = duckdb.connect(
            config={
                "threads": 1,
                "memory_limit": "256MB",
                "enable_external_access": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            }
        )
        statements, catalogs, schemas = [], set(), set()
        for ref, columns in schema.items():
            *catalog, db = ref.namespace
            if catalog and catalog[0] not in catalogs:
                catalogs.add(catalog[0])
                statements.append(f"ATTACH ':memory:' AS {_quoted(catalog[0])}")
            qualified = ".".join(_quoted(part) for part in (*ref.namespace, ref.name))
            where = ".".join(_quoted(part) for part in ref.namespace)
            if where not in schemas:
                schemas.add(where)
                statements.append(f"CREATE SCHEMA IF NOT EXISTS {where}")
            fields = []
            for column, kind in columns.items():
                spelt = duckdb_type(kind)
                if spelt is None:
                    raise _UnknownType(ref, column, kind)
                fields.append(f"{_quoted(column)} {spelt}")
            statements.append(f"CREATE TABLE {qualified} ({', '.join(fields)})")
        self._search_path = ",".join(sorted(schemas))
        for statement in statements:
            self._connection.execute(statement)
        if self._search_path:
            self._connection.execute(f"SET search_path = '{self._search_path.replace(chr(39), chr(39) * 2)}'")
        self._connection.execute("PRAGMA disable_optimizer")  # binding needs no plan: names, types, validity
        self._connection.execute("SET lock_configuration = true")
        # DuckDB 2's binder as its relation layer asks it, without that layer's second token pass and relation object
        # (docs/RELIABILITY.md); older clients have no such call and bind through the relation.
        self._bind_call = checked_bind_call(self._connection)

    def bind(self, query: str, target: TableRef) -> BoundQuery:
        """Return the output names and types DuckDB gives a query over the schema set.

        A text that opens with SELECT, WITH or FROM and holds no `?`, `$` or `;` is one statement or none (which
        DuckDB refuses): it goes to DuckDB straight away unless it is short and its text holds DESCRIBED_JOINS
        "join"s. For any other text, DuckDB's tokenizer first makes sure it is one statement, and tells its joins
        and parameter markers. A query of many joins, or a long one that opens with SELECT, WITH or FROM, is
        described (`DESCRIBE <query>`: parsed and bound once, over the empty tables, nothing run); a shorter one
        that opens so is bound from its text by DuckDB's binder (parsed once too); any other is bound as its parsed
        statement, which costs less there (docs/RELIABILITY.md has the figures).

        Args:
            query: one SELECT, as text.
            target: the table the statement writes, named in an error.

        Returns:
            The names and types of the query's outputs, in order.

        Raises:
            BindError: DuckDB cannot bind the query (with DuckDB's own sentence, values in quotes left out), or
                the text is not one SELECT.
        """
        with self._lock:
            try:
                raw = query.encode()  # the tokenizer's positions count bytes of UTF-8
                if _SELECT_OPENING.match(query) and not _SIGNS.search(raw):
                    # A SELECT with no sign: what the tokens would tell, read from the text.
                    if len(raw) >= DESCRIBED_BYTES:
                        return self._described(query)
                    if raw.lower().count(b"join") < DESCRIBED_JOINS:
                        bound = self._bind_select(query)
                        return bound if bound is not None else self._bind_relation(query, target)
                tokens = duckdb.tokenize(query)
                markers, joins = False, 0
                select = opening_word(raw, tokens) in _SELECT_WORDS
                long_select = select and len(raw) >= DESCRIBED_BYTES
                # Joins are counted only where they decide: a long SELECT is described whatever their number.
                if _SIGNS.search(raw) or (not long_select and raw.lower().count(b"join") >= DESCRIBED_JOINS):
                    for position, kind in tokens:  # the text's own signs and joins, outside its strings
                        first = raw[position : position + 1]
                        if kind == duckdb.token_type.operator and first and first in b"?$;":
                            if first == b";":
                                raise _not_one_select(target)
                            markers = True
                        elif kind == duckdb.token_type.keyword and raw[position : position + 4].lower() == b"join":
                            joins += 1
                if not tokens or tokens[0][1] == duckdb.token_type.identifier:
                    raise _not_one_select(target)  # DESCRIBE of a bare name would describe a table
                if markers or (joins < DESCRIBED_JOINS and not long_select):
                    bound = self._bind_select(query) if select and not markers else None
                    return bound if bound is not None else self._bind_relation(query, target)
                return self._described(query)
            except (duckdb.Error, ValueError, TypeError, RuntimeError) as error:
                # DuckDB's Python client raises ValueError for a parameter marker it cannot number.
                raise BindError(
                    target, f"DuckDB cannot bind the query ({duckdb_sentence(error)})", "fix the statement"
                ) from None

    def bind_statement(self, sql: str, target: TableRef) -> None:
        """Bind a MERGE, UPDATE or DELETE over the schema set, as DuckDB plans it to run (`EXPLAIN`: nothing runs).

        Each parameter marker is bound as NULL, as in `bind`.

        Args:
            sql: one MERGE, UPDATE or DELETE, as text, its tables named as DuckDB finds them.
            target: the table the statement writes, named in an error.

        Raises:
            BindError: DuckDB cannot bind the statement (with DuckDB's own sentence, values in quotes left out), or
                the text is not one MERGE, UPDATE or DELETE.
        """
        with self._lock:
            try:
                statements = self._connection.extract_statements(sql)
                if len(statements) != 1 or statements[0].type not in _DML:
                    raise BindError(
                        target,
                        "DuckDB does not read the statement as one MERGE, UPDATE or DELETE",
                        "write one MERGE INTO, UPDATE or DELETE FROM statement",
                    )
                markers = statements[0].named_parameters
                self._connection.execute(f"EXPLAIN {statements[0].query}", _null_parameters(markers))
            except (duckdb.Error, ValueError, TypeError, RuntimeError) as error:
                raise BindError(
                    target, f"DuckDB cannot bind the statement ({duckdb_sentence(error)})", "fix the statement"
                ) from None

    def _described(self, query: str) -> BoundQuery:
        """Return the names and types `DESCRIBE <query>` gives (parsed and bound once, nothing run)."""
        rows = self._connection.execute(f"DESCRIBE {query}").fetchall()
        return BoundQuery(tuple(row[0] for row in rows), tuple(row[1] for row in rows))

    def _bind_select(self, query: str) -> BoundQuery | None:
        """Return DuckDB's binding of a query that opens with SELECT, WITH or FROM, from its text (parsed once).

        None where DuckDB's client has no such call, or where DuckDB does not read the text as a SELECT that only
        reads (`WITH ... INSERT`, a CTE that writes) or defers its names to when it runs (a PIVOT): those are bound
        as their parsed statement, which refuses what is not one SELECT.
        """
        if self._bind_call is None:
            return None
        names, types, _, returns, deferred, *writes = self._bind_call(query, with_writes=True)
        if returns != "query_result" or deferred or any(writes):
            return None
        return BoundQuery(tuple(names), tuple(str(kind) for kind in types))

    def _bind_relation(self, query: str, target: TableRef) -> BoundQuery:
        """Return the binding of the query's parsed statement as a relation (lazy: nothing runs).

        Each parameter marker (`?`, `$1`, `$name`: a literal an event's SQL facet left out) is bound as NULL.
        """
        statements = self._connection.extract_statements(query)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            raise _not_one_select(target)
        markers = statements[0].named_parameters
        if self._bind_call is not None and not markers:
            names, types, *_ = self._bind_call(statements[0])
            return BoundQuery(tuple(names), tuple(str(kind) for kind in types))
        relation = self._connection.sql(statements[0], params=_null_parameters(markers))
        return BoundQuery(tuple(relation.columns), tuple(str(kind) for kind in relation.types))

    def sqltype(self, kind: str) -> DuckDBPyType:
        """Return the DuckDB type a type's name (as `bind` gives it) stands for, read on this connection.

        Args:
            kind: a DuckDB type's name, such as `DECIMAL(10,2)` or `STRUCT(a INTEGER)`.

        Returns:
            The type.

        Raises:
            duckdb.Error: DuckDB does not know the name.
        """
        with self._lock:
            return self._connection.sqltype(kind)


def opening_word(raw: bytes, tokens: list[tuple[int, duckdb.token_type]]) -> bytes:
    """Return the first token of a text, in lower case.

    Args:
        raw: the text, as UTF-8.
        tokens: DuckDB's tokens of the text (byte position, kind), in order.

    Returns:
        The bytes of the first token, up to the next token or the end, without surrounding whitespace; empty for
        a text without tokens.
    """
    if not tokens:
        return b""
    end = tokens[1][0] if len(tokens) > 1 else len(raw)
    return raw[tokens[0][0] : end].strip().lower()


def _null_parameters(markers: set[str]) -> list[None] | dict[str, None] | None:
    """Return a NULL for each parameter marker (`?`, `$1`, `$name`), by position or by name; None for no marker."""
    if not markers:
        return None
    if all(marker.isdigit() for marker in markers):
        return [None] * len(markers)
    return dict.fromkeys(markers)


def _not_one_select(target: TableRef) -> BindError:
    return BindError(
        target,
        "DuckDB does not read the statement's query as one SELECT",
        "write one CREATE TABLE ... AS SELECT or INSERT INTO ... SELECT",
    )


def duckdb_sentence(error: BaseException) -> str:
    """Return the first line of a DuckDB error with every quoted value replaced by `?`.

    A literal of the statement may hold personal data; identifiers, which DuckDB writes in double quotes, are kept.
    """
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    first = _QUOTED_VALUE.sub("?", first)
    return first.rstrip(".")


SchemaKey = tuple[tuple[TableRef, tuple[tuple[str, str], ...]], ...]
"""A schema set as a value that can be hashed: each table with its columns and their types, tables in order."""


def schema_key(schema: Schema) -> SchemaKey:
    """Return the key of a schema set, by which its Binder is kept.

    Args:
        schema: the schema set, its names folded to lower case.

    Returns:
        Each table with its (column, type) pairs, the tables sorted.
    """
    return tuple(sorted((ref, tuple(columns.items())) for ref, columns in schema.items()))


def checked_bind_call(connection: duckdb.DuckDBPyConnection) -> Any:
    """Return the DuckDB client's call that binds a query from its text, or None when it has none or answers otherwise.

    The call is not part of the client's public interface: a client whose call takes other arguments or answers in
    another shape than DuckDB 2's (names, types, the statement's kind, what it returns, whether its names wait for
    the run, what it writes) binds through the relation instead of refusing every query.
    """
    call = getattr(connection, "_bind", None)
    if call is None:
        return None
    try:
        names, types, _, returns, deferred, *writes = call("SELECT 1 AS probe", with_writes=True)
        kept = list(names) == ["probe"] and [str(kind) for kind in types] == ["INTEGER"]
        kept = kept and returns == "query_result" and not deferred and not any(writes)
        by_statement = call(connection.extract_statements("SELECT 2 AS probe")[0])
        kept = kept and list(by_statement[0]) == ["probe"]
    except Exception:  # any other call of that name: the relation binds
        return None
    return call if kept else None


@lru_cache(maxsize=16)
def _binder(key: SchemaKey, pid: int) -> Binder:
    """The Binder of one schema set in process `pid` (a DuckDB connection is not shared across a fork)."""
    return Binder({ref: dict(columns) for ref, columns in key})


def binder(schema: Schema, target: TableRef, key: SchemaKey | None = None) -> Binder:
    """Return the Binder of a schema set, made on first use and kept for the next statements over that set.

    Args:
        schema: the schema set, its names folded to lower case.
        target: the table the statement writes, named in an error.
        key: the schema set's key (schema_key), when the caller has it already.

    Returns:
        The Binder of the set in this process.

    Raises:
        UnknownColumnError: a column's type has no DuckDB spelling.
        BindError: DuckDB cannot hold the set's tables.
    """
    try:
        return _binder(schema_key(schema) if key is None else key, os.getpid())
    except _UnknownType as unknown:
        raise UnknownColumnError(
            target,
            f"the column {unknown.column} of {unknown.ref} has the type {unknown.kind}, which DuckDB does not know",
            "give the column an Iceberg type",
        ) from None
    except duckdb.Error as error:
        raise BindError(
            target,
            f"DuckDB cannot hold the catalog's schema ({duckdb_sentence(error)})",
            "check the catalog's table and column names",
        ) from None


def query_text(text: str, target_end: int, kind: str, skip_columns: bool) -> str | None:
    """Return the text of a CTAS's or INSERT's query as written, after the target's name (which ends at `target_end`).

    After the `AS` of a CTAS, after the optional BY NAME / BY POSITION and column list of an INSERT. None when the text
    does not have that shape.
    """
    position = _skip_gap(text, target_end + 1)
    if kind == "CREATE":
        match = _AS.match(text, position)
        if match is None:
            return None
        position = match.end()
    else:
        match = _BY.match(text, position)
        if match is not None:
            position = match.end()
        if skip_columns:
            position = _after_parens(text, _skip_gap(text, position))
            if position < 0:
                return None
    body = text[_skip_gap(text, position) :].rstrip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    return body or None


def _skip_gap(text: str, position: int) -> int:
    """Returns the position after any whitespace and comments from `position`."""
    while True:
        match = _GAP.match(text, position)
        if match is None or match.end() == position:
            return position
        position = match.end()


def _after_parens(text: str, position: int) -> int:
    """Return the position after the parenthesised list that starts at `position` (quoted names skipped), or -1."""
    if not text.startswith("(", position):
        return -1
    depth, index = 0, position
    while index < len(text):
        char = text[index]
        if char in "\"'":
            close = text.find(char, index + 1)
            if close < 0:
                return -1
            index = close
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1
