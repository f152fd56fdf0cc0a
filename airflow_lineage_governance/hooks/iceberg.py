"""IcebergHook: a pyiceberg catalog from an Airflow connection of type `iceberg_catalog`.

The connection's extra JSON holds the pyiceberg catalog properties (`type`, `uri`, `warehouse`, …) plus two
keys of ours: `catalog_name` (default: the connection id) and `lineage_namespace` (default
`iceberg://<catalog_name>`). The connection's password, if set, is passed as the property named by
`password_property` (default `credential`); no property value is ever logged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

    from airflow_lineage_governance.refs import TableRef

OUR_KEYS = ("catalog_name", "lineage_namespace", "password_property")


class IcebergHook(BaseHook):
    """Opens the pyiceberg catalog an `iceberg_catalog` connection describes."""

    conn_name_attr = "iceberg_conn_id"
    default_conn_name = "iceberg_default"
    conn_type = "iceberg_catalog"
    hook_name = "Apache Iceberg catalog"

    def __init__(self, iceberg_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.iceberg_conn_id = iceberg_conn_id
        self._catalog: Catalog | None = None
        self._extra: dict[str, Any] | None = None

    def _settings(self) -> dict[str, Any]:
        if self._extra is None:
            connection = self.get_connection(self.iceberg_conn_id)
            extra = dict(connection.extra_dejson)
            if connection.password:
                extra.setdefault(extra.get("password_property", "credential"), connection.password)
            extra.setdefault("catalog_name", self.iceberg_conn_id)
            self._extra = extra
        return self._extra

    @property
    def catalog_name(self) -> str:
        """Returns the catalog's name (extra `catalog_name`, else the connection id)."""
        return str(self._settings()["catalog_name"])

    @property
    def lineage_namespace(self) -> str:
        """Returns the OpenLineage dataset namespace of the catalog's tables."""
        return str(self._settings().get("lineage_namespace") or f"iceberg://{self.catalog_name}")

    def get_conn(self) -> Catalog:
        """Returns the pyiceberg catalog (opened once per hook)."""
        if self._catalog is None:
            settings = self._settings()
            from airflow_lineage_governance.iceberg.catalog import open_catalog

            properties = {k: str(v) for k, v in settings.items() if k not in OUR_KEYS}
            self._catalog = open_catalog(self.catalog_name, properties)
        return self._catalog

    def get_lineage_schema(self, tables: Iterable[TableRef | str] | None = None) -> dict[TableRef, dict[str, str]]:
        """Returns `{table: {column: type}}` of the named tables (all when None), for the lineage engine."""
        from airflow_lineage_governance.iceberg.catalog import lineage_schema

        return lineage_schema(self.get_conn(), tables)

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Returns how the connection form shows the fields: only the extra JSON and a password matter."""
        return {"hidden_fields": ["schema", "port", "host", "login"],
                "relabeling": {"password": "Catalog credential or token"},
                "placeholders": {"extra": '{"type": "sql", "uri": "sqlite:///…/catalog.db", '
                                          '"warehouse": "file:///…/warehouse", "catalog_name": "platform"}'}}
