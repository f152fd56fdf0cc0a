"""The DuckDB session settings that change a statement's results.

The provider sets them on every connection it opens, so that no result depends on the worker's environment.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import duckdb

from airflow_lineage_governance.iceberg.errors import IcebergError


class SessionSettingError(IcebergError):
    """Raised when a DuckDB session setting of the provider's config is not one DuckDB accepts."""

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(
            f"[lineage_governance] {option}", problem, "set it to a value DuckDB accepts, or unset it for the default"
        )


@dataclass(frozen=True)
class SessionSettings:
    """The DuckDB settings a statement runs under: time zone, calendar, default collation and ordering.

    Defaults are DuckDB's own but for the time zone, which is UTC (Airflow's default time zone) instead of the
    worker's `TZ`.
    """

    time_zone: str = "UTC"
    calendar: str = "gregorian"
    default_collation: str = ""
    default_order: str = "ASC"
    default_null_order: str = "NULLS_LAST"

    def as_facet(self) -> dict[str, str]:
        """Return the settings under DuckDB's names, as the run's facet records them."""
        return {_DUCKDB_NAMES[key]: value for key, value in asdict(self).items()}


_DUCKDB_NAMES = {
    "time_zone": "TimeZone",
    "calendar": "Calendar",
    "default_collation": "default_collation",
    "default_order": "default_order",
    "default_null_order": "default_null_order",
}
"""Each setting's name in DuckDB."""
CONFIG_OPTIONS = {
    "time_zone": "duckdb_time_zone",
    "calendar": "duckdb_calendar",
    "default_collation": "duckdb_default_collation",
    "default_order": "duckdb_default_order",
    "default_null_order": "duckdb_default_null_order",
}
"""Each setting's option in the provider's config section."""


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def apply_session(connection: duckdb.DuckDBPyConnection, settings: SessionSettings) -> None:
    """Set `settings` on `connection`.

    Args:
        connection: a DuckDB connection the provider opened, before any statement runs on it.
        settings: the session settings to run under.

    Raises:
        SessionSettingError: naming the config option whose value DuckDB refuses.
    """
    for key, value in asdict(settings).items():
        try:
            connection.execute(f"SET {_DUCKDB_NAMES[key]} = {_literal(value)}")
        except duckdb.Error:
            raise SessionSettingError(
                CONFIG_OPTIONS[key], f"DuckDB does not accept {value!r} as its {_DUCKDB_NAMES[key]}"
            ) from None
