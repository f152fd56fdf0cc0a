"""Errors of the lineage store, all under `StoreError` (itself under the package's `LineageGovernanceError`)."""

from __future__ import annotations

from airflow_lineage_governance.errors import LineageGovernanceError


class StoreError(LineageGovernanceError):
    """Raised when the lineage store cannot be opened, upgraded, written or asked."""


class StoreVersionError(StoreError):
    """Raised when a store's schema is newer than this provider knows, or its version cannot be read."""


class StoreUnavailableError(StoreError):
    """Raised when the store's database cannot be reached or refuses the connection."""


class StoreMissingError(StoreUnavailableError):
    """Raised when a location holds no lineage store yet (no DuckDB file, or a database without the store's tables).

    `store` names the location as sentences do (a path, or a URL without its password).
    """

    def __init__(self, store: str) -> None:
        self.store = store
        super().__init__(f"{store}: no lineage store here; create it with `lineage-governance store init`")


class StoreBusyError(StoreUnavailableError):
    """Raised when another process has the store's DuckDB file open (DuckDB locks it to one process)."""


class ColumnNotInStoreError(StoreError):
    """Raised when a column asked about is named by no event in the store, or the text names no column."""


class SnapshotNotInStoreError(StoreError):
    """Raised when no COMPLETE event in the store wrote or read the snapshot asked about."""
