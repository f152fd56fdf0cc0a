"""docker-compose.yaml stays valid: the stack it promises, and `docker compose config` where a client exists."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yaml"


def test_compose_declares_the_production_stack():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name in (
        "airflow-apiserver",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-worker-1",
        "airflow-worker-2",
        "airflow-triggerer",
        "postgres",
        "redis",
        "marquez-api",
        "marquez-web",
        "iceberg-rest",
        "minio",
    ):
        assert name in services, name
    env = services["airflow-worker-1"]["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert (
        '"type": "http"' in env["AIRFLOW__OPENLINEAGE__TRANSPORT"]
        and "marquez-api" in env["AIRFLOW__OPENLINEAGE__TRANSPORT"]
    )
    assert "iceberg_catalog" in env["AIRFLOW_CONN_ICEBERG_DEFAULT"]


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_compose_config_parses():
    command = _compose_command()
    if command is None:
        pytest.skip("no docker compose client on this machine")
    done = subprocess.run([*command, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
