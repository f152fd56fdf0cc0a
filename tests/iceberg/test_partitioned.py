"""The commit that replaces data files: the table metadata it builds follows every change of its transaction."""

from __future__ import annotations

import pyarrow as pa

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.partitioned import MetadataReusingTransaction
from airflow_lineage_governance.iceberg.write import create_or_replace


def test_the_transaction_metadata_is_built_again_after_each_change(tmp_path):
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "shop.orders", pa.table({"id": pa.array([1, 2], pa.int64())}), {})
    table = catalog.load_table(("shop", "orders"))
    transaction = MetadataReusingTransaction(table)
    before = transaction.table_metadata
    assert transaction.table_metadata is before  # no change: the same metadata, not another copy
    transaction.set_properties({"owner": "finance"})
    assert transaction.table_metadata.properties["owner"] == "finance"
    assert "owner" not in before.properties
    transaction.commit_transaction()
    assert catalog.load_table(("shop", "orders")).properties["owner"] == "finance"
