from __future__ import annotations

import pytest
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import open_catalog


@pytest.fixture
def catalog(empty_catalog_properties: dict[str, str]) -> Catalog:
    """An empty catalog of each kind: pyiceberg's SqlCatalog on SQLite, and the REST server."""
    return open_catalog("platform", empty_catalog_properties)
