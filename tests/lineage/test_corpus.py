"""Every corpus statement is read, with an entry for every output column."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from tests.support.corpus import corpus


@pytest.mark.parametrize("sql", corpus())
def test_corpus_statement_is_read(sql, schema):
    lineage = column_lineage(sql, schema)
    facet = column_lineage_facet(lineage, "iceberg://platform")
    assert list(facet.fields) == [c.name for c in lineage.columns] and lineage.columns
