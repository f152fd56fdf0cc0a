from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.distributed.cluster import Cluster, running_cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Airflow on CeleryExecutor with two workers, PostgreSQL, Redis, the REST catalog and Marquez, natively on
    loopback for the session, over a catalog seeded with `dist.numbers`; stopped by pid at the end."""
    with running_cluster(tmp_path_factory.mktemp("distributed")) as running:
        yield running
