from __future__ import annotations

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from learning_platform.seed import seed_platform
from tests.store.conftest import postgres_url  # noqa: F401 -- the session's PostgreSQL, for a store on it
from tests.support.iceberg_rest import CATALOG_KINDS, catalog_properties
from tests.support.sandbox import Sandbox, migrate


@pytest.fixture(scope="session")
def airflow_template(tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow-template") / "airflow"
    migrate(home)
    return home


@pytest.fixture
def sandbox(tmp_path, airflow_template) -> Sandbox:
    return Sandbox(tmp_path, airflow_template)


@pytest.fixture(params=CATALOG_KINDS)
def seeded(request, sandbox):
    """The seeded platform catalog of the sandbox's DAGs, once on each catalog kind: a local SQLite catalog, and
    the session's REST server (emptied before and after the test) through an `iceberg_catalog` connection of
    `{"type": "rest", "uri": …}`."""
    with catalog_properties(request.param, request, sandbox.catalog_folder) as properties:
        sandbox.catalog_properties = properties
        catalog = sandbox.open_catalog()
        seed_platform(catalog)
        yield catalog


@pytest.fixture(scope="session")
def platform_run(tmp_path_factory, airflow_template):
    """The platform's nightly DAG (dags/platform_nightly.py), run once through real Airflow for the session."""
    sandbox = Sandbox(tmp_path_factory.mktemp("platform-run"), airflow_template)
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.copy_repo_dags()
    run = sandbox.dags_test("platform_nightly")
    assert run.returncode == 0, run.log[-3000:]
    return sandbox, run
