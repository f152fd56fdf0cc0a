from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import open_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace
from tests.support.iceberg_rest import CATALOG_KINDS, catalog_properties

ROWS = 200_000


@dataclass(frozen=True)
class BenchCatalog:
    """The reliability tests' catalog: its kind, pyiceberg properties and local warehouse folder."""

    kind: str
    properties: dict[str, str]

    @property
    def argument(self) -> str:
        """Returns the properties as the writer process takes them (JSON)."""
        return json.dumps(self.properties)

    @property
    def warehouse(self) -> Path:
        """Returns the folder holding the catalog's table files."""
        return Path(self.properties["warehouse"].removeprefix("file://"))

    def figures_name(self, test: str) -> str:
        """Returns the name of a test's figures file: `test` on the SQL catalog, `test-rest` on the REST one."""
        return test if self.kind == "sql" else f"{test}-{self.kind}"

    def open(self) -> Catalog:
        """Returns the catalog, opened afresh (the state other processes committed)."""
        return open_catalog("bench", self.properties)


@pytest.fixture(params=CATALOG_KINDS)
def bench_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[BenchCatalog, Catalog]]:
    """Yields the bench catalog, once on each catalog kind (SQLite, the REST server), holding bench.src and
    bench.dst (ROWS rows each) and an empty bench.log."""
    with catalog_properties(request.param, request, tmp_path / "catalog") as properties:
        bench = BenchCatalog(request.param, properties)
        catalog = bench.open()
        source = pa.table({"id": pa.array(range(ROWS), pa.int64()), "value": pa.array(range(ROWS), pa.int64())})
        create_or_replace(catalog, "bench.src", source, {})
        create_or_replace(catalog, "bench.dst", source, {})
        catalog.create_table("bench.log", schema=source.schema)
        yield bench, catalog
