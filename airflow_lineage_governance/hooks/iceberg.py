"""IcebergHook: a pyiceberg catalog from an Airflow connection of type `iceberg_catalog`.

The connection's extra JSON holds the pyiceberg catalog properties (`type`, `uri`, `warehouse`, …) plus two
keys of ours: `catalog_name` (default: the connection id) and `lineage_namespace` (default
`iceberg://<catalog_name>`). The connection's password, if set, is passed as the property named by
`password_property` (default `credential`); no property value is ever logged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from airflow_lineage_governance.connection_form import HOOK_NAME

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

    from airflow_lineage_governance.refs import TableRef

OUR_KEYS = ("catalog_name", "lineage_namespace", "password_property")
FORM_PREFIX = "extra__iceberg_catalog__"
"""How older connection forms prefix an extra field's key; such keys are read without it."""


def connection_extra(raw: str | None) -> dict[str, Any]:
    """Return the connection's extra JSON as a dict, after masking in logs the values Airflow counts as sensitive.

    Form-prefixed keys are unprefixed, empty form fields dropped; the masked values are those of every key Airflow
    counts as sensitive (`credential`, `token`, `secret`, …). Parsed here rather than through `extra_dejson`, which
    registers every value as a secret: a short one such as `"type": "sql"` makes each task log warn that it is too short
    to mask. Raises ValueError when the extra is not a JSON object.
    """
    extra = json.loads(raw) if raw else {}
    if not isinstance(extra, dict):
        raise ValueError(
            "the iceberg_catalog connection's extra is not a JSON object: give one, such as "
            '{"type": "sql", "uri": "…", "warehouse": "…"}'
        )
    found = {key.removeprefix(FORM_PREFIX): value for key, value in extra.items() if value not in (None, "")}
    mask_sensitive(found)
    return found


def mask_sensitive(extra: Mapping[str, Any]) -> None:
    """Register with Airflow's secrets masker the value of each key it counts as sensitive.

    And the value of the key `password_property` names.
    """
    from airflow.sdk._shared.secrets_masker import should_hide_value_for_key
    from airflow.sdk.log import mask_secret

    password_key = extra.get("password_property", "credential")
    for key, value in extra.items():
        # Airflow's should_hide_value_for_key() carries no annotations.
        if key == password_key or should_hide_value_for_key(key):  # type: ignore[no-untyped-call]
            mask_secret(value if isinstance(value, str) else json.dumps(value), key)


class IcebergHook(BaseHook):
    """Opens the pyiceberg catalog an `iceberg_catalog` connection describes."""

    conn_name_attr = "iceberg_conn_id"
    default_conn_name = "iceberg_default"
    conn_type = "iceberg_catalog"
    hook_name = HOOK_NAME

    def __init__(self, iceberg_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.iceberg_conn_id = iceberg_conn_id
        self._catalog: Catalog | None = None
        self._extra: dict[str, Any] | None = None

    def _settings(self) -> dict[str, Any]:
        if self._extra is None:
            connection = self.get_connection(self.iceberg_conn_id)
            extra = connection_extra(connection.extra)
            if connection.password:
                extra.setdefault(extra.get("password_property", "credential"), connection.password)
            extra.setdefault("catalog_name", self.iceberg_conn_id)
            self._extra = extra
        return self._extra

    @property
    def catalog_name(self) -> str:
        """Return the catalog's name (extra `catalog_name`, else the connection id)."""
        return str(self._settings()["catalog_name"])

    @property
    def lineage_namespace(self) -> str:
        """Return the OpenLineage dataset namespace of the catalog's tables."""
        return str(self._settings().get("lineage_namespace") or f"iceberg://{self.catalog_name}")

    def get_conn(self) -> Catalog:
        """Return the pyiceberg catalog (opened once per hook)."""
        if self._catalog is None:
            settings = self._settings()
            from airflow_lineage_governance.iceberg.catalog import open_catalog

            properties = {k: str(v) for k, v in settings.items() if k not in OUR_KEYS}
            self._catalog = open_catalog(self.catalog_name, properties)
        return self._catalog

    def get_lineage_schema(self, tables: Iterable[TableRef | str] | None = None) -> dict[TableRef, dict[str, str]]:
        """Return `{table: {column: type}}` of the named tables (all when None), for the lineage engine."""
        from airflow_lineage_governance.iceberg.catalog import lineage_schema

        return lineage_schema(self.get_conn(), tables)

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Return how the connection form shows the fields: only the extra JSON, the typed extra fields and a password.

        The provider info declares the same, which is what Airflow 3.3 reads.
        """
        from airflow_lineage_governance.connection_form import UI_FIELD_BEHAVIOUR

        return {key.replace("-", "_"): value for key, value in UI_FIELD_BEHAVIOUR.items()}
