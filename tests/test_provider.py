"""Airflow's providers manager finds the provider through its entry point, with its connection type."""

from __future__ import annotations

import subprocess

from airflow_lineage_governance.get_provider_info import get_provider_info
from tests.integration.sandbox import VENV_BIN, base_env


def test_provider_info_names_its_parts():
    info = get_provider_info()
    assert info["package-name"] == "airflow-lineage-governance"
    assert info["connection-types"] == [{"hook-class-name": "airflow_lineage_governance.hooks.iceberg.IcebergHook",
                                         "connection-type": "iceberg_catalog"}]
    modules = {m for group in ("hooks", "operators", "sensors") for entry in info[group]
               for m in entry["python-modules"]}
    for module in modules:
        __import__(module)


def test_airflow_discovers_the_provider(tmp_path):
    env = base_env(tmp_path / "airflow")
    done = subprocess.run([str(VENV_BIN / "airflow"), "providers", "get", "airflow-lineage-governance", "-o", "json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "airflow-lineage-governance" in done.stdout
    hooks = subprocess.run([str(VENV_BIN / "airflow"), "providers", "hooks", "-o", "json"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert "iceberg_catalog" in hooks.stdout
