"""Events into the lineage store as they arrive: real Airflow (`airflow dags test`) with the real OpenLineage
listener, whose transport (a composite, as a user's AIRFLOW__OPENLINEAGE__TRANSPORT names it) writes each event to
the file and into the store; the CLI then answers from the store the same as from the file."""

from __future__ import annotations

import json
import subprocess

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.store.lineage_store import LineageStore
from learning_platform.seed import seed_platform
from tests.support.sandbox import REPO, VENV_BIN

pytestmark = pytest.mark.integration

DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("store_transport", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    hashed = IcebergSqlOperator(task_id="hashed", sql='''
        create or replace table marketing.hashed as
        select md5(l.email) as email_hash, l.country
        from crm.learners l
        where l.status = 'active' ''')
    IcebergSqlOperator(task_id="by_country", sql='''
        create or replace table marketing.by_country as
        select country, count(*) as learners from marketing.hashed group by country''') << hashed
"""


def test_each_event_of_a_dag_run_is_in_the_store_and_the_cli_answers_from_it(sandbox):
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.write_dag("store_transport", DAG)
    store = sandbox.root / "lineage-store.duckdb"
    transport = {
        "type": "composite",
        "continue_on_failure": False,
        "transports": {
            "file": {"type": "file", "log_file_path": str(sandbox.events_path), "append": True},
            "store": {"type": "airflow_lineage_governance.store.transport.StoreTransport", "store": str(store)},
        },
    }
    run = sandbox.dags_test("store_transport", AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(transport))
    assert run.returncode == 0, run.log[-3000:]
    assert len(run.task_events("hashed", "COMPLETE")) == 1 and len(run.task_events("by_country", "COMPLETE")) == 1

    with LineageStore.open(store, read_only=True) as stored:
        assert stored.stats()["rows"]["events"] == len(run.events)

    def cli(*args: str) -> str:
        done = subprocess.run(
            [str(VENV_BIN / "lineage-governance"), "impact", "crm.learners.email", "--json", *args],
            capture_output=True,
            text=True,
            env=sandbox.env(),
            cwd=REPO,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    from_store = cli("--store", str(store))
    from_file = cli("--events", str(sandbox.events_path))
    assert from_store == from_file
    assert json.loads(from_store)["columns_reached"] == ["marketing.hashed.email_hash"]
