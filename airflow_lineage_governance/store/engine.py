"""The one interface the store's two engines offer (`Engine`); `engines.open_engine` picks one by location."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from airflow_lineage_governance.store.errors import StoreError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Row = tuple[Any, ...]
T = TypeVar("T")

FEW = 6
"""At most this many keys are read one look-up each (an index look-up on both engines: DuckDB uses an index for one
equality on an index of one column); more are read in one query."""


class Engine(Protocol):
    """A database the store runs on: statements written once, with `?` placeholders, for both engines."""

    dialect: str
    """`duckdb` or `postgres`."""
    description: str
    """Where the database is, for sentences: a path, or a URL without its password."""
    text_order: str
    """What to write after a text expression in ORDER BY so that it sorts by code point, as Python does."""
    errors: tuple[type[BaseException], ...]
    """The errors the database's driver raises (a lost connection, a full disk, a refused statement)."""

    @property
    def memory_limit_setting(self) -> str | None:
        """Return the setting whose memory limit the connection keeps to, None when the server keeps its own memory.

        A DuckDB reader's `store_memory_limit` or a writer's `store_writer_memory_limit`.
        """
        ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a query and return its rows."""
        ...

    def start_query(self, sql: str, params: Sequence[Any], then: Callable[[list[Row]], T]) -> Callable[[], T]:
        """Start a query, and `then` on its rows; return a function that waits for `then`'s value and returns it.

        PostgreSQL runs both on a second connection's thread while the caller's next queries run on the first (the
        server works on both queries at once, and `then` runs while the caller waits for the server); DuckDB runs
        them at once.
        """
        ...

    def integer_columns(self, sql: str, params: Sequence[Any], count: int) -> list[npt.NDArray[np.int64]]:
        """Run a query of `count` BIGINT columns, never NULL; return its columns as arrays.

        The values come over as numbers in bulk, not as a Python object each: 100,000 rows of four numbers made
        into tuples cost more than the query that made them.

        Raises:
            StoreError: A value is NULL, or the query has another number of columns, or a column of another type.
        """
        ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run a statement."""
        ...

    def insert(
        self, table: str, columns: Sequence[str], rows: Sequence[Row], returning: Sequence[str] = ()
    ) -> list[Row]:
        """Insert the rows, leaving out those whose key is there already; return `returning` of those added."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """Return a context in which every statement commits together, or none does."""
        ...

    def lock(self, keys: Sequence[int]) -> None:
        """Hold the keys until the transaction ends, so that writers of the same keys take turns."""
        ...

    def tables(self) -> set[str]:
        """Return the names of the tables and views in the database (the store's search path on PostgreSQL)."""
        ...

    def size_bytes(self) -> int:
        """Return the database's size on disk."""
        ...

    def vacuum(self) -> None:
        """Gives back the space of deleted rows and refreshes the planner's statistics."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...

    def transient(self, error: BaseException) -> bool:
        """Return whether a batch that failed with `error` may succeed when tried again.

        A deadlock, a serialization failure.
        """
        ...

    def out_of_memory(self, error: BaseException) -> bool:
        """Return whether a query failed with `error` because it needed more memory than the database may take."""
        ...

    def release_memory(self) -> bool:
        """Give back the memory the database keeps between queries, if it can; return whether it did."""
        ...


def numbers_refused(description: str, count: int) -> StoreError:
    """Return the error of a query of `count` numbers (`Engine.integer_columns`) that read something else."""
    return StoreError(f"{description}: a query of {count} numbers read something else; ask again")


def by_key(engine: Engine, select: str, keys: Sequence[int], params: Sequence[Any] = ()) -> list[Row]:
    """Return the rows of `select`, which ends in `WHERE` (or `AND`) and a key column, for each of the keys.

    Args:
        engine: The store's engine.
        select: The query, up to the key column it looks the keys up in.
        keys: The keys.
        params: The parameters of the query's placeholders before the key column's.

    Returns:
        The rows: one look-up per key for a few keys (`FEW`), else one query for them all.
    """
    if len(keys) <= FEW:
        return [row for key in keys for row in engine.query(f"{select} = ?", [*params, key])]
    return engine.query(f"{select} IN (SELECT unnest(CAST(? AS BIGINT[])))", [*params, list(keys)])


def batches(rows: Sequence[Row], size: int) -> Iterator[Sequence[Row]]:
    """Yield the rows in slices of at most `size`."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
