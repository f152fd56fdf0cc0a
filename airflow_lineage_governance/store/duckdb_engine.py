"""The embedded engine: one DuckDB file, opened by one writing process at a time (DuckDB's own file lock)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from airflow_lineage_governance.store.engine import Row
from airflow_lineage_governance.store.errors import StoreUnavailableError


class DuckDBEngine:
    """A store in a DuckDB file."""

    dialect = "duckdb"
    text_order = ""  # DuckDB compares text by its bytes: UTF-8 byte order is code point order
    errors: tuple[type[BaseException], ...] = (duckdb.Error,)

    def __init__(self, path: Path, *, read_only: bool = False, create: bool = True) -> None:
        self.path = path
        self.description = str(path)
        if (read_only or not create) and not path.exists():
            raise StoreUnavailableError(f"{path}: no lineage store here; create it with "
                                        "`lineage-governance store init`")
        try:
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = duckdb.connect(str(path), read_only=read_only,
                                             config={"autoinstall_known_extensions": False,
                                                     "autoload_known_extensions": False})
        except (duckdb.Error, OSError) as error:
            raise StoreUnavailableError(f"{path}: the lineage store cannot be opened ({_first_line(error)})") from None
        self._staged = 0

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Runs a query and returns its rows."""
        return self.connection.execute(sql, list(params)).fetchall()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Runs a statement."""
        self.connection.execute(sql, list(params))

    def insert(self, table: str, columns: Sequence[str], rows: Sequence[Row],
               returning: Sequence[str] = ()) -> list[Row]:
        """Inserts the rows through an Arrow table (one statement, not one per row), leaving out those whose key is
        there already or repeats within `rows`; returns `returning` of those added."""
        if not rows:
            return []
        types = self._types(table)
        staged = pa.table({name: pa.array([row[i] for row in rows], type=types[name])
                           for i, name in enumerate(columns)})
        self._staged += 1
        name = f"staged_{self._staged}"
        self.connection.register(name, staged)
        try:
            listed = ", ".join(columns)
            sql = f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {name} ON CONFLICT DO NOTHING"
            if returning:
                return self.connection.execute(sql + " RETURNING " + ", ".join(returning)).fetchall()
            self.connection.execute(sql)
            return []
        finally:
            self.connection.unregister(name)

    def _types(self, table: str) -> dict[str, pa.DataType]:
        found = self.connection.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?",
                                        [table]).fetchall()
        return {name: ARROW_TYPES[kind] for name, kind in found}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Runs the block in one transaction: committed when it ends, rolled back when it raises."""
        self.connection.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def lock(self, keys: Sequence[int]) -> None:
        """Does nothing: a DuckDB file has one writing process, and the engine one connection."""

    def tables(self) -> set[str]:
        """Returns the names of the tables in the file's main schema."""
        return {name for (name,) in self.query("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'")}

    def size_bytes(self) -> int:
        """Returns the file's size (with its write-ahead log)."""
        wal = self.path.with_name(self.path.name + ".wal")
        return self.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)

    def vacuum(self) -> None:
        """Writes the write-ahead log into the file and gives back the space of deleted rows."""
        self.connection.execute("VACUUM")
        self.connection.execute("CHECKPOINT")

    def close(self) -> None:
        """Closes the file."""
        self.connection.close()

    def transient(self, error: BaseException) -> bool:
        """Returns False: the file's one writer never meets another transaction."""
        return False


ARROW_TYPES = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "VARCHAR": pa.string(), "BOOLEAN": pa.bool_(),
               "BLOB": pa.binary()}


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
