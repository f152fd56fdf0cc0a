"""The shared engine.

PostgreSQL through psycopg 3, many writers at once (each batch one transaction, rows added with `ON CONFLICT DO
NOTHING`, writers of the same job taking turns on an advisory lock).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Dumper
from psycopg.sql import Identifier

from airflow_lineage_governance.store.engine import Row, T, numbers_refused
from airflow_lineage_governance.store.errors import StoreUnavailableError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def without_password(url: str) -> str:
    """Return the URL with its password (and any query, which may hold one) left out."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{parts.path}"


class PostgresEngine:
    """A store in a PostgreSQL database."""

    dialect = "postgres"
    text_order = ' COLLATE "C"'  # code point order whatever the database's collation
    errors: tuple[type[BaseException], ...] = (psycopg.Error,)
    memory_limit_setting = None  # the server keeps its own memory

    def __init__(self, url: str, *, connect_timeout: int = 10) -> None:
        self.description = without_password(url)
        self._url = url
        self._connect_timeout = connect_timeout
        self.connection = self._connect()
        self._staged: set[str] = set()
        self._keyed: dict[str, bool] = {}
        self._thread: ThreadPoolExecutor | None = None  # `start_query`'s, and its connection
        self._beside: psycopg.Connection[Row] | None = None
        self._alone = False  # the server refused the second connection

    def _connect(self) -> psycopg.Connection[Row]:
        """Open a connection to the store's database, set up for the store's queries."""
        try:
            connection = psycopg.connect(self._url, autocommit=True, connect_timeout=self._connect_timeout)
        except (psycopg.Error, ValueError) as error:
            reason = (
                type(error).__name__
                if not isinstance(error, psycopg.OperationalError)
                else "not reachable, or the login was refused"
            )
            raise StoreUnavailableError(
                f"{self.description}: the lineage store's PostgreSQL cannot be opened "
                f"({reason}); check the connection's host, port, database and login"
            ) from None
        connection.adapters.register_dumper(list, ArrayDumper)
        # the store's queries are short: compiling them (PostgreSQL's JIT, on when a plan's estimate is high, as a
        # recursive query's is) would cost more than running them
        connection.execute("SET jit = off")
        # every edge as of a time sorts about 100,000 rows, a wide impact walk tens of thousands, and an ingest's batch
        # sorts and hashes tens of thousands and keeps its work in temporary tables: in memory, not spilled to files
        # (the server's default work_mem is 4 MB; temp_buffers is set before the session's first temporary table)
        connection.execute(f"SET work_mem = '{WORK_MEM}'")
        connection.execute(f"SET temp_buffers = '{TEMP_BUFFERS}'")
        return connection

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a query and return its rows."""
        with self.connection.cursor() as cursor:
            cursor.execute(_placeholders(sql), list(params))
            return cursor.fetchall()

    def start_query(self, sql: str, params: Sequence[Any], then: Callable[[list[Row]], T]) -> Callable[[], T]:
        """Start a query, and `then` on its rows, on a second connection; return a function that waits for their value.

        The query and `then` run in a thread of the engine's own, on a connection it opens for its first query. The
        caller's next queries run on the first connection meanwhile: the server works on both at once, and `then`
        runs while the caller waits for the server. Each query sees the store as it is when it starts, as any two do.
        When the server refuses the second connection (a connection limit), the query runs on the first when waited
        for, and every later one at once.
        """
        if self._alone:
            value = then(self.query(sql, params))
            return lambda: value
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="lineage-store")
        started = self._thread.submit(self._fetched_beside, _placeholders(sql), list(params), then)

        def waited() -> T:
            try:
                return started.result()
            except StoreUnavailableError:
                self._alone = True
                return then(self.query(sql, params))

        return waited

    def _fetched_beside(self, sql: str, params: list[Any], then: Callable[[list[Row]], T]) -> T:
        """Run a query on the second connection, opened at its first query, and return `then`'s value of its rows."""
        if self._beside is None:
            self._beside = self._connect()
        with self._beside.cursor() as cursor:
            cursor.execute(sql, params)
            return then(cursor.fetchall())

    def integer_columns(self, sql: str, params: Sequence[Any], count: int) -> list[npt.NDArray[np.int64]]:
        """Run a query of `count` BIGINT columns, never NULL; return its columns as arrays.

        The query's columns are checked first (its description, from the query with no rows); then the server packs
        every row's numbers into one `bytea` (`int8send`: 8 bytes each, big-endian; `string_agg`), which comes over
        as one value, read as arrays (`packed_columns`). The rows are in the order the query returns them (the
        aggregate reads its subquery's rows in their order).

        Raises:
            StoreError: A value is NULL, or the query has another number of columns, or a column of another type.
        """
        bound = _placeholders(sql)
        with self.connection.cursor(binary=True) as cursor:
            cursor.execute(f"SELECT * FROM ({bound}) AS r LIMIT 0", list(params))
            described = cursor.description or []
            if len(described) != count or any(column.type_code != BIGINT_OID for column in described):
                raise numbers_refused(self.description, count)
            packed = " || ".join(f"int8send(r.c{i})" for i in range(count))
            named = ", ".join(f"c{i}" for i in range(count))
            cursor.execute(
                f"SELECT count(*), string_agg({packed}, ''::bytea) FROM ({bound}) AS r({named})", list(params)
            )
            found = cursor.fetchone()
        columns = packed_columns(found[1], found[0], count) if found is not None else None
        if columns is None:
            raise numbers_refused(self.description, count)
        return columns

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run a statement."""
        if sql.lstrip()[:5].upper() in ("CREAT", "ALTER", "DROP "):
            self._keyed.clear()
        with self.connection.cursor() as cursor:
            cursor.execute(_placeholders(sql), list(params))

    def insert(
        self, table: str, columns: Sequence[str], rows: Sequence[Row], returning: Sequence[str] = ()
    ) -> list[Row]:
        """Copy the rows into a temporary table, then insert them with `ON CONFLICT DO NOTHING`.

        Rows whose key is there already, or repeats within `rows`, are left out; returns `returning` of those added.
        A table with no key (no conflict to leave out) is copied into directly.
        """
        if not rows:
            return []
        staged = f"staged_{table}"
        listed = ", ".join(columns)
        with self.connection.cursor() as cursor:
            if not returning and not self._has_key(cursor, table):
                with cursor.copy(f"COPY {table} ({listed}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                return []
            if staged not in self._staged:
                cursor.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {staged} (LIKE {table})")
                self._staged.add(staged)
            cursor.execute(f"TRUNCATE {staged}")
            with cursor.copy(f"COPY {staged} ({listed}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            sql = f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {staged} ON CONFLICT DO NOTHING"
            if returning:
                cursor.execute(sql + " RETURNING " + ", ".join(returning))
                return cursor.fetchall()
            cursor.execute(sql)
            return []

    def _has_key(self, cursor: psycopg.Cursor[Row], table: str) -> bool:
        if table not in self._keyed:
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_index WHERE indrelid = to_regclass(%s) AND indisunique)", [table]
            )
            found = cursor.fetchone()
            self._keyed[table] = bool(found and found[0])
        return self._keyed[table]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block in one transaction: committed when it ends, rolled back when it raises."""
        staged = set(self._staged)
        try:
            with self.connection.transaction():
                yield
        except BaseException:
            self._staged = staged  # the staging tables the block created went with it
            raise

    def lock(self, keys: Sequence[int]) -> None:
        """Hold the keys until the transaction ends, so that writers of the same keys take turns.

        A writer holds the store's own key shared, then each of its keys in ascending order (writers never wait in a
        circle). One of more than `LOCKED_ONE_BY_ONE` keys holds the store's key alone instead: PostgreSQL keeps
        every lock in one table of the server's shared memory (`max_locks_per_transaction` times the connections,
        6,400 by default), which a batch of 20,000 jobs' keys overflowed ("out of shared memory").
        """
        distinct = sorted(set(keys))
        if not distinct:
            return
        if len(distinct) > LOCKED_ONE_BY_ONE:
            self.execute("SELECT pg_advisory_xact_lock(?)", [EVERY_KEY])
            return
        self.execute("SELECT pg_advisory_xact_lock_shared(?)", [EVERY_KEY])
        self.execute(
            "SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT k FROM unnest(CAST(? AS BIGINT[])) AS k "
            "ORDER BY k OFFSET 0) AS ordered",
            [distinct],
        )

    def tables(self) -> set[str]:
        """Return the names of the tables and views on the connection's search path."""
        return {
            name
            for (name,) in self.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ANY(current_schemas(false))"
            )
        }

    def size_bytes(self) -> int:
        """Returns the size of the store's tables and indexes."""
        found = self.query(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = ANY(current_schemas(false))"
        )
        return int(found[0][0])

    def vacuum(self) -> None:
        """Run VACUUM (ANALYZE), then write anew each store table old row versions bloat and every other's indexes.

        An ingest moves each open interval on in place (`column_edges`, `table_writers`), and PostgreSQL keeps the
        pages the old row versions took: VACUUM FULL writes such a table (`BLOATED_TABLES`) and its indexes anew,
        holding an exclusive lock on it while it does. The keys an ingest adds to an index by run or snapshot are
        hashes or ids in no order, which leaves its pages about two thirds full: REINDEX CONCURRENTLY writes the
        indexes of every other table anew, reads and writes going on meanwhile.
        """
        self.execute("VACUUM (ANALYZE)")
        rewritten: set[tuple[str, str]] = set()
        for schema, table in self.query(BLOATED_TABLES, [BLOAT_FACTOR, MIN_BLOATED_PAGES]):
            self.execute(f"VACUUM (FULL, ANALYZE) {Identifier(schema, table).as_string(self.connection)}")
            rewritten.add((schema, table))
        for schema, table in self.query(INDEXED_TABLES):
            if (schema, table) not in rewritten:
                self.execute(f"REINDEX TABLE CONCURRENTLY {Identifier(schema, table).as_string(self.connection)}")

    def close(self) -> None:
        """Close the connections, once a query started on the second has ended."""
        if self._thread is not None:
            self._thread.shutdown()
            self._thread = None
        if self._beside is not None:
            self._beside.close()
            self._beside = None
        self.connection.close()

    def out_of_memory(self, error: BaseException) -> bool:
        """Return False: past `work_mem` PostgreSQL spills to files; a server that cannot allocate memory has failed."""
        return False

    def release_memory(self) -> bool:
        """Return False: the server keeps its memory; a query's own is given back when it ends."""
        return False

    def transient(self, error: BaseException) -> bool:
        """Return whether the error is a deadlock or a serialization failure (the batch may be tried again)."""
        return isinstance(error, TRANSIENT)


LOCKED_ONE_BY_ONE = 256
"""The most keys a writer holds one by one in a transaction; one of more holds the whole store (`lock`)."""
EVERY_KEY = -1
"""The store's own key, which a writer holds shared beside its keys, or alone in place of more than
`LOCKED_ONE_BY_ONE` of them (the keys locked are ids, which are positive)."""
WORK_MEM = "64MB"
"""The memory each sort or hash of a statement may take before it spills to a file."""
TEMP_BUFFERS = "64MB"
"""The memory the session's temporary tables may take before they spill to files."""

BLOAT_FACTOR = 1.5
"""How many times the pages its rows need a store table may take before `vacuum` writes it anew."""
MIN_BLOATED_PAGES = 16
"""The fewest pages (of 8 kB) a table must take before `vacuum` writes it anew."""
BLOATED_TABLES = (
    "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'r' AND n.nspname = ANY(current_schemas(false)) "
    "AND c.relpages * 8192.0 > ? * c.reltuples * (28 + COALESCE((SELECT SUM(s.avg_width) FROM pg_stats s "
    "WHERE s.schemaname = n.nspname AND s.tablename = c.relname), 0)) AND c.relpages >= ? ORDER BY n.nspname, c.relname"
)
"""The store's tables whose pages (as VACUUM (ANALYZE) counted them) exceed BLOAT_FACTOR times their rows' bytes:
each row's columns at their average width (`pg_stats`) and 28 bytes of row header and line pointer."""

INDEXED_TABLES = (
    "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'r' AND c.relhasindex AND n.nspname = ANY(current_schemas(false)) ORDER BY n.nspname, c.relname"
)
"""The store's tables that have an index."""

TRANSIENT = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)
"""The errors after which a writer's batch is rolled back and tried again."""


BIGINT_OID = 20
"""The type of PostgreSQL's BIGINT (`int8`), as a query's description names it."""


def packed_columns(data: bytes | None, rows: int, count: int) -> list[npt.NDArray[np.int64]] | None:
    """Return the columns of `rows` rows of `count` numbers packed row after row, 8 bytes each, big-endian.

    Args:
        data: The packed numbers (None for no rows: PostgreSQL's aggregate of nothing).
        rows: How many rows the query returned.
        count: How many numbers each row holds.

    Returns:
        The columns; None when `data` holds another number of bytes (a row holding a NULL is packed as nothing).
    """
    import numpy as np  # only every edge as of a time reads columns

    packed = data or b""
    if len(packed) != rows * count * 8:
        return None
    numbers = np.frombuffer(packed, dtype=">i8").reshape(rows, count)
    return [numbers[:, i].astype(np.int64) for i in range(count)]


def array_literal(values: Sequence[Any]) -> str:
    """Return PostgreSQL's text form of an array of integers, text, booleans and NULLs (`{1,2}`, `{"a","b"}`).

    Args:
        values: The elements: each an int, a str, a bool or None.

    Returns:
        The array's literal, each text element quoted, for a query to cast to its type (`CAST(? AS BIGINT[])`).

    Raises:
        TypeError: An element of another type.
    """
    kinds = set(map(type, values))
    if kinds <= {int}:
        return "{" + ",".join(map(str, values)) + "}"
    if kinds == {str}:
        joined = "".join(values)
        if '"' not in joined and "\\" not in joined:
            return '{"' + '","'.join(values) + '"}'
    return "{" + ",".join(map(_array_element, values)) + "}"


def _array_element(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"an array sent to the lineage store's PostgreSQL holds a {type(value).__name__}")


class ArrayDumper(Dumper):
    """Send a list as the text of an array whose type the query gives (`CAST(? AS TEXT[])`).

    psycopg's own adapter of lists works out each element's type and text in Python, 2.4-2.8 microseconds an element:
    more than the query that reads them when a list is of tens of thousands of ids (`array_literal` instead).
    """

    def dump(self, obj: Any) -> bytes:
        """Return the list as the text of an array (`array_literal`)."""
        return array_literal(obj).encode()


def _placeholders(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")
