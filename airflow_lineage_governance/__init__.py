"""Airflow provider for exact column-level lineage over Iceberg, and governance checks on it."""

__version__ = "0.1.0"
