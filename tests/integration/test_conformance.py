"""Every event a full demo run emits — the platform's START and COMPLETE events, a FAIL of a statement whose
lineage cannot be read, a COMPLETE whose column lineage was cut to its bound, and the governance DAG's own
events — conforms to the official OpenLineage schemas and to our own facets' schemas."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from learning_platform.seed import seed_platform
from tests.integration.test_governance_dag import governance_env
from tests.support.openlineage_spec import PROVIDER_FACETS, conformance

pytestmark = pytest.mark.integration

EDGE_CASES_DAG = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("edge_cases", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="unreadable", sql="create table marketing.typo as select l.emial from crm.learners l")
    IcebergSqlOperator(task_id="bounded", max_lineage_edges=3, sql="""
        create or replace table analytics.bounded as
        select l.learner_id, l.full_name, l.email, l.country from crm.learners l where l.status = 'active'""")
'''


def test_every_event_of_a_full_run_conforms_to_the_spec(sandbox):
    seed_platform(open_local_catalog(sandbox.catalog_folder))
    sandbox.copy_repo_dags()
    sandbox.write_dag("edge_cases", EDGE_CASES_DAG)
    assert sandbox.dags_test("platform_nightly").returncode == 0
    sandbox.dags_test("edge_cases")  # fails: one task's lineage cannot be read
    sandbox.dags_test("lineage_governance", **governance_env(sandbox))  # fails on the platform's findings
    run = sandbox.dags_test(
        "edge_cases",
        logical_date="2026-10-02T02:00:00+00:00",
        AIRFLOW__LINEAGE_GOVERNANCE__DUCKDB_TIME_ZONE="Asia/Tokyo",
    )
    events = run.events

    found = conformance(events)

    assert found.errors == []
    assert found.events == len(events) >= 30
    assert {e["eventType"] for e in events} == {"START", "COMPLETE", "FAIL"}
    jobs = {e["job"]["name"] for e in events}
    assert {"platform_nightly.marketing_audience", "edge_cases.unreadable", "lineage_governance.write_report"} <= jobs
    assert {
        "columnLineage",
        "schema",
        "version",
        "outputStatistics",
        "sql",
        "errorMessage",
        "parent",
        "lineageTruncation",
        "duckdbSession",
    } <= set(found.validated)
    sessions = {
        (e["job"]["name"], e["eventType"], e["run"]["facets"]["duckdbSession"]["TimeZone"])
        for e in events
        if "duckdbSession" in e["run"]["facets"]
    }
    assert ("platform_nightly.marketing_audience", "COMPLETE", "UTC") in sessions
    assert ("edge_cases.bounded", "START", "Asia/Tokyo") in sessions
    assert ("edge_cases.bounded", "COMPLETE", "Asia/Tokyo") in sessions
    assert found.validated["lineageTruncation"].startswith("https://airflow-lineage-governance.invalid/spec/")
    assert found.unschemed == set()  # every facet names a schema we hold, the provider's own as the base facet
    assert set(found.version_fallbacks) <= PROVIDER_FACETS
