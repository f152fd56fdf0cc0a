"""A ColumnLineage as the OpenLineage ColumnLineageDatasetFacet (openlineage-python's own class)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import attr
from openlineage.client.facet_v2 import RunFacet, extraction_error_run
from openlineage.client.facet_v2 import column_lineage_dataset as ol

from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.lineage.errors import LineageError
from airflow_lineage_governance.lineage.model import ColumnLineage, Dependency
from airflow_lineage_governance.refs import ColumnRef

DEFAULT_MAX_EDGES = 4096


@attr.define
class LineageTruncationRunFacet(RunFacet):
    """Says that the run's column lineage facet was cut to `kept` of `edges` edges (at most `limit`)."""

    edges: int
    kept: int
    limit: int
    target: str
    """The dataset name (`str(TableRef)`) of the table whose lineage was cut."""

    @staticmethod
    def _get_schema() -> str:
        return "https://airflow-lineage-governance.invalid/spec/LineageTruncationRunFacet.json#/$defs/LineageTruncationRunFacet"


def extraction_error_facet(error: LineageError) -> extraction_error_run.ExtractionErrorRunFacet:
    """Return the `extractionError` run facet of a statement whose lineage cannot be read.

    One task, failed, its error the engine's sentence and its task the target's dataset name (`statement` when not
    known). The governance checks recognise a failed lineage read by this facet.
    """
    return extraction_error_run.ExtractionErrorRunFacet(
        totalTasks=1,
        failedTasks=1,
        errors=[extraction_error_run.Error(errorMessage=str(error), task=error.table or "statement")],
    )


def bounded(lineage: ColumnLineage, limit: int = DEFAULT_MAX_EDGES) -> tuple[ColumnLineage, int]:
    """Return the lineage cut to at most `limit` edges and how many edges it had.

    The rows-shaping inputs first, then each column's inputs in order; every output column keeps its entry, possibly
    empty.
    """
    if lineage.edge_count <= limit:
        return lineage, lineage.edge_count
    rows = lineage.rows[:limit]
    budget = limit - len(rows)
    columns = []
    for column in lineage.columns:
        kept = column.inputs[: max(budget, 0)]
        budget -= len(kept)
        columns.append(replace(column, inputs=kept))
    return replace(lineage, columns=tuple(columns), rows=rows), lineage.edge_count


def _input_fields(dependencies: Iterable[Dependency], namespace: str) -> list[ol.InputField]:
    by_source: dict[ColumnRef, list[Dependency]] = defaultdict(list)
    for dependency in dependencies:
        by_source[dependency.source].append(dependency)
    return [
        ol.InputField(
            namespace=namespace,
            name=str(source.table),
            field=source.field,
            transformations=[
                ol.Transformation(
                    type=str(d.type), subtype=str(d.subtype), description=d.description, masking=d.masking
                )
                for d in deps
            ],
        )
        for source, deps in sorted(by_source.items(), key=lambda item: str(item[0]))
    ]


def deprecated_transformation_type(dependencies: Sequence[Dependency]) -> str:
    """Return the deprecated per-field transformationType, set only where it cannot mislead.

    Marquez applies this one label to every input of the column (its column lineage keeps DIRECT edges only), so it is
    the inputs' one subtype when every input is DIRECT with the same subtype (MASKED when every one is hashed), and ''
    otherwise (no inputs, an INDIRECT input, or DIRECT inputs of different subtypes). The typed `transformations` of
    each input field always say everything.
    """
    if not dependencies or any(d.type != EdgeType.DIRECT for d in dependencies):
        return ""
    subtypes = {d.subtype for d in dependencies}
    if len(subtypes) != 1:
        return ""
    if all(d.masking for d in dependencies):
        return "MASKED"
    return str(subtypes.pop())


def column_lineage_facet(lineage: ColumnLineage, namespace: str) -> ol.ColumnLineageDatasetFacet:
    """Return the facet.

    Per output column its input fields with typed transformations (and the deprecated per-field type and description),
    and the `dataset` list of inputs that shape every row.
    """
    fields = {
        output.name: ol.Fields(
            inputFields=_input_fields(output.inputs, namespace),
            transformationDescription=output.expression,
            transformationType=deprecated_transformation_type(output.inputs),
        )
        for output in lineage.columns
    }
    return ol.ColumnLineageDatasetFacet(fields=fields, dataset=_input_fields(lineage.rows, namespace))
