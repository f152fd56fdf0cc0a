from __future__ import annotations

import json
import shutil

import pytest

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from learning_platform.seed import seed_platform
from tests.scheduler.stack import REPO, Api, start_stack, stop_stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    """The repo's DAGs under a real api-server, scheduler, dag-processor and triggerer (LocalExecutor) on
    loopback, over a seeded catalog, with the OpenLineage file transport; stopped by pid at the end."""
    root = tmp_path_factory.mktemp("scheduler")
    dags = root / "dags"
    shutil.copytree(REPO / "dags", dags, ignore=shutil.ignore_patterns("__pycache__"))
    seed_platform(open_local_catalog(root / "catalog"))
    catalog = {**local_catalog_properties(root / "catalog"), "catalog_name": "platform",
               "lineage_namespace": "iceberg://platform"}
    events = root / "events.jsonl"
    env = {
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "platform",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(events),
                                                       "append": True}),
        "AIRFLOW_CONN_ICEBERG_DEFAULT": json.dumps({"conn_type": "iceberg_catalog", "extra": catalog}),
        "LINEAGE_GOVERNANCE_EVENTS": str(events),
        "LINEAGE_GOVERNANCE_DIR": str(REPO / "governance"),
        "LINEAGE_GOVERNANCE_REPORT_DIR": str(root / "reports"),
        "LINEAGE_GOVERNANCE_WAIT_SECONDS": "300",
        "LINEAGE_GOVERNANCE_POKE_SECONDS": "5",
    }
    home = root / "airflow"
    url = start_stack(home, dags, env)
    try:
        yield Api(url), root
    finally:
        stop_stack(home)
