"""The lineage store transport: the real OpenLineage client, configured by its dotted type name as a user's
openlineage.yml names it, writes each event into the store on both engines as it is emitted; an event emitted twice
is stored once; a DuckDB file another process has open is waited for, then one sentence."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset

from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.errors import StoreBusyError, StoreError
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.transport import StoreTransport, StoreTransportConfig

NS = "iceberg://platform"
RUN_ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
TYPE = "airflow_lineage_governance.store.transport.StoreTransport"
NEEDS_STORE = (
    "the lineage store transport needs `store`: the path of the lineage store's DuckDB file or a postgresql:// URL."
)


def client(store: str, **more: object) -> OpenLineageClient:
    return OpenLineageClient(config={"transport": {"type": TYPE, "store": store, **more}})


def run_event(state: RunState, at: str) -> RunEvent:
    """Returns a typed event of one run: out.t.x is crm.learners.email, the rows filtered by crm.learners.status."""
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            "x": column_lineage_dataset.Fields(
                inputFields=[
                    column_lineage_dataset.InputField(
                        namespace=NS,
                        name="crm.learners",
                        field="email",
                        transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")],
                    )
                ]
            )
        },
        dataset=[
            column_lineage_dataset.InputField(
                namespace=NS,
                name="crm.learners",
                field="status",
                transformations=[column_lineage_dataset.Transformation(type="INDIRECT", subtype="FILTER")],
            )
        ],
    )
    return RunEvent(
        eventType=state,
        eventTime=at,
        run=Run(runId=RUN_ID),
        job=Job(namespace="platform", name="dag.task"),
        producer="tests",
        inputs=[InputDataset(namespace=NS, name="crm.learners")],
        outputs=[OutputDataset(namespace=NS, name="out.t", facets={"columnLineage": lineage})],
    )


def test_each_event_the_client_emits_is_in_the_store_when_emit_returns(store_location: str):
    lineage = client(store_location)
    lineage.emit(run_event(RunState.START, "2026-10-01T02:00:00Z"))
    with LineageStore.open(store_location) as store:
        assert store.stats()["rows"]["events"] == 1
        with pytest.raises(StoreError):
            store.impact(ColumnRef.parse("crm.learners.email"))  # a START states no lineage
    lineage.emit(run_event(RunState.COMPLETE, "2026-10-01T02:01:00Z"))
    with LineageStore.open(store_location) as store:
        assert store.stats()["rows"]["events"] == 2
        impact = store.impact(ColumnRef.parse("crm.learners.email"))
        assert impact.columns_reached == [ColumnRef.parse("out.t.x")]
        assert impact.values == [ColumnRef.parse("out.t.x")]
        assert store.impact(ColumnRef.parse("crm.learners.status")).rows == [TableRef.parse("out.t")]


def test_an_event_emitted_twice_is_stored_once(store_location: str):
    transport = StoreTransport(StoreTransportConfig.from_dict({"store": store_location}))
    first = transport.emit(run_event(RunState.COMPLETE, "2026-10-01T02:01:00Z"))
    again = transport.emit(run_event(RunState.COMPLETE, "2026-10-01T02:01:00Z"))
    assert (first.stored, first.duplicates) == (1, 0)
    assert (again.stored, again.duplicates) == (0, 1)
    with LineageStore.open(store_location) as store:
        assert store.stats()["rows"]["events"] == 1


HOLD = """
import sys, time, duckdb
connection = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
connection.close()
"""


def hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Starts another process that has the DuckDB file open for `seconds`; returns once it has."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


def test_a_duckdb_file_another_process_has_open_is_waited_for(tmp_path: Path):
    path = tmp_path / "lineage-store.duckdb"
    LineageStore.open(path, create=True).close()
    holder = hold(path, 1.5)
    try:
        started = time.monotonic()
        client(str(path), wait_seconds=30).emit(run_event(RunState.COMPLETE, "2026-10-01T02:01:00Z"))
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=30)
    assert waited > 0.5  # it did wait for the other process
    with LineageStore.open(path) as store:
        assert store.stats()["rows"]["events"] == 1


def test_a_duckdb_file_still_busy_after_the_wait_is_one_sentence(tmp_path: Path):
    path = tmp_path / "lineage-store.duckdb"
    LineageStore.open(path, create=True).close()
    holder = hold(path, 20)
    transport = StoreTransport(StoreTransportConfig.from_dict({"store": str(path), "wait_seconds": "0.3"}))
    try:
        with pytest.raises(StoreBusyError) as raised:
            transport.emit(run_event(RunState.COMPLETE, "2026-10-01T02:01:00Z"))
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert str(raised.value) == (
        f"{path}: another process has the lineage store's DuckDB file open; try again when it is done, or keep a "
        "store that many processes share on PostgreSQL."
    )


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        (
            {},
            NEEDS_STORE,
        ),
        (
            {"store": "  "},
            NEEDS_STORE,
        ),
        (
            {"store": "x.duckdb", "wait_seconds": "soon"},
            "the lineage store transport's `wait_seconds` must be a number of seconds.",
        ),
        (
            {"store": "x.duckdb", "wait_seconds": "-1"},
            "the lineage store transport's `wait_seconds` must be a number of seconds.",
        ),
        (
            {"store": "x.duckdb", "wait_seconds": "nan"},
            "the lineage store transport's `wait_seconds` must be a number of seconds.",
        ),
    ],
)
def test_a_wrong_configuration_is_one_sentence(settings: dict[str, str], sentence: str):
    with pytest.raises(StoreError) as raised:
        OpenLineageClient(config={"transport": {"type": TYPE, **settings}})
    assert str(raised.value) == sentence
