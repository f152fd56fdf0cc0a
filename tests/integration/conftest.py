from __future__ import annotations

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from learning_platform.seed import seed_platform
from tests.integration.sandbox import Sandbox, migrate


@pytest.fixture(scope="session")
def airflow_template(tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow-template") / "airflow"
    migrate(home)
    return home


@pytest.fixture
def sandbox(tmp_path, airflow_template) -> Sandbox:
    return Sandbox(tmp_path, airflow_template)


@pytest.fixture
def seeded(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    seed_platform(catalog)
    return catalog


@pytest.fixture(scope="session")
def platform_run(tmp_path_factory, airflow_template):
    """The platform's nightly DAG (dags/platform_nightly.py), run once through real Airflow for the session."""
    sandbox = Sandbox(tmp_path_factory.mktemp("platform-run"), airflow_template)
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.copy_repo_dags()
    run = sandbox.dags_test("platform_nightly")
    assert run.returncode == 0, run.log[-3000:]
    return sandbox, run
