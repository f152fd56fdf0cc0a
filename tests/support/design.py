"""A design read from SQL and the COMPLETE events the operator would send for it, for the design diff's tests."""

from __future__ import annotations

import json

from openlineage.client.serde import Serde

from airflow_lineage_governance.graph.design import TaskSql, design_lineage
from airflow_lineage_governance.graph.events import to_run_event
from airflow_lineage_governance.graph.history import LineageHistory
from airflow_lineage_governance.lineage import column_lineage, redacted_sql
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from airflow_lineage_governance.refs import TableRef
from tests.support.events import NS, complete

T = TableRef.parse


SCHEMA = {
    T("crm.learners"): {
        "learner_id": "bigint",
        "email": "varchar",
        "country": "varchar",
        "marketing_consent": "boolean",
    }
}


OFFERS = (
    "-- offers\ncreate or replace table marketing.offers as select l.learner_id, l.country "
    "from crm.learners l where l.marketing_consent and l.country = 'NL'"
)


CHANGED = "create or replace table marketing.offers as select l.learner_id, l.email from crm.learners l"


def run_event(job: str, sql: str, time: str, run: str) -> dict:
    """Returns the COMPLETE event the operator would send for `sql`: its column lineage facet and its `sql` facet."""
    lineage = column_lineage(sql, SCHEMA)
    output = {
        "namespace": NS,
        "name": str(lineage.target),
        "facets": {"columnLineage": json.loads(Serde.to_json(column_lineage_facet(lineage, NS)))},
    }
    event = complete(
        job,
        output,
        time=time,
        run=run,
        dag_run="scheduled__1",
        inputs=[{"namespace": NS, "name": str(s)} for s in lineage.sources],
    )
    event["job"]["facets"] = {"sql": {"query": redacted_sql(sql)}}
    return event


def history_of(*events: dict) -> LineageHistory:
    history = LineageHistory(NS)
    for raw in events:
        history.add(to_run_event(raw))
    return history


def design_of(**tasks: str):
    return design_lineage([TaskSql("p", task, sql=sql) for task, sql in tasks.items()], SCHEMA, dag_ids=["p"])
