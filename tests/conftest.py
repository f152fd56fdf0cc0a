"""Session-wide fixtures, and `catalog_kind`: the SQL and REST catalog kinds the catalog tests run on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.iceberg_rest import CATALOG_KINDS, catalog_properties, rest_catalog

pytest_plugins = ["tests.support.field_types"]  # one type per field in every event the tests make the provider write


@pytest.fixture(scope="session")
def rest_catalog_properties(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Yields the pyiceberg properties (`type: rest`, `uri`, `warehouse`) of one real Iceberg REST catalog server
    shared by the session; tests keep apart by namespace, or empty it (`catalog_properties`)."""
    with rest_catalog(tmp_path_factory.mktemp("iceberg-rest")) as properties:
        yield properties


@pytest.fixture(params=CATALOG_KINDS)
def catalog_kind(request: pytest.FixtureRequest) -> str:
    """The catalog kind a parametrised test runs on: `sql` (SqlCatalog on SQLite) or `rest` (the REST server)."""
    return str(request.param)


@pytest.fixture
def empty_catalog_properties(
    catalog_kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """Yields the pyiceberg properties of an empty catalog of the test's `catalog_kind`."""
    with catalog_properties(catalog_kind, request, tmp_path_factory.mktemp("catalog")) as properties:
        yield properties
