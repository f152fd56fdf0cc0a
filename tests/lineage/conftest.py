from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import ColumnLineage, column_lineage
from learning_platform.tables import lineage_schema


@pytest.fixture(scope="session")
def schema() -> dict:
    return lineage_schema()


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
