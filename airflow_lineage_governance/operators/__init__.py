"""Airflow operators of the provider."""
