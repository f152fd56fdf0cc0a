"""The embedded engine: one DuckDB file, opened by one writing process at a time (DuckDB's own file lock)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

from airflow_lineage_governance.store.engine import Row, T, numbers_refused
from airflow_lineage_governance.store.errors import StoreBusyError, StoreMissingError, StoreUnavailableError

WRITER_CHECKPOINT_THRESHOLD = "256MB"
"""How large a writer lets DuckDB's write-ahead log grow before a commit checkpoints it into the file (DuckDB's
default, 16MB, checkpointed after about every batch of an ingest)."""


class DuckDBEngine:
    """A store in a DuckDB file."""

    dialect = "duckdb"
    text_order = ""  # DuckDB compares text by its bytes: UTF-8 byte order is code point order
    errors: tuple[type[BaseException], ...] = (duckdb.Error,)

    def __init__(self, path: Path, *, read_only: bool = False, create: bool = True) -> None:
        self.path = path
        self.read_only = read_only
        self.description = str(path)
        if (read_only or not create) and not path.exists():
            raise StoreMissingError(str(path))
        if not read_only:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise self._unopened(error) from None
        self.memory_limit_setting = "store_memory_limit" if read_only else "store_writer_memory_limit"
        self.connection = self._connect()
        self._staged = 0
        self._tables: dict[str, tuple[dict[str, pa.DataType], bool]] = {}  # each table's column types, and keyed

    def _connect(self) -> duckdb.DuckDBPyConnection:
        config: dict[str, str | bool | int | float | list[str]] = {
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
        from airflow_lineage_governance.settings import setting

        limit = setting(self.memory_limit_setting)  # past it DuckDB spills rather than grow
        if limit:  # a folder of its own, which DuckDB makes when it spills and removes when it closes
            spill = Path(tempfile.gettempdir()) / f"lineage-store-{os.getpid()}-{id(self)}"
            config |= {"memory_limit": limit, "temp_directory": str(spill)}
        if not self.read_only:
            config["checkpoint_threshold"] = WRITER_CHECKPOINT_THRESHOLD
        try:
            return duckdb.connect(str(self.path), read_only=self.read_only, config=config)
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise StoreBusyError(
                    f"{self.path}: another process has the lineage store's DuckDB file open; try again when it "
                    "is done, or keep a store that many processes share on PostgreSQL"
                ) from None
            raise self._unopened(error) from None
        except (duckdb.Error, OSError) as error:
            raise self._unopened(error) from None

    def _unopened(self, error: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(f"{self.path}: the lineage store cannot be opened ({_first_line(error)})")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a query and return its rows."""
        return self.connection.execute(sql, list(params)).fetchall()

    def start_query(self, sql: str, params: Sequence[Any], then: Callable[[list[Row]], T]) -> Callable[[], T]:
        """Run a query, and `then` on its rows, at once; return a function that returns `then`'s value.

        The file has one connection, and DuckDB reads with all of the reader's threads.
        """
        value = then(self.query(sql, params))
        return lambda: value

    def integer_columns(self, sql: str, params: Sequence[Any], count: int) -> list[npt.NDArray[np.int64]]:
        """Run a query of `count` BIGINT columns, never NULL; return its columns as arrays (DuckDB's own).

        Raises:
            StoreError: A value is NULL, or the query has another number of columns, or a column of another type.
        """
        import numpy as np  # only every edge as of a time reads columns

        columns = list(self.connection.execute(sql, list(params)).fetchnumpy().values())
        if len(columns) != count or any(np.ma.isMaskedArray(c) or c.dtype != np.int64 for c in columns):
            raise numbers_refused(self.description, count)
        return [np.asarray(column, dtype=np.int64) for column in columns]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run a statement."""
        head = sql.lstrip()[:22].upper()
        temporary = head.startswith(("CREATE TEMP", "CREATE OR REPLACE TEMP"))
        if head[:5] in ("CREAT", "ALTER", "DROP ") and not temporary:  # a store table may have changed
            self._tables.clear()
        self.connection.execute(sql, list(params))

    def insert(
        self, table: str, columns: Sequence[str], rows: Sequence[Row], returning: Sequence[str] = ()
    ) -> list[Row]:
        """Insert the rows through an Arrow table (one statement, not one per row); return `returning` of those added.

        Rows whose key is there already or repeats within `rows` are left out.
        """
        if not rows:
            return []
        import pyarrow as pa  # only a writer needs it: a reader starts faster without (1 s under load)

        types, keyed = self._table(table)
        staged = pa.table(
            {name: pa.array([row[i] for row in rows], type=types[name]) for i, name in enumerate(columns)}
        )
        self._staged += 1
        name = f"staged_{self._staged}"
        self.connection.register(name, staged)
        listed = ", ".join(columns)
        sql = f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {name}" + (
            " ON CONFLICT DO NOTHING" if keyed else ""
        )
        try:
            added = self.connection.execute(sql + (" RETURNING " + ", ".join(returning) if returning else ""))
            found = added.fetchall() if returning else []
        except duckdb.Error:
            with suppress(duckdb.Error):  # in the transaction the error aborted, DuckDB refuses even this
                self.connection.unregister(name)
            raise
        self.connection.unregister(name)
        return found

    def _table(self, table: str) -> tuple[dict[str, pa.DataType], bool]:
        if table not in self._tables:
            found = self.connection.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main'",
                [table],
            ).fetchall()
            keyed = (
                self.connection.execute(
                    "SELECT COUNT(*) FROM duckdb_constraints() WHERE table_name = ? AND "
                    "schema_name = 'main' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')",
                    [table],
                ).fetchall()[0][0]
                > 0
            )
            import pyarrow as pa

            self._tables[table] = ({name: getattr(pa, ARROW_TYPES[kind])() for name, kind in found}, keyed)
        return self._tables[table]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block in one transaction: committed when it ends, rolled back when it raises."""
        self.connection.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def lock(self, keys: Sequence[int]) -> None:
        """Do nothing: a DuckDB file has one writing process, and the engine one connection."""

    def tables(self) -> set[str]:
        """Return the names of the tables and views in the file's main schema."""
        return {
            name
            for (name,) in self.query(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL SELECT view_name FROM "
                "duckdb_views() WHERE schema_name = 'main' AND NOT internal"
            )
        }

    def size_bytes(self) -> int:
        """Return the file's size (with its write-ahead log)."""
        wal = self.path.with_name(self.path.name + ".wal")
        return self.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)

    def vacuum(self) -> None:
        """Write the store into a new file, without the blocks deleted rows left free, and put it in the file's place.

        A process reading the old file goes on reading it.
        """
        self.connection.execute("VACUUM")
        self.connection.execute("CHECKPOINT")
        if self.read_only:
            return
        compact = self.path.with_name(self.path.name + ".compact")
        compact.unlink(missing_ok=True)
        catalog = self.connection.execute("SELECT current_database()").fetchall()[0][0]
        quoted = str(compact).replace("'", "''")
        self.connection.execute(f"ATTACH '{quoted}' AS store_compact")
        try:
            self.connection.execute(f'COPY FROM DATABASE "{catalog}" TO store_compact')
        finally:
            self.connection.execute("DETACH store_compact")
        self.connection.close()
        os.replace(compact, self.path)
        self.connection = self._connect()

    def close(self) -> None:
        """Close the file."""
        self.connection.close()

    def transient(self, error: BaseException) -> bool:
        """Return False: the file's one writer never meets another transaction."""
        return False

    def out_of_memory(self, error: BaseException) -> bool:
        """Return whether the query needed more than DuckDB's memory_limit (`memory_limit_setting`)."""
        return isinstance(error, duckdb.OutOfMemoryException)

    def release_memory(self) -> bool:
        """Open a reader's file again, giving back what DuckDB keeps of the indexes it has read; return whether it did.

        DuckDB keeps each part of an index a look-up read, counted against the memory limit, until the file is
        closed: after many questions the indexes may hold most of a reader's limit. A writer keeps its connection.

        Raises:
            StoreBusyError: A writing process opened the file since (DuckDB's file lock).
        """
        if not self.read_only:
            return False
        self.connection.close()
        self.connection = self._connect()
        return True


ARROW_TYPES = {"BIGINT": "int64", "INTEGER": "int32", "VARCHAR": "string", "BOOLEAN": "bool_", "BLOB": "binary"}
"""The Arrow type (a `pyarrow` function's name) each column type of the store is staged as."""


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
