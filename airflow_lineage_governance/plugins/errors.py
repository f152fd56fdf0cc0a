"""Errors of the UI plugin, under the package's `LineageGovernanceError`."""

from __future__ import annotations

from airflow_lineage_governance.errors import LineageGovernanceError


class StoreNotReadError(LineageGovernanceError):
    """Raised when the lineage store cannot be read for a page; the message is the one sentence the page shows."""
