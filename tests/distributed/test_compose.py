"""The natively started stack is the compose file's: the same services, the same settings, the same workers."""

from __future__ import annotations

from tests.distributed.compose import (
    NATIVE_COMPONENTS,
    NATIVE_SERVICES,
    NOT_NATIVE,
    TUNINGS,
    airflow_environment,
    compose,
    worker_command,
)


def test_every_compose_service_is_started_natively_or_said_why_not():
    services = set(compose()["services"])
    assert services == set(NATIVE_COMPONENTS) | set(NATIVE_SERVICES) | set(NOT_NATIVE)


def test_the_stack_runs_the_compose_settings_and_only_declared_tunings(cluster):
    compose_keys = set(airflow_environment())
    native_keys = {key for key in cluster.environment}
    assert compose_keys <= native_keys
    assert native_keys - compose_keys <= TUNINGS | {"PYTHONPATH"}
    assert cluster.environment["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert cluster.environment["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql+psycopg2://airflow:")
    assert cluster.environment["AIRFLOW__CELERY__BROKER_URL"] == f"redis://:@127.0.0.1:{cluster.redis.port}/0"
    assert cluster.marquez.url.removeprefix("http://") in cluster.environment["AIRFLOW__OPENLINEAGE__TRANSPORT"]


def test_each_worker_runs_the_compose_command(cluster):
    for service, component in NATIVE_COMPONENTS.items():
        if component.startswith("worker-"):
            started = cluster.component_args(component)
            assert started[1:] == [*worker_command(service), "--skip-serve-logs"], component
