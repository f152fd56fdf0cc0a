from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace

ROWS = 200_000


@pytest.fixture
def bench_catalog(tmp_path):
    folder = tmp_path / "catalog"
    catalog = open_local_catalog(folder)
    source = pa.table({"id": pa.array(range(ROWS), pa.int64()), "value": pa.array(range(ROWS), pa.int64())})
    create_or_replace(catalog, "bench.src", source, {})
    create_or_replace(catalog, "bench.dst", source, {})
    catalog.create_table("bench.log", schema=source.schema)
    return folder, catalog
