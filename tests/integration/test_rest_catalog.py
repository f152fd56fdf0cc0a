"""The operator through real Airflow on a REST catalog where REST differs from the embedded SQL catalog: a catalog
that wants credentials (the connection's password as `token` or OAuth2 `credential`), a catalog that is down, and
one that does not answer a commit in time. The seeded-platform tests of test_iceberg_sql_operator.py run on the
REST catalog too (the `seeded` fixture)."""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.exceptions import OAuthError, UnauthorizedError

from airflow_lineage_governance.iceberg.catalog import open_catalog
from airflow_lineage_governance.iceberg.errors import CatalogUnreachableError
from airflow_lineage_governance.iceberg.write import create_or_replace
from tests.support.iceberg_rest import catalog_properties, start_rest_catalog, stop_rest_catalog

pytestmark = pytest.mark.integration

TOKEN, CREDENTIAL = "tok-7f3a", "reporting:s3cret-9b1c"

DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("rest_catalog", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="by_token", sql="create or replace table shop.big as select o.id, o.amount "
                                               "from shop.orders o where o.amount > 10")
    IcebergSqlOperator(task_id="by_credential", iceberg_conn_id="iceberg_credential",
                       sql="insert into shop.log select o.id, o.amount from shop.orders o")
"""

ORDERS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "amount": pa.array([5.0, 20.0, 30.0])})


@pytest.fixture
def guarded_catalog(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Yields the properties (no credentials) of a REST catalog server that answers 401 without the bearer
    TOKEN, and vends TOKEN for the OAuth2 client credential CREDENTIAL."""
    folder = tmp_path / "guarded"
    properties = start_rest_catalog(
        folder, env={**os.environ, "ICEBERG_REST_TOKEN": TOKEN, "ICEBERG_REST_CREDENTIAL": CREDENTIAL}
    )
    try:
        yield properties
    finally:
        stop_rest_catalog(folder)


def test_a_catalog_that_wants_credentials_gets_the_connection_password(sandbox, guarded_catalog):
    with pytest.raises(UnauthorizedError, match="A valid bearer token is required"):
        open_catalog("platform", guarded_catalog)
    with pytest.raises(OAuthError, match="The client credential is not valid"):
        open_catalog("platform", {**guarded_catalog, "credential": "reporting:wrong"})
    catalog = open_catalog("platform", {**guarded_catalog, "token": TOKEN})
    create_or_replace(catalog, "shop.orders", ORDERS, {})
    catalog.create_table("shop.log", schema=ORDERS.schema)
    sandbox.catalog_properties = {**guarded_catalog, "password_property": "token"}
    sandbox.catalog_password = TOKEN
    credential = {
        "conn_type": "iceberg_catalog",
        "password": CREDENTIAL,
        "extra": {**guarded_catalog, "catalog_name": "platform", "lineage_namespace": "iceberg://platform"},
    }
    sandbox.write_dag("rest_catalog", DAG)

    run = sandbox.dags_test("rest_catalog", AIRFLOW_CONN_ICEBERG_CREDENTIAL=json.dumps(credential))

    assert run.returncode == 0, run.log[-3000:]
    assert catalog.load_table("shop.big").scan().to_arrow().column("id").to_pylist() == [2, 3]
    assert sorted(catalog.load_table("shop.log").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert TOKEN not in run.log and CREDENTIAL.split(":")[1] not in run.log
    assert TOKEN not in run.events_path.read_text() and CREDENTIAL not in run.events_path.read_text()


ONE_TASK_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

with DAG("rest_unanswered", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    IcebergSqlOperator(task_id="append", sql="insert into shop.log select o.id, o.amount from shop.orders o")
"""


def assert_fails_with_one_sentence(run, sentence: str) -> None:
    assert run.returncode != 0
    assert sentence in run.log, run.log[-3000:]
    failed = run.task_events("append", "FAIL")
    assert len(failed) == 1
    message = failed[0]["run"]["facets"]["errorMessage"]["message"]
    assert message == sentence and "\n" not in message and "Traceback" not in message


def test_a_catalog_that_is_down_fails_the_task_with_one_sentence(sandbox, tmp_path):
    folder = tmp_path / "down"
    properties = start_rest_catalog(folder)
    stop_rest_catalog(folder)  # a port that a catalog answered on a moment ago, now closed
    sandbox.catalog_properties = {**properties, "request-timeout-seconds": "5"}
    sandbox.write_dag("rest_unanswered", ONE_TASK_DAG)

    run = sandbox.dags_test("rest_unanswered")

    assert_fails_with_one_sentence(
        run,
        (
            f"catalog default: the REST catalog at {properties['uri']} could not be reached (the connection failed); "
            "check that the catalog server is running and reachable, then retry the task."
        ),
    )


class StallingProxy(BaseHTTPRequestHandler):
    """Forwards every request to the REST server, except a table commit, which it holds unanswered for a while
    and then drops without forwarding."""

    target: tuple[str, int]
    stall_s: float
    commit = re.compile(r"^/v1/namespaces/[^/]+/tables/[^/?]+$")
    stalled: list[str]

    def forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "POST" and self.commit.match(self.path):
            self.stalled.append(self.path)
            time.sleep(self.stall_s)
            self.close_connection = True
            return
        upstream = http.client.HTTPConnection(*self.target, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        answer = upstream.getresponse()
        payload = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        upstream.close()

    do_GET = do_POST = do_DELETE = do_HEAD = forward

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return


@pytest.fixture
def rest_empty(request, tmp_path) -> Iterator[dict[str, str]]:
    with catalog_properties("rest", request, tmp_path / "unused") as properties:
        yield properties


def test_a_commit_the_catalog_does_not_answer_in_time_fails_with_one_sentence_and_writes_nothing(sandbox, rest_empty):
    catalog = open_catalog("platform", rest_empty)
    create_or_replace(catalog, "shop.orders", ORDERS, {})
    log = catalog.create_table("shop.log", schema=ORDERS.schema)
    log.append(ORDERS)
    before = catalog.load_table("shop.log").metadata.current_snapshot_id
    host, port = rest_empty["uri"].removeprefix("http://").split(":")
    handler = type("Handler", (StallingProxy,), {"target": (host, int(port)), "stall_s": 8.0, "stalled": []})
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        uri = f"http://127.0.0.1:{proxy.server_address[1]}"
        sandbox.catalog_properties = {**rest_empty, "uri": uri, "request-timeout-seconds": "2"}
        sandbox.write_dag("rest_unanswered", ONE_TASK_DAG)

        run = sandbox.dags_test("rest_unanswered")
    finally:
        proxy.shutdown()
        proxy.server_close()

    assert handler.stalled == ["/v1/namespaces/shop/tables/log"]
    assert_fails_with_one_sentence(
        run,
        (
            f"catalog default: the REST catalog at {uri} did not answer within 2 s; "
            "check that the catalog server is running and reachable, then retry the task."
        ),
    )
    after = catalog.load_table("shop.log")
    assert after.metadata.current_snapshot_id == before
    assert after.scan().to_arrow().num_rows == 3


def test_an_unreachable_catalog_is_one_sentence_in_process():
    with pytest.raises(CatalogUnreachableError) as raised:
        open_catalog("platform", {"type": "rest", "uri": "http://127.0.0.1:9", "request-timeout-seconds": "2"})
    assert str(raised.value) == (
        "catalog platform: the REST catalog at http://127.0.0.1:9 could not be reached (the connection failed); "
        "check that the catalog server is running and reachable, then retry the task."
    )
