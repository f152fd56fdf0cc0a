"""No literal of the SQL, no connection password or token, and no data value reaches an event, the task log or
the governance report: asserted on the real files of a real run."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from learning_platform.seed import seed_platform
from tests.integration.test_governance_dag import governance_env, run_report

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

PASSWORD = "pw-S3cr3t-91f2"
TOKEN = "tok-7d1e-NEVER-LOG"
EMAIL = "known.person@example.com"
NAME = "Ada Lovelace Secret"

DAG = f'''
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.dags.governance import governance_dag
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("secrets", schedule="0 2 * * *", start_date=datetime(2026, 9, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="vip", sql="""
        create or replace table marketing.vip as
        select l.learner_id, md5(l.email) as email_hash, l.country from crm.learners l
        where l.email <> '{EMAIL}' and l.full_name <> '{NAME}' and l.country in ('DE', 'FR')""")
    IcebergSqlOperator(task_id="typo", sql="create table marketing.typo as select l.emial from crm.learners l "
                                           "where l.email = '{EMAIL}'")

governance = governance_dag("secrets_governance", "secrets", schedule="0 2 * * *", start_date=datetime(2026, 9, 1))
'''


def test_no_secret_literal_or_value_anywhere(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    seed_platform(catalog)
    learners = catalog.load_table("crm.learners").scan().to_arrow().to_pylist()
    data_values = [learners[0]["email"], learners[0]["full_name"], learners[1]["email"]]
    sandbox.write_dag("secrets", DAG)
    extra = {**sandbox.catalog_extra(), "token": TOKEN}
    connection = json.dumps({"conn_type": "iceberg_catalog", "password": PASSWORD, "extra": extra})

    run = sandbox.dags_test("secrets", AIRFLOW_CONN_ICEBERG_DEFAULT=connection)
    assert "vip" in run.log and catalog.load_table("marketing.vip").scan().to_arrow().num_rows > 0
    governance = sandbox.dags_test(
        "secrets_governance", AIRFLOW_CONN_ICEBERG_DEFAULT=connection, **governance_env(sandbox)
    )
    report = run_report(sandbox.root / "report", "secrets_governance", governance.log).parent
    files = {
        "events": run.events_path.read_text(),
        "task log": run.log + governance.log,
        "report json": (report / "governance-report.json").read_text(),
        "report md": (report / "governance-report.md").read_text(),
    }
    for where, text in files.items():
        for secret in (PASSWORD, TOKEN, EMAIL, NAME, "'DE'", *data_values):
            assert secret not in text, f"{secret!r} reached the {where}"
    assert "l.email <> ?" in files["events"]  # the statement is there, its literals masked
