"""Our OpenLineage facets of a task's output (their JSON schemas are in airflow_lineage_governance/spec/)."""

from __future__ import annotations

import attr
from openlineage.client.facet_v2 import OutputDatasetFacet, RunFacet

from airflow_lineage_governance.iceberg.session import SessionSettings
from airflow_lineage_governance.iceberg.write import RowCounts

SPEC = "https://airflow-lineage-governance.invalid/spec/"


@attr.define
class RowChangesOutputDatasetFacet(OutputDatasetFacet):
    """Says how a MERGE, UPDATE or DELETE changed its target.

    Rows inserted, updated and deleted (together the output statistics' `rowCount`), and how many of the table's data
    files it rewrote, copy-on-write.
    """

    inserted: int
    updated: int
    deleted: int
    filesRewritten: int  # noqa: N815 - the facet's JSON field names are camelCase, as OpenLineage's
    filesInTable: int  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return SPEC + "RowChangesOutputDatasetFacet.json#/$defs/RowChangesOutputDatasetFacet"


def row_changes_facet(counts: RowCounts) -> RowChangesOutputDatasetFacet:
    """Return the `rowChanges` output facet of a MERGE, UPDATE or DELETE's row counts."""
    return RowChangesOutputDatasetFacet(
        inserted=counts.inserted,
        updated=counts.updated,
        deleted=counts.deleted,
        filesRewritten=counts.files_rewritten,
        filesInTable=counts.files_in_table,
    )


@attr.define
class DuckDBSessionRunFacet(RunFacet):
    """Says which DuckDB session settings the statement ran under.

    Time zone, calendar, default collation and ordering (the provider's, never the worker's environment).
    """

    TimeZone: str  # noqa: N815 - the facet's JSON field names are DuckDB's setting names
    Calendar: str  # noqa: N815
    default_collation: str
    default_order: str
    default_null_order: str

    @staticmethod
    def _get_schema() -> str:
        return SPEC + "DuckDBSessionRunFacet.json#/$defs/DuckDBSessionRunFacet"


def duckdb_session_facet(session: SessionSettings) -> DuckDBSessionRunFacet:
    """Return the `duckdbSession` run facet of the settings a statement ran under."""
    return DuckDBSessionRunFacet(**session.as_facet())
