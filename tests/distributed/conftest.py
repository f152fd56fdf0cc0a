from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.distributed.cluster import Cluster, running_cluster


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Airflow on CeleryExecutor with two workers, PostgreSQL, Redis, the REST catalog and Marquez, natively on
    loopback for this package of tests, over a catalog seeded with `dist.numbers`; stopped by pid after the
    package's last test, which then fails when a process the cluster started is still running."""
    with running_cluster(tmp_path_factory.mktemp("distributed")) as running:
        yield running
