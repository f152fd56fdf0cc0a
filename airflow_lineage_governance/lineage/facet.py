"""A ColumnLineage as the OpenLineage ColumnLineageDatasetFacet (openlineage-python's own class)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from openlineage.client.facet_v2 import column_lineage_dataset as ol

from airflow_lineage_governance.lineage.model import DIRECT, DIRECT_RANK, ColumnLineage, Dependency


def _input_fields(dependencies: Iterable[Dependency], namespace: str) -> list[ol.InputField]:
    by_source: dict[str, list[Dependency]] = defaultdict(list)
    for dependency in dependencies:
        by_source[dependency.source].append(dependency)
    return [
        ol.InputField(
            namespace=namespace,
            name=source.rsplit(".", 1)[0],
            field=source.rsplit(".", 1)[1],
            transformations=[
                ol.Transformation(type=d.type, subtype=d.subtype, description=d.description, masking=d.masking)
                for d in deps
            ],
        )
        for source, deps in sorted(by_source.items())
    ]


def deprecated_transformation_type(dependencies: Sequence[Dependency]) -> str:
    """Returns the per-field transformationType that Marquez stores: MASKED when every value input is
    hashed, else the strongest DIRECT subtype, else INDIRECT (only row or condition inputs), else ''."""
    direct = [d for d in dependencies if d.type == DIRECT]
    if not direct:
        return "INDIRECT" if dependencies else ""
    if all(d.masking for d in direct):
        return "MASKED"
    return max(direct, key=lambda d: DIRECT_RANK[d.subtype]).subtype


def column_lineage_facet(lineage: ColumnLineage, namespace: str) -> ol.ColumnLineageDatasetFacet:
    """Returns the facet: per output column its input fields with typed transformations (and the
    deprecated per-field type and description), and the `dataset` list of inputs that shape every row."""
    fields = {
        output.name: ol.Fields(
            inputFields=_input_fields(output.inputs, namespace),
            transformationDescription=output.expression,
            transformationType=deprecated_transformation_type(output.inputs),
        )
        for output in lineage.columns
    }
    return ol.ColumnLineageDatasetFacet(fields=fields, dataset=_input_fields(lineage.rows, namespace))
