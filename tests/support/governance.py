"""The governance of events written in the test, read into a lineage store in memory, with rules and metadata
written as TOML text."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from airflow_lineage_governance.governance.store_session import StoredGovernance, StoredLineage
from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.sync import sync
from tests.support.events import NS, write

METADATA = """
[tables."crm.learners"]
owner = "crm-team"
source = true
tier = 2
columns = { email = "personal", country = "internal", learner_id = "internal" }

[tables."marketing.offers"]
owner = "marketing"
tier = 1
columns = { learner_id = "internal", country = "internal" }
"""


def stored_governance_of(
    tmp_path: Path, *events: dict[str, Any], metadata: str = METADATA, rules: str = ""
) -> StoredGovernance:
    """Returns the governance of the events (a store in memory), with lineage.toml `rules` and metadata.toml
    `metadata`."""
    rules_path, metadata_path = tmp_path / "lineage.toml", tmp_path / "metadata.toml"
    rules_path.write_text(rules or f'namespace = "{NS}"\n')
    metadata_path.write_text(metadata)
    path = write(tmp_path / "events.jsonl", list(events))
    return StoredGovernance.from_events(path, rules_path=rules_path, metadata_path=metadata_path)


def governance_of(tmp_path: Path, *events: dict[str, Any], metadata: str = METADATA, rules: str = "") -> StoredLineage:
    """Returns the events as the nightly report reads them from the store (its source named "in-process")."""
    return stored_governance_of(tmp_path, *events, metadata=metadata, rules=rules).nightly("in-process")


def synced_lineage(
    folder: Path,
    source: str | Path,
    *,
    rules_path: Path | None = None,
    metadata_path: Path | None = None,
    job_namespaces: Iterable[str] | None = None,
) -> tuple[StoredLineage, str | None]:
    """Returns what the nightly governance DAG reads: the source synced into a new DuckDB store in `folder`, as the
    nightly report reads it, and why the source could not be read (None when it was)."""
    location = str(Path(tempfile.mkdtemp(dir=folder, prefix="store-")) / "lineage-store.duckdb")
    LineageStore.open(location, create=True).close()
    synced, problem = None, None
    try:
        synced = sync(location, str(source))
    except EventSourceError as error:
        problem = str(error)
    governance = StoredGovernance.open(
        location, rules_path=rules_path, metadata_path=metadata_path, job_namespaces=job_namespaces
    )
    return governance.nightly(synced.source if synced is not None else str(source), synced), problem
