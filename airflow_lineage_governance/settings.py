"""The provider's settings: Airflow's `[lineage_governance]` config section, read lazily.

Each setting is found, first to last, in
1. the environment form Airflow reads, `AIRFLOW__LINEAGE_GOVERNANCE__<KEY>`;
2. the older variable of this project, `LINEAGE_GOVERNANCE_<NAME>` (kept so existing deployments still work);
3. Airflow's configuration file (`$AIRFLOW_CONFIG`, else `$AIRFLOW_HOME/airflow.cfg`), read through Airflow's
   own `conf`;
4. the default declared here, which the provider info declares to Airflow too (None: no default).
Steps 1 and 2 cost nothing; Airflow's configuration (seconds to import) is imported only when they find nothing
and the configuration file exists, so a CLI call that names every path on its command line, or runs where no
airflow.cfg is, never imports Airflow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_lineage_governance import __version__
from airflow_lineage_governance.errors import LineageGovernanceError

SECTION = "lineage_governance"


@dataclass(frozen=True)
class Setting:
    """One option of the `[lineage_governance]` section."""

    key: str
    description: str
    example: str | None = None
    default: str | None = None
    legacy_variable: str | None = None
    type: str = "string"

    @property
    def variable(self) -> str:
        """Return the environment variable Airflow reads for this option."""
        return f"AIRFLOW__{SECTION.upper()}__{self.key.upper()}"

    @property
    def flag_or_setting(self) -> str:
        """Return how a person sets this option, for error sentences."""
        return f"[{SECTION}] {self.key} in airflow.cfg or {self.variable}"


SETTINGS: dict[str, Setting] = {
    setting.key: setting
    for setting in (
        Setting(
            "events",
            "Where the governance checks read OpenLineage events: a JSONL file (the file transport's "
            "log_file_path) or a Marquez URL. Unset: the sensor reads the OpenLineage provider's file transport; "
            "the CLI needs --events.",
            example="http://marquez:5000",
            legacy_variable="LINEAGE_GOVERNANCE_EVENTS",
        ),
        Setting(
            "governance_dir",
            "The folder of metadata.toml (owners, tiers, classes) and lineage.toml (namespace, "
            "class order, weights, the gate's threshold). Unset: ./governance of the working directory.",
            example="/opt/airflow/governance",
            legacy_variable="LINEAGE_GOVERNANCE_DIR",
        ),
        Setting(
            "catalog_folder",
            "A local Iceberg catalog folder (catalog.db + warehouse/) that the CLI's check, "
            "lineage and gate commands read when --catalog is not given.",
            example="/data/catalog",
        ),
        Setting(
            "catalog_name",
            "The name of a local Iceberg catalog (catalog_folder, the CLI's --catalog): pyiceberg's SQL catalog "
            "keeps each table under the name of the catalog that created it.",
            example="lake",
            default="default",
        ),
        Setting(
            "report_folder",
            "Where the governance DAG writes its reports. Unset: $AIRFLOW_HOME/governance-reports.",
            example="/opt/airflow/governance-reports",
            legacy_variable="LINEAGE_GOVERNANCE_REPORT_DIR",
        ),
        Setting(
            "wait_seconds",
            "How long the governance DAG's sensor waits for the target run and its lineage.",
            example="600",
            default="600",
            legacy_variable="LINEAGE_GOVERNANCE_WAIT_SECONDS",
            type="float",
        ),
        Setting(
            "poke_seconds",
            "How often the governance DAG's sensor looks again.",
            example="30",
            default="30",
            legacy_variable="LINEAGE_GOVERNANCE_POKE_SECONDS",
            type="float",
        ),
        Setting(
            "design_dags_folder",
            "The DAGs folder whose IcebergSqlOperator SQL the governance DAG reads as design "
            "lineage (rendered for the run's logical date, read against the catalog) and compares with the lineage "
            "events of the target DAG: designed-not-observed and observed-not-designed edges and tables, and SQL hash "
            "mismatches, as warning findings. Unset: the governance DAG compares no design.",
            example="/opt/airflow/dags",
        ),
        Setting(
            "freshness_days",
            "A catalog table that no COMPLETE run has read or written in this many days is listed "
            "in the governance report's coverage (tables without recent edges).",
            example="7",
            default="7",
            type="integer",
        ),
        Setting(
            "returning_max_rows",
            "The most rows a MERGE, UPDATE or DELETE ... RETURNING of IcebergSqlOperator "
            "hands to XCom (its `returning` value); a statement returning more fails before anything is written.",
            example="1000",
            default="1000",
            type="integer",
        ),
        Setting(
            "duckdb_time_zone",
            "The DuckDB TimeZone every statement of IcebergSqlOperator runs under (casts of "
            "timestamptz to dates, times shown in strings); never the worker's TZ.",
            example="Europe/Berlin",
            default="UTC",
        ),
        Setting(
            "duckdb_calendar",
            "The DuckDB Calendar every statement runs under.",
            example="gregorian",
            default="gregorian",
        ),
        Setting(
            "duckdb_default_collation",
            "The DuckDB default_collation every statement runs under (empty: DuckDB's binary comparison).",
            example="nocase",
            default="",
        ),
        Setting(
            "duckdb_default_order",
            "The DuckDB default_order (ASC or DESC) of an ORDER BY that names none.",
            example="ASC",
            default="ASC",
        ),
        Setting(
            "store",
            "Where the lineage store lives when store_conn_id is not set: the path of its DuckDB file "
            "(created by `lineage-governance store init`) or a postgresql:// URL. The governance DAG takes a "
            "relative path inside the report folder.",
            example="/data/lineage-store.duckdb",
            default="lineage-store.duckdb",
        ),
        Setting(
            "store_conn_id",
            "An Airflow connection of type postgres whose database holds the lineage store (its "
            "extra's string values, such as sslmode or options, are passed to libpq). Unset: the store setting.",
            example="lineage_store",
        ),
        Setting(
            "store_memory_limit",
            "The most memory DuckDB may take in a process that reads a lineage store's DuckDB file (the UI, the CLI's "
            "questions, the governance DAG's checks): DuckDB's memory_limit, as '256MB'; past it DuckDB spills to the "
            "system's temporary folder. A writer keeps to store_writer_memory_limit.",
            example="512MB",
            default="256MB",
        ),
        Setting(
            "store_writer_memory_limit",
            "The most memory DuckDB may take in a process that writes a lineage store's DuckDB file (import, sync, "
            "vacuum): DuckDB's memory_limit, as '2GB'; past it DuckDB spills what it can to the system's temporary "
            "folder. Unset: DuckDB's default, 80% of the machine's memory.",
            example="2GB",
        ),
        Setting(
            "duckdb_default_null_order",
            "The DuckDB default_null_order (NULLS_LAST or NULLS_FIRST) of an ORDER BY that names none.",
            example="NULLS_LAST",
            default="NULLS_LAST",
        ),
        Setting(
            "duckdb_memory_limit",
            "The most memory DuckDB may take for one statement of IcebergSqlOperator "
            "(DuckDB's memory_limit, as '2GB'); past it DuckDB spills to the task's spill folder. Unset: a quarter "
            "of the machine's memory.",
            example="2GB",
        ),
        Setting(
            "duckdb_threads",
            "The threads DuckDB runs one statement of IcebergSqlOperator on. Unset: the "
            "machine's cores, as DuckDB's own default.",
            example="2",
            type="integer",
        ),
        Setting(
            "duckdb_spill_folder",
            "The folder under which each statement of IcebergSqlOperator gets a spill folder "
            "of its own (DuckDB's temp_directory), removed when the statement ends. Unset: the system's temporary "
            "folder.",
            example="/var/tmp/airflow-spill",
        ),
    )
}


class MissingSettingError(LineageGovernanceError):
    """Raised when a value is needed and neither its flag nor its setting gives one; the message says which."""


def airflow_config_file() -> Path:
    """Return the file Airflow reads its configuration from.

    $AIRFLOW_CONFIG, else $AIRFLOW_HOME/airflow.cfg (AIRFLOW_HOME defaults to ~/airflow).
    """
    explicit = os.environ.get("AIRFLOW_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return Path(os.environ.get("AIRFLOW_HOME", "~/airflow")).expanduser() / "airflow.cfg"


def _from_airflow(key: str) -> str | None:
    if not airflow_config_file().is_file():
        return None  # no file, and the environment was read already: Airflow would answer the default
    from airflow.configuration import conf

    value = conf.get(SECTION, key, fallback=None)
    return str(value) if value not in (None, "") else None


def setting(key: str) -> str | None:
    """Return the value of `[lineage_governance] <key>` found in the order the module describes.

    None when nothing sets it and it has no default. Raises KeyError for a key that is not declared.
    """
    declared = SETTINGS[key]
    for variable in (declared.variable, declared.legacy_variable):
        value = os.environ.get(variable) if variable else None
        if value:
            return value
    return _from_airflow(key) or declared.default


def required(key: str, flag: str | None) -> str:
    """Return the value of `[lineage_governance] <key>`.

    Raises MissingSettingError naming `flag` (the command-line flag that also gives it) and the setting when nothing
    sets it.
    """
    value = setting(key)
    if value is None:
        give = f"give {flag} or set " if flag else "set "
        raise MissingSettingError(f"the {key} setting is not set: {give}{SETTINGS[key].flag_or_setting}.")
    return value


def provider_config() -> dict[str, Any]:
    """Return the `config` entry of the provider info.

    The section with each option's description, type, example and default, as `airflow config list` shows them.
    """
    return {
        SECTION: {
            "description": "Settings of the lineage governance checks, the governance DAG and the "
            "`lineage-governance` CLI.",
            "options": {
                s.key: {
                    "description": s.description,
                    "version_added": __version__,
                    "type": s.type,
                    "example": s.example,
                    "default": s.default,
                }
                for s in SETTINGS.values()
            },
        }
    }


def store_location(given: str | None = None) -> str:
    """Return where the lineage store lives.

    `given` (a command-line flag), else the PostgreSQL URL of the `[lineage_governance] store_conn_id` connection (read
    through Airflow), else `[lineage_governance] store`.

    Raises:
        MissingSettingError: The connection is not defined, or is not of type postgres.
    """
    if given:
        return given
    conn_id = setting("store_conn_id")
    if conn_id:
        return postgres_url(conn_id)
    return required("store", "--store")


def governance_store() -> str:
    """Return the store the governance DAG syncs its event source into and answers from.

    As `store_location` finds it, a relative DuckDB path (the default `lineage-store.duckdb` among them) taken inside
    the report folder: a worker's working directory is no place for it.

    Raises:
        MissingSettingError: The store_conn_id connection is not defined, or is not of type postgres.
    """
    location = store_location()
    if location.startswith(("postgresql://", "postgres://")):
        return location
    path = Path(location).expanduser()
    return str(path if path.is_absolute() else report_folder() / path)


def event_source() -> str | None:
    """Return `[lineage_governance] events`, else where the OpenLineage provider's transport sends events.

    A file transport's path or an HTTP transport's URL, read the way the provider reads its config; else None.
    """
    configured = setting("events")
    if configured:
        return configured
    transport = openlineage_transport()
    key = {"file": "log_file_path", "http": "url"}.get(str(transport.get("type")))
    found = transport.get(key) if key else None
    return found if isinstance(found, str) else None


def postgres_url(conn_id: str) -> str:
    """Return the `postgresql://` URL of an Airflow connection of type postgres.

    Its `schema` is the database, its extra's string values are libpq parameters. Raises MissingSettingError when there
    is no such connection.
    """
    from urllib.parse import quote, urlencode

    from airflow.models.connection import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        connection = Connection.get_connection_from_secrets(conn_id)
    except AirflowNotFoundException:
        raise MissingSettingError(
            f"the store_conn_id setting names the connection {conn_id!r}, which is not "
            "defined; define it (type postgres) or set [lineage_governance] store"
        ) from None
    if connection.conn_type not in ("postgres", "postgresql"):
        raise MissingSettingError(
            f"the connection {conn_id!r} is of type {connection.conn_type!r}; the lineage store "
            "needs one of type postgres"
        )
    login = quote(connection.login or "", safe="")
    password = f":{quote(connection.password, safe='')}" if connection.password else ""
    user = f"{login}{password}@" if login else ""
    port = f":{connection.port}" if connection.port else ""
    extra = {k: v for k, v in connection.extra_dejson.items() if isinstance(v, str)}
    query = f"?{urlencode(extra)}" if extra else ""
    return f"postgresql://{user}{connection.host or 'localhost'}{port}/{quote(connection.schema or '', safe='')}{query}"


def seconds(key: str) -> float:
    """Return a seconds option (`wait_seconds`, `poke_seconds`) as a float.

    Raises MissingSettingError naming the setting when its value is not a number.
    """
    value = required(key, None)
    try:
        return float(value)
    except ValueError:
        raise MissingSettingError(
            f"the {key} setting is not a number of seconds: set {SETTINGS[key].flag_or_setting} to one."
        ) from None


def whole_days(key: str) -> int:
    """Return a days option (`freshness_days`) as a positive integer.

    Raises MissingSettingError naming the setting when its value is not one.
    """
    return _positive_whole(key, "days")


def whole_number(key: str) -> int:
    """Return a count option (`returning_max_rows`) as a positive integer.

    Raises MissingSettingError naming the setting when its value is not one.
    """
    return _positive_whole(key, "rows")


def thread_count(key: str) -> int:
    """Return a threads option (`duckdb_threads`) as a positive integer.

    Raises MissingSettingError naming the setting when its value is not one.
    """
    return _positive_whole(key, "threads")


def _positive_whole(key: str, unit: str) -> int:
    value = required(key, None)
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise MissingSettingError(
            f"the {key} setting is not a whole number of {unit}: set {SETTINGS[key].flag_or_setting} to one."
        )
    return number


def report_folder() -> Path:
    """Return the folder the governance DAG writes its reports under.

    `[lineage_governance] report_folder`, else $AIRFLOW_HOME/governance-reports (AIRFLOW_HOME defaults to ~/airflow).
    """
    configured = setting("report_folder")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("AIRFLOW_HOME", "~/airflow")).expanduser() / "governance-reports"


def run_report_folder(dag_id: str, run_id: str) -> Path:
    """Return `<report folder>/<dag_id>/<run_id>`.

    One run's own folder, which no other run writes into (a `/` in either id becomes `_`).
    """
    return report_folder() / dag_id.replace("/", "_") / run_id.replace("/", "_")


def openlineage_transport() -> dict[str, Any]:
    """Return the OpenLineage provider's `[openlineage] transport`; {} when none is set or it is not a dict.

    It is read by the provider's own `conf` module (airflow.cfg, AIRFLOW__OPENLINEAGE__TRANSPORT, its precedence).
    """
    from airflow.providers.openlineage import conf as openlineage_conf

    try:
        transport = openlineage_conf.transport()
    except ValueError:
        return {}
    return transport if isinstance(transport, dict) else {}


def openlineage_namespace() -> str:
    """Return the OpenLineage job namespace as the provider reads it.

    `[openlineage] namespace`, else $OPENLINEAGE_NAMESPACE, else `default`.
    """
    from airflow.providers.openlineage import conf as openlineage_conf

    return str(openlineage_conf.namespace())


def configured_openlineage_namespace() -> str | None:
    """Return the job namespace the OpenLineage provider is configured with, or None when nothing sets one.

    `[openlineage] namespace`: its environment form, then OPENLINEAGE_NAMESPACE, then Airflow's configuration file. With
    none, the provider would use `default`.
    """
    for variable in ("AIRFLOW__OPENLINEAGE__NAMESPACE", "OPENLINEAGE_NAMESPACE"):
        value = os.environ.get(variable)
        if value:
            return value
    if not airflow_config_file().is_file():
        return None
    from airflow.configuration import conf

    value = conf.get("openlineage", "namespace", fallback=None)
    return str(value) if value not in (None, "") else None
