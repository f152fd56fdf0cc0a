"""One statement's lineage read over a schema, and its output columns' and rows' inputs as sorted text."""

from __future__ import annotations

from airflow_lineage_governance.lineage import ColumnLineage, column_lineage


def fields(lineage: ColumnLineage) -> dict[str, list[str]]:
    """Each output column's inputs as 'db.table.column TYPE SUBTYPE[ masked]', sorted."""
    return {
        output.name: sorted(f"{d.source} {d.type} {d.subtype}{' masked' if d.masking else ''}" for d in output.inputs)
        for output in lineage.columns
    }


def rows(lineage: ColumnLineage) -> list[str]:
    """The inputs that shape every row as 'db.table.column SUBTYPE', sorted."""
    return sorted(f"{d.source} {d.subtype}" for d in lineage.rows)


def read(sql: str, schema: dict) -> ColumnLineage:
    return column_lineage(sql, schema)
