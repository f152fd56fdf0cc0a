"""IcebergSqlOperator through real Airflow (`airflow dags test`), the real OpenLineage provider listener with
the file transport, real DuckDB and a real pyiceberg catalog in a temp folder."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.refs import TableRef
from tests.support.delete_files import add_position_deletes

pytestmark = pytest.mark.integration

SECRET = "zz-secret-literal@example.org"
CROSS_NAMESPACE_SELECT = """select l.country, c.category, sum(p.amount) as spent, count(r.refund_id) as refunds,
    count(r.refund_reason) as reasons
    from billing.payments p
    join crm.learners l on l.learner_id = p.learner_id
    join learning.courses c on c.course_id = p.course_id
    left join billing.refunds r on r.payment_id = p.payment_id
    group by l.country, c.category"""

MAIN_DAG = f'''
from datetime import datetime
import json
from airflow.sdk import DAG, task
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("operator_main", schedule=None, start_date=datetime(2026, 1, 1), catchup=False,
         template_searchpath=["{{sql_dir}}"]) as dag:
    audience = IcebergSqlOperator(task_id="marketing_audience", sql="marketing_audience.sql")

    @task
    def show(result):
        print("XCOM " + json.dumps(result))

    show(audience.output)
    IcebergSqlOperator(task_id="hashed", sql="""
        create or replace table marketing.hashed as
        select md5(l.email) as email_hash, l.country
        from crm.learners l
        where l.email <> '{SECRET}' and l.status = 'active'""")
    IcebergSqlOperator(task_id="cross_namespace",
                       sql="""create or replace table analytics.spend as {CROSS_NAMESPACE_SELECT}""")
'''


def ground_truth(catalog, tables, select):
    """The SELECT's result over pyiceberg's own reads (deletes and schema evolution applied by pyiceberg)."""
    connection = duckdb.connect()
    for name in tables:
        table = TableRef.parse(name)
        connection.execute(f"create schema if not exists {table.namespace_name}")
        connection.register("incoming", catalog.load_table(name).scan().to_arrow())
        connection.execute(f"create table {table} as select * from incoming")
        connection.unregister("incoming")
    return connection.sql(select).to_arrow_table()


def dag_code(sandbox, template: str) -> str:
    from tests.support.sandbox import REPO

    return template.replace("{sql_dir}", str(REPO / "dags" / "sql"))


def by_field(entries: list[dict]) -> dict[tuple[str, str], list[tuple[str, str, bool]]]:
    return {
        (e["name"], e["field"]): [(t["type"], t["subtype"], t["masking"]) for t in e["transformations"]]
        for e in entries
    }


def test_dag_run_emits_exact_lineage_and_writes_tables(sandbox, seeded):
    # Reads must be right on every path: a real position delete file (pyiceberg's reader), a copy-on-write delete
    # and an evolved schema (the direct scan, columns by field id).
    payments = seeded.load_table("billing.payments")
    data_file = next(iter(payments.scan().plan_files())).file.file_path
    add_position_deletes(payments, data_file, list(range(0, 8000, 7)))
    seeded.load_table("learning.courses").delete(delete_filter="course_id = 1")
    refunds = seeded.load_table("billing.refunds")
    with refunds.update_schema() as update:
        update.rename_column("reason", "refund_reason")
    sandbox.write_dag("operator_main", dag_code(sandbox, MAIN_DAG))

    run = sandbox.dags_test("operator_main")
    assert run.returncode == 0, run.log[-3000:]

    for task in ("marketing_audience", "hashed", "cross_namespace"):
        assert len(run.task_events(task, "START")) == 1
        assert len(run.task_events(task, "COMPLETE")) == 1

    complete = run.task_events("marketing_audience", "COMPLETE")[0]
    output = complete["outputs"][0]
    assert (output["namespace"], output["name"]) == ("iceberg://platform", "marketing.audience")
    dataset = by_field(output["facets"]["columnLineage"]["dataset"])
    assert dataset[("crm.learners", "marketing_consent")] == [("INDIRECT", "FILTER", False)]
    assert dataset[("crm.learners", "status")] == [("INDIRECT", "FILTER", False)]
    email = output["facets"]["columnLineage"]["fields"]["email"]["inputFields"]
    assert [(f["namespace"], f["name"], f["field"]) for f in email] == [("iceberg://platform", "crm.learners", "email")]
    assert [f["name"] for f in output["facets"]["schema"]["fields"]] == [
        "learner_id",
        "full_name",
        "email",
        "country",
        "favourite_category",
    ]

    audience = seeded.load_table("marketing.audience")
    assert output["facets"]["version"]["datasetVersion"] == str(audience.current_snapshot().snapshot_id)
    rows = audience.scan().to_arrow().num_rows
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == rows > 0
    xcom = json.loads(run.log.split("XCOM ", 1)[1].splitlines()[0])
    assert xcom == {
        "table": "marketing.audience",
        "snapshot_id": audience.current_snapshot().snapshot_id,
        "rows": rows,
        "already_written": False,
        "written": True,
        "partitions": [],
    }
    versions = {i["name"]: i["facets"]["version"]["datasetVersion"] for i in complete["inputs"]}
    assert versions["crm.learners"] == str(seeded.load_table("crm.learners").current_snapshot().snapshot_id)
    start = run.task_events("marketing_audience", "START")[0]
    assert {i["name"] for i in start["inputs"]} == {"crm.learners", "learning.courses", "learning.enrollments"}
    assert all("schema" in i["facets"] for i in start["inputs"])

    hashed = run.task_events("hashed", "COMPLETE")[0]["outputs"][0]["facets"]["columnLineage"]
    assert hashed["fields"]["email_hash"]["inputFields"][0]["transformations"][0]["masking"] is True
    assert hashed["fields"]["email_hash"]["transformationType"] == "MASKED"

    events_text = run.events_path.read_text()
    assert SECRET not in events_text and "'active'" not in events_text
    sql_facet = run.task_events("hashed", "COMPLETE")[0]["job"]["facets"]["sql"]["query"]
    assert "l.email <> ?" in sql_facet and "l.status = ?" in sql_facet

    spend = (
        seeded.load_table("analytics.spend")
        .scan()
        .to_arrow()
        .sort_by([("country", "ascending"), ("category", "ascending")])
    )
    expected = ground_truth(
        seeded,
        ["billing.payments", "crm.learners", "learning.courses", "billing.refunds"],
        CROSS_NAMESPACE_SELECT + " order by l.country, c.category",
    )
    assert spend.to_pylist() == expected.to_pylist()
    assert 1 not in [row["course_id"] for row in seeded.load_table("learning.courses").scan().to_arrow().to_pylist()]
    refunds_read = [line for line in run.log.splitlines() if "read billing.refunds at snapshot" in line]
    assert refunds_read and all("via direct parquet scan" in line for line in refunds_read)
    assert "via pyiceberg arrow reader (the snapshot has delete files)" in run.log
    assert seeded.load_table("billing.payments").scan().to_arrow().num_rows == 8000 - len(range(0, 8000, 7))
    assert "every row shaped by:" in run.log
    assert "email_hash <- crm.learners.email (DIRECT TRANSFORMATION, masked)" in run.log

    # A second run replaces the CTAS tables rather than appending to them.
    again = sandbox.dags_test("operator_main", "2026-10-02T02:00:00+00:00")
    assert again.returncode == 0, again.log[-3000:]
    replaced = seeded.load_table("marketing.audience")
    assert replaced.scan().to_arrow().num_rows == rows
    assert replaced.current_snapshot().snapshot_id != audience.current_snapshot().snapshot_id


FAILING_DAG = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("operator_misspelt", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="misspelt_ctas", sql="create table marketing.typo as select l.emial from crm.learners l")
    IcebergSqlOperator(task_id="misspelt_insert", sql="""
        insert into analytics.daily_revenue select cast(p.paid_at as date), sum(p.amount)
        from billing.payments p where p.statuss = 'succeeded' group by 1""")  # codespell:ignore statuss
'''


def test_misspelt_column_fails_before_writing(sandbox, seeded):
    sandbox.write_dag("operator_misspelt", FAILING_DAG)
    before = seeded.load_table("analytics.daily_revenue").metadata.current_snapshot_id

    run = sandbox.dags_test("operator_misspelt")

    assert run.returncode != 0
    assert "marketing.typo: crm.learners has no column emial; check the spelling against the catalog." in run.log
    assert "analytics.daily_revenue: billing.payments has no column statuss" in run.log  # codespell:ignore statuss
    assert len(run.task_events("misspelt_ctas", "FAIL")) == 1
    failed = run.task_events("misspelt_ctas", "FAIL")[0]
    assert "has no column emial" in failed["run"]["facets"]["errorMessage"]["message"]
    extraction = failed["run"]["facets"]["extractionError"]
    assert (extraction["totalTasks"], extraction["failedTasks"]) == (1, 1)
    assert [(e["errorMessage"], e["task"]) for e in extraction["errors"]] == [
        ("marketing.typo: crm.learners has no column emial; check the spelling against the catalog.", "marketing.typo")
    ]
    insert_failed = run.task_events("misspelt_insert", "FAIL")[0]["run"]["facets"]["extractionError"]
    assert insert_failed["errors"][0]["task"] == "analytics.daily_revenue"
    insert_message = insert_failed["errors"][0]["errorMessage"]
    assert "billing.payments has no column statuss" in insert_message  # codespell:ignore statuss
    # No event names an output without its schema (Marquez stores one as a new, empty version): the extraction
    # error names the target instead.
    assert failed["outputs"] == []
    assert all(e["outputs"] == [] for e in run.task_events("misspelt_ctas"))
    assert not seeded.table_exists("marketing.typo")
    assert seeded.load_table("analytics.daily_revenue").metadata.current_snapshot_id == before


RETRY_DAG = '''
from datetime import datetime, timedelta
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator


class FailsAfterCommit(IcebergSqlOperator):
    def execute(self, context):
        result = super().execute(context)
        if context["ti"].try_number == 1:
            raise RuntimeError("the worker lost its connection after the commit")
        return result


with DAG("operator_retry", schedule=None, start_date=datetime(2026, 1, 1), catchup=False,
         template_searchpath=["{sql_dir}"]) as dag:
    FailsAfterCommit(task_id="daily_revenue", sql="daily_revenue.sql", retries=1, retry_delay=timedelta(0))
    IcebergSqlOperator(task_id="by_position", sql="""
        insert into analytics.daily_revenue (revenue_usd, day)
        select sum(p.amount) as total, cast(p.paid_at as date) as paid_day from billing.payments p
        where cast(p.paid_at as date) = date '2026-09-30' group by 2""")
    IcebergSqlOperator(task_id="bounded", max_lineage_edges=3, sql="""
        create or replace table marketing.bounded as
        select l.learner_id, l.email, l.country, l.status from crm.learners l where l.marketing_consent""")
'''


def test_insert_by_position_and_retry_without_duplicates(sandbox, seeded):
    sandbox.write_dag("operator_retry", dag_code(sandbox, RETRY_DAG))

    run = sandbox.dags_test("operator_retry")

    assert "the worker lost its connection after the commit" in run.log
    assert "already wrote snapshot" in run.log
    table = seeded.load_table("analytics.daily_revenue").scan().to_arrow().to_pylist()
    days = sorted(str(r["day"]) for r in table)
    assert days == ["2026-09-30", "2026-10-01"]
    payments = seeded.load_table("billing.payments").scan().to_arrow()
    truth = duckdb.connect()
    truth.register("p", payments)
    expected = truth.execute(
        "select sum(amount) from p where status = 'succeeded' and cast(paid_at as date) = date '2026-10-01'"
    ).fetchone()[0]
    assert [r["revenue_usd"] for r in table if str(r["day"]) == "2026-10-01"] == [pytest.approx(expected)]
    assert len(run.task_events("daily_revenue", "COMPLETE")) == 1
    complete = run.task_events("daily_revenue", "COMPLETE")[0]
    assert complete["run"]["facets"]["airflow"]["taskInstance"]["try_number"] == 2

    bounded = run.task_events("bounded", "COMPLETE")[0]
    assert bounded["run"]["facets"]["lineageTruncation"]["edges"] == 5
    assert bounded["run"]["facets"]["lineageTruncation"]["kept"] == 3
    lineage = bounded["outputs"][0]["facets"]["columnLineage"]
    assert sum(len(f["inputFields"]) for f in lineage["fields"].values()) + len(lineage["dataset"]) == 3
    assert set(lineage["fields"]) == {"learner_id", "email", "country", "status"}

    # A second DAG run for the same logical date (a new run id) appends nothing again.
    again = sandbox.dags_test("operator_retry")
    assert again.returncode == 0, again.log[-3000:]
    assert len(seeded.load_table("analytics.daily_revenue").scan().to_arrow()) == 2


NESTED_DAG = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("operator_nested", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    ctas = IcebergSqlOperator(task_id="nested_ctas", sql="""
        create or replace table a.b.out as
        select s.id, upper(s.name) as name from a.b.src s where s.id > 1""")
    insert = IcebergSqlOperator(task_id="nested_insert", sql="""
        insert into a.b.out (id, name) select s.id, s.name from src s where s.id = 1""")
    ctas >> insert
'''


def test_a_nested_namespace_is_read_and_written_through_airflow(sandbox):
    catalog = open_local_catalog(sandbox.catalog_folder)
    create_or_replace(catalog, TableRef(("a", "b"), "src"), pa.table({"id": [1, 2, 3], "name": ["x", "y", "z"]}), {})
    sandbox.write_dag("operator_nested", NESTED_DAG)

    run = sandbox.dags_test("operator_nested")

    assert run.returncode == 0, run.log[-3000:]
    written = catalog.load_table(("a", "b", "out")).scan().to_arrow().sort_by("id").to_pylist()
    assert written == [{"id": 1, "name": "x"}, {"id": 2, "name": "Y"}, {"id": 3, "name": "Z"}]
    start = run.task_events("nested_ctas", "START")[0]
    assert [i["name"] for i in start["inputs"]] == ["a.b.src"]
    complete = run.task_events("nested_ctas", "COMPLETE")[0]
    assert [i["name"] for i in complete["inputs"]] == ["a.b.src"]
    output = complete["outputs"][0]
    assert (output["namespace"], output["name"]) == ("iceberg://platform", "a.b.out")
    name = output["facets"]["columnLineage"]["fields"]["name"]["inputFields"]
    assert [(f["name"], f["field"]) for f in name] == [("a.b.src", "name")]
    dataset = by_field(output["facets"]["columnLineage"]["dataset"])
    assert dataset == {("a.b.src", "id"): [("INDIRECT", "FILTER", False)]}
    inserted = run.task_events("nested_insert", "COMPLETE")[0]
    assert [i["name"] for i in inserted["inputs"]] == ["a.b.src"]
    assert inserted["outputs"][0]["name"] == "a.b.out"
    assert inserted["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 1
