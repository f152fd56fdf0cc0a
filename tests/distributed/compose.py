"""docker-compose.yaml as the one configuration of the distributed suite: its Airflow environment, with the
compose services' host names replaced by the loopback addresses of the same services started natively, and its
Celery worker commands."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yaml"

NATIVE_COMPONENTS = {
    "airflow-apiserver": "api-server",
    "airflow-scheduler": "scheduler",
    "airflow-dag-processor": "dag-processor",
    "airflow-triggerer": "triggerer",
    "airflow-worker-1": "worker-1",
    "airflow-worker-2": "worker-2",
}
"""The compose services that scripts/airflow_stack.py starts, by the name of its component."""

NATIVE_SERVICES = ("postgres", "redis", "marquez-api", "iceberg-rest")
"""The compose services the suite starts natively beside Airflow (scripts/postgres, scripts/redis,
../shared/marquez, scripts/iceberg-rest)."""

NOT_NATIVE = {
    "airflow-init": "`airflow_stack.py start` runs `airflow db migrate` before the components",
    "marquez-web": "the Marquez UI: the suite reads Marquez's API",
    "minio": "the native REST catalog keeps its warehouse in a local folder",
    "minio-init": "creates MinIO's bucket",
}
"""The compose services the suite does not start, and why."""

TUNINGS = frozenset(
    {
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT",
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL",
        "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL",
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE",
        "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS",
        "AIRFLOW__LINEAGE_GOVERNANCE__POKE_SECONDS",
        "AIRFLOW__LINEAGE_GOVERNANCE__WAIT_SECONDS",
        "AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR",
    }
)
"""Settings the suite adds to the compose environment: shorter timeouts so that faults show within a test, runs
only when triggered, anonymous admin access, and the suite's governance metadata."""


def compose() -> dict[str, Any]:
    """Returns docker-compose.yaml, parsed."""
    return dict(yaml.safe_load(COMPOSE.read_text()))


def airflow_environment() -> dict[str, str]:
    """Returns the environment every Airflow service of the compose file shares."""
    return {key: str(value) for key, value in compose()["x-airflow-common"]["environment"].items()}


def worker_command(service: str) -> list[str]:
    """Returns the command of a compose worker service after `airflow`."""
    command = [str(part) for part in compose()["services"][service]["command"]]
    return command[1:] if command[:1] == ["airflow"] else command


def native_environment(addresses: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """Returns the compose file's Airflow environment for services running natively: each compose service host
    name in a value (`postgres`, `redis:6379`, `marquez-api:5000`, ...) is replaced by its loopback `host:port`
    from `addresses`, and the keys of `values` (folders, secrets, the catalog connection) take their value from
    there. Raises KeyError when a value names a service `addresses` lacks."""
    hosts = "|".join(re.escape(name) for name in sorted(compose()["services"], key=len, reverse=True))
    pattern = re.compile(rf"(?<=[/@])({hosts})(:\d+)?(?=[/\"]|$)")
    environment = {}
    for key, value in airflow_environment().items():
        environment[key] = values[key] if key in values else pattern.sub(lambda m: addresses[m.group(1)], value)
    return environment
