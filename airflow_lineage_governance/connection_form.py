"""The `iceberg_catalog` connection form as Airflow 3.3 reads it from the provider info's `connection-types`.

The hook's name, which standard fields are hidden or relabelled, placeholders, and the typed extra fields (stored in the
connection's extra JSON under their own names, which the hook reads).
"""

from __future__ import annotations

from typing import Any

CONNECTION_TYPE = "iceberg_catalog"
HOOK_CLASS = "airflow_lineage_governance.hooks.iceberg.IcebergHook"
HOOK_NAME = "Apache Iceberg catalog"

UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden-fields": ["host", "schema", "login", "port"],
    "relabeling": {"password": "Catalog credential or token"},
    "placeholders": {
        "extra": '{"uri": "sqlite:////data/catalog.db", "warehouse": "file:///data/warehouse", "catalog_name": "lake"}',
        "password": "only for a catalog that needs one (sent as the `credential` property)",
    },
}

CONN_FIELDS: dict[str, Any] = {
    "type": {
        "label": "Catalog type",
        "description": "pyiceberg's catalog type (glue, dynamodb, …); leave it empty when the URI says it "
        "(sqlite:// or postgresql:// is sql, http(s):// rest, thrift:// hive): Airflow registers "
        "every extra value as a secret, and one under 5 characters warns in each task log",
        "schema": {"type": ["string", "null"]},
    },
    "uri": {
        "label": "Catalog URI",
        "description": "The catalog's database URL (sql) or endpoint (rest, hive).",
        "schema": {"type": ["string", "null"]},
    },
    "warehouse": {
        "label": "Warehouse",
        "description": "Where the tables' files live, e.g. file:///data/warehouse or s3://bucket/warehouse.",
        "schema": {"type": ["string", "null"]},
    },
    "catalog_name": {
        "label": "Catalog name",
        "description": "The catalog's name in lineage and assets (default: the connection id).",
        "schema": {"type": ["string", "null"]},
    },
}


def connection_type() -> dict[str, Any]:
    """Return the provider info's `connection-types` entry of `iceberg_catalog`."""
    return {
        "hook-class-name": HOOK_CLASS,
        "hook-name": HOOK_NAME,
        "connection-type": CONNECTION_TYPE,
        "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
        "conn-fields": CONN_FIELDS,
    }
