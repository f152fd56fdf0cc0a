"""Airflow's providers manager finds the provider through its entry point, with its connection type."""

from __future__ import annotations

import subprocess

from airflow_lineage_governance.get_provider_info import get_provider_info
from tests.support.sandbox import VENV_BIN, base_env


def test_provider_info_names_its_parts():
    info = get_provider_info()
    assert info["package-name"] == "airflow-lineage-governance"
    [connection] = info["connection-types"]
    assert connection["hook-class-name"] == "airflow_lineage_governance.hooks.iceberg.IcebergHook"
    assert connection["connection-type"] == "iceberg_catalog"
    assert connection["hook-name"] == "Apache Iceberg catalog"
    behaviour = connection["ui-field-behaviour"]
    assert set(behaviour["hidden-fields"]) == {"host", "schema", "login", "port"}
    assert behaviour["relabeling"]["password"] and '"warehouse"' in behaviour["placeholders"]["extra"]
    assert set(connection["conn-fields"]) == {"type", "uri", "warehouse", "catalog_name"}
    for field in connection["conn-fields"].values():
        assert field["label"] and field["schema"]["type"] == ["string", "null"]
    modules = {
        m for group in ("hooks", "operators", "sensors") for entry in info[group] for m in entry["python-modules"]
    }
    for module in modules:
        __import__(module)


def test_airflow_discovers_the_provider(tmp_path):
    env = base_env(tmp_path / "airflow")
    done = subprocess.run(
        [str(VENV_BIN / "airflow"), "providers", "get", "airflow-lineage-governance", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "airflow-lineage-governance" in done.stdout
    hooks = subprocess.run(
        [str(VENV_BIN / "airflow"), "providers", "hooks", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "iceberg_catalog" in hooks.stdout


def test_the_config_section_is_declared_with_descriptions_and_defaults():
    section = get_provider_info()["config"]["lineage_governance"]
    assert section["description"]
    options = section["options"]
    assert {"events", "governance_dir", "report_folder", "catalog_folder"} <= set(options)
    for option in options.values():
        assert set(option) == {"description", "version_added", "type", "example", "default"}
        assert option["description"].endswith(".")
    assert options["wait_seconds"]["default"] == "600"


def test_airflow_config_shows_the_section_and_reads_its_environment_variable(tmp_path):
    env = base_env(tmp_path / "airflow")
    listed = subprocess.run(
        [
            str(VENV_BIN / "airflow"),
            "config",
            "list",
            "--section",
            "lineage_governance",
            "--include-descriptions",
            "--include-examples",
            "--include-env-vars",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "[lineage_governance]" in listed.stdout
    assert "# The folder of metadata.toml" in listed.stdout
    assert "Variable: AIRFLOW__LINEAGE_GOVERNANCE__EVENTS" in listed.stdout

    def value(key: str) -> str:
        done = subprocess.run(
            [str(VENV_BIN / "airflow"), "config", "get-value", "lineage_governance", key],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.stdout.strip()

    env["AIRFLOW__LINEAGE_GOVERNANCE__EVENTS"] = "http://marquez:5000"
    assert value("events") == "http://marquez:5000"
    assert value("wait_seconds") == "600"  # the declared default
