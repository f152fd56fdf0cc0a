"""OpenLineage datasets for catalog tables: schema, version, statistics and column lineage facets."""

from __future__ import annotations

from collections.abc import Sequence

from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import (
    DatasetFacet,
    OutputDatasetFacet,
    dataset_version_dataset,
    output_statistics_output_dataset,
    schema_dataset,
)

from airflow_lineage_governance.lineage.facet import column_lineage_facet
from airflow_lineage_governance.lineage.model import ColumnLineage
from airflow_lineage_governance.refs import TableRef

Fields = Sequence[tuple[str, str]]


def schema_facet(fields: Fields) -> schema_dataset.SchemaDatasetFacet:
    """Return the schema facet of (column, type) pairs."""
    return schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name=name, type=kind) for name, kind in fields]
    )


def input_dataset(
    namespace: str, name: TableRef | str, fields: Fields | None = None, snapshot_id: int | None = None
) -> InputDataset:
    """Return the input dataset, with its schema and the snapshot read when known."""
    facets: dict[str, DatasetFacet] = {}
    if fields:
        facets["schema"] = schema_facet(fields)
    if snapshot_id is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id))
    return InputDataset(namespace=namespace, name=str(name), facets=facets)


def output_dataset(
    namespace: str,
    name: TableRef | str,
    fields: Fields | None = None,
    lineage: ColumnLineage | None = None,
    snapshot_id: int | None = None,
    rows: int | None = None,
) -> OutputDataset:
    """Return the output dataset with whichever of schema, column lineage, version and row count are known."""
    facets: dict[str, DatasetFacet] = {}
    if fields:
        facets["schema"] = schema_facet(fields)
    if lineage is not None:
        facets["columnLineage"] = column_lineage_facet(lineage, namespace)
    if snapshot_id is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id))
    output_facets: dict[str, OutputDatasetFacet] = {}
    if rows is not None:
        output_facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
            rowCount=rows
        )
    return OutputDataset(namespace=namespace, name=str(name), facets=facets, outputFacets=output_facets)
