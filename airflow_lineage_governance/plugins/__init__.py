"""The provider's Airflow UI plugin: Governance and Impact pages and a Lineage tab on task instances."""
