"""The lineage store's engines for the UI's tests: the store tests' fixtures (a DuckDB file in the test's folder, a
real PostgreSQL 15 for the session)."""

from __future__ import annotations

from tests.store.conftest import engine_kind, postgres_url, store_location

__all__ = ["engine_kind", "postgres_url", "store_location"]
