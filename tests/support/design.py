"""A design read from SQL and the COMPLETE events the operator would send for it, kept in a store in memory, for the
design diff's tests."""

from __future__ import annotations

import json
from datetime import datetime

from openlineage.client.serde import Serde

from airflow_lineage_governance.governance.store_session import IN_MEMORY
from airflow_lineage_governance.graph.design import TaskSql, design_lineage
from airflow_lineage_governance.graph.diff import ObservedJob
from airflow_lineage_governance.lineage import column_lineage, redacted_sql
from airflow_lineage_governance.lineage.facet import column_lineage_facet
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.support.events import NS, Listed, complete

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


def stored_of(*events: dict) -> LineageStore:
    """Returns a lineage store in memory holding the events."""
    store = LineageStore.open(IN_MEMORY, create=True)
    store.ingest(Listed(list(events)))
    return store


def observed_jobs(store: LineageStore, as_of: datetime | None = None) -> dict[str, ObservedJob]:
    """Returns, by job name, each job's run as of `as_of` (None: now) as the design diff compares it."""
    return store.observed_jobs(as_of)


def design_of(**tasks: str):
    return design_lineage([TaskSql("p", task, sql=sql) for task, sql in tasks.items()], SCHEMA, dag_ids=["p"])
