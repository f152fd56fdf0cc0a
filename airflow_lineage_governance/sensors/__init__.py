"""Airflow sensors of the provider."""
