"""Our OpenLineage facets of a task's output (their JSON schemas are in airflow_lineage_governance/spec/)."""

from __future__ import annotations

import attr
from openlineage.client.facet_v2 import OutputDatasetFacet

from airflow_lineage_governance.iceberg.write import RowCounts

SPEC = "https://airflow-lineage-governance.invalid/spec/"


@attr.define
class RowChangesOutputDatasetFacet(OutputDatasetFacet):
    """Says how a MERGE, UPDATE or DELETE changed its target: rows inserted, updated and deleted (together the
    output statistics' `rowCount`), and how many of the table's data files it rewrote, copy-on-write."""

    inserted: int
    updated: int
    deleted: int
    filesRewritten: int  # noqa: N815 - the facet's JSON field names are camelCase, as OpenLineage's
    filesInTable: int  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return SPEC + "RowChangesOutputDatasetFacet.json#/$defs/RowChangesOutputDatasetFacet"


def row_changes_facet(counts: RowCounts) -> RowChangesOutputDatasetFacet:
    """Returns the `rowChanges` output facet of a MERGE, UPDATE or DELETE's row counts."""
    return RowChangesOutputDatasetFacet(inserted=counts.inserted, updated=counts.updated, deleted=counts.deleted,
                                        filesRewritten=counts.files_rewritten, filesInTable=counts.files_in_table)
