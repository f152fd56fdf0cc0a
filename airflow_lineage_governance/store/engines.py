"""The engine of a store's location: PostgreSQL for a `postgresql://` URL, else an embedded DuckDB file."""

from __future__ import annotations

from pathlib import Path

from airflow_lineage_governance.store.engine import Engine


def open_engine(location: str | Path, *, read_only: bool = False, create: bool = True) -> Engine:
    """Return the engine of the store at `location`.

    Args:
        location: A `postgresql://` (or `postgres://`) URL, or the path of a DuckDB file (created when missing,
            unless `read_only`).
        read_only: Open a DuckDB file for reading only, so that other processes may read it at the same time.
        create: Create a DuckDB file that is not there (else that is an error).

    Returns:
        The connected engine.

    Raises:
        StoreUnavailableError: The database cannot be reached or opened.
    """
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from airflow_lineage_governance.store.postgres_engine import PostgresEngine

        return PostgresEngine(text)
    from airflow_lineage_governance.store.duckdb_engine import DuckDBEngine

    return DuckDBEngine(Path(text), read_only=read_only, create=create)
