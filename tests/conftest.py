"""Session-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.iceberg_rest import rest_catalog


@pytest.fixture(scope="session")
def rest_catalog_properties(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Yields the pyiceberg properties (`type: rest`, `uri`, `warehouse`) of one real Iceberg REST catalog server
    shared by the session; tests keep apart by namespace."""
    with rest_catalog(tmp_path_factory.mktemp("iceberg-rest")) as properties:
        yield properties
