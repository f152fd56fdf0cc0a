"""The provider's registration with Airflow's providers manager (entry point `apache_airflow_provider`)."""

from __future__ import annotations

from typing import Any

from airflow_lineage_governance import __version__
from airflow_lineage_governance.connection_form import connection_type
from airflow_lineage_governance.settings import provider_config


def get_provider_info() -> dict[str, Any]:
    """Return the provider's metadata.

    Package, connection type, hooks, operators, sensors, the UI plugin and the `[lineage_governance]` config section (so
    `airflow config list` shows its options).
    """
    return {
        "package-name": "airflow-lineage-governance",
        "name": "Lineage Governance",
        "description": "Exact column-level OpenLineage lineage for SQL over Apache Iceberg, and governance "
        "checks on the lineage a scheduler's runs sent.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Apache Iceberg (lineage governance)",
                "external-doc-url": "https://iceberg.apache.org/",
                "tags": ["software"],
            },
        ],
        "hooks": [
            {
                "integration-name": "Apache Iceberg (lineage governance)",
                "python-modules": ["airflow_lineage_governance.hooks.iceberg"],
            },
        ],
        "operators": [
            {
                "integration-name": "Apache Iceberg (lineage governance)",
                "python-modules": ["airflow_lineage_governance.operators.iceberg_sql"],
            },
        ],
        "sensors": [
            {
                "integration-name": "Apache Iceberg (lineage governance)",
                "python-modules": ["airflow_lineage_governance.sensors.lineage_complete"],
            },
        ],
        "connection-types": [connection_type()],
        "plugins": [
            {
                "name": "lineage_governance",
                "plugin-class": "airflow_lineage_governance.plugins.governance_ui.LineageGovernancePlugin",
            }
        ],
        "config": provider_config(),
    }
