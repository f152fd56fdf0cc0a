"""Values never reach a message: statements that fail on personal data (a cast, an overflow, a type the target
cannot take, a required column, DuckDB's error(), malformed JSON) fail with a sentence naming the table, and no
value appears in the task log or in any OpenLineage event; a hostile SELECT and a plain CTAS over a table the task
did not write fail the same way. Real Airflow (`airflow dags test`), DuckDB and a pyiceberg catalog."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DateType, NestedField, StringType

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

EMAILS = ["ada.lovelace@example.org", "grace.hopper@example.net"]
NAMES = ["Ada Lovelace", "Grace Hopper"]
BALANCE = 987654321
PEOPLE = pa.table(
    {
        "person_id": [1, 2],
        "email": EMAILS,
        "full_name": NAMES,
        "balance": [BALANCE, 123456789],
        "maybe": pa.array([None, None], pa.string()),
    }
)
FAILING = {
    "cast_to_date": "create or replace table out.a as select cast(p.email as date) as d from crm.people p",
    "cast_to_int": "create or replace table out.b as select cast(p.full_name as integer) as n from crm.people p",
    "overflow": "create or replace table out.c as select cast(p.balance as tinyint) as b from crm.people p",
    "overflow_mul": "create or replace table out.d as select p.balance * 9223372036854775 as b from crm.people p",
    "error_function": "create or replace table out.e as select error(p.email) as e from crm.people p",
    "malformed_json": "create or replace table out.f as select json_extract(p.full_name, '$.a') as j from crm.people p",
    "type_at_insert": "insert into out.ledger (d) select p.email from crm.people p",
    "required_column": "insert into out.ledger (d, note) select null, p.maybe from crm.people p",
    "plain_ctas": "create table out.existing as select p.person_id from crm.people p",
}
DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("hostile_values", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
{tasks}
"""


def test_no_value_reaches_the_log_or_an_event(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    create_or_replace(catalog, "crm.people", PEOPLE, {})
    create_or_replace(catalog, "out.existing", pa.table({"person_id": [7]}), {})
    catalog.create_table(
        "out.ledger",
        schema=Schema(
            NestedField(1, "d", DateType(), required=True), NestedField(2, "note", StringType(), required=False)
        ),
    )
    tasks = "\n".join(f"    IcebergSqlOperator(task_id={task!r}, sql={sql!r})" for task, sql in FAILING.items())
    sandbox.write_dag("hostile_values", DAG.format(tasks=tasks))

    run = sandbox.dags_test("hostile_values")

    assert run.returncode != 0
    events = json.dumps(run.events)
    for value in [*EMAILS, *NAMES, str(BALANCE), "ada.lovelace", "Lovelace", "Hopper"]:
        assert value not in run.log, value
        assert value not in events, value
    for task in FAILING:
        failed = run.task_events(task, "FAIL")
        assert len(failed) == 1, task
        message = failed[0]["run"]["facets"]["errorMessage"]["message"]
        assert message.startswith("out."), message
    assert "out.existing: the table already exists, and a plain CREATE TABLE ... AS does not replace" in run.log
    assert catalog.load_table("out.existing").scan().to_arrow().column("person_id").to_pylist() == [7]
    assert not catalog.table_exists("out.a")


RETRY_DAG = """
from datetime import datetime, timedelta
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator


class FailsAfterCommit(IcebergSqlOperator):
    def execute(self, context):
        result = super().execute(context)
        if context["ti"].try_number == 1:
            raise RuntimeError("the worker lost its connection after the commit")
        return result


with DAG("plain_ctas_retry", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    FailsAfterCommit(task_id="copy", sql="create table out.copy as select p.person_id from crm.people p",
                     retries=1, retry_delay=timedelta(0))
"""


def test_a_retried_plain_ctas_replaces_its_own_write(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    create_or_replace(catalog, "crm.people", PEOPLE, {})
    sandbox.write_dag("plain_ctas_retry", RETRY_DAG)

    run = sandbox.dags_test("plain_ctas_retry")

    assert run.returncode == 0, run.log[-3000:]
    table = catalog.load_table("out.copy")
    assert sorted(table.scan().to_arrow().column("person_id").to_pylist()) == [1, 2]
    assert table.current_snapshot().summary["airflow.try_number"] == "2"  # try 2 replaced what try 1 wrote
    assert len({s.summary["airflow.try_number"] for s in table.snapshots() if s.summary}) == 2
