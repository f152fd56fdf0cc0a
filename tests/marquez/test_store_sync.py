"""`store sync` from a real Marquez 0.51.1: the first sync reads every event, the next asks only for what came after
the watermark the store keeps (less the overlap), so an event that arrived late inside the overlap is added and one
dated before it is not asked for."""

from __future__ import annotations

import json
import uuid

import pytest

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.graph.events import parse_time
from airflow_lineage_governance.store.ingest import micros
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.sync import sync, watermark
from tests.support.events import complete, event, output
from tests.support.marquez_server import Marquez

pytestmark = [pytest.mark.integration, pytest.mark.marquez]


def posted(marquez: Marquez, *events: dict) -> None:
    """Posts the events as an OpenLineage client would: the event and each facet with its producer and schema."""
    for raw in events:
        raw["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
        raw["producer"] = "https://example.com/tests"
        for dataset in raw["outputs"]:
            for facet in dataset["facets"].values():
                facet["_producer"] = raw["producer"]
                facet["_schemaURL"] = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"
        assert marquez.post_event(json.dumps(raw)) in (200, 201)


def runs_of(location: str, namespace: str) -> list[tuple[str, str]]:
    with LineageStore.open(location, read_only=True) as store:
        rows = store.engine.query(
            "SELECT e.event_type, e.event_time FROM events e JOIN jobs j ON j.job_id = e.job_id "
            "WHERE j.namespace = ? ORDER BY e.at_us",
            [namespace],
        )
    return [(str(kind), str(time)) for kind, time in rows]


def test_the_second_sync_asks_only_after_the_watermark_less_the_overlap(marquez: Marquez, tmp_path, capsys):
    namespace = f"sync_{uuid.uuid4().hex[:8]}"
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    posted(
        marquez,
        event("START", "dag.a", run=a, time="2031-01-01T01:50:00Z", namespace=namespace),
        complete("dag.a", output("s.t", {"x": ["s.src.x"]}), run=a, time="2031-01-01T02:05:00Z", namespace=namespace),
        complete("dag.b", output("s.u", {"y": ["s.t.x"]}), run=b, time="2031-01-01T03:00:00Z", namespace=namespace),
    )
    location = str(tmp_path / "lineage-store.duckdb")
    assert main(["store", "init", "--store", location]) == 0
    assert main(["store", "sync", marquez.url, "--store", location]) == 0
    first = capsys.readouterr().out.splitlines()[-1]
    assert first.startswith(f"{marquez.url}: ") and "0 malformed" in first
    assert len(runs_of(location, namespace)) == 3
    with LineageStore.open(location, read_only=True) as store:
        mark = watermark(store.engine, marquez.url)
    assert mark is not None and mark[0] == micros(parse_time("2031-01-01T03:00:00Z"))  # type: ignore[arg-type]

    c = str(uuid.uuid4())
    posted(
        marquez,
        event("START", "dag.b", run=b, time="2031-01-01T02:30:00Z", namespace=namespace),  # late, inside the overlap
        event("START", "dag.c", run=c, time="2031-01-01T00:30:00Z", namespace=namespace),  # late, before it
        complete("dag.c", output("s.v", {"z": ["s.u.y"]}), run=c, time="2031-01-02T02:00:00Z", namespace=namespace),
    )
    second = sync(location, marquez.url)
    assert second.asked_after == "2031-01-01T02:00:00.000000Z"
    assert (second.read, second.added, second.duplicates, second.malformed) == (4, 2, 2, 0)
    assert parse_time(second.watermark or "") == parse_time("2031-01-02T02:00:00Z")
    assert [kind for kind, _ in runs_of(location, namespace)] == ["START", "COMPLETE", "START", "COMPLETE", "COMPLETE"]
    with LineageStore.open(location, read_only=True) as store:
        assert [str(e.target) for e in store.edges_as_of() if str(e.target).startswith("s.")] == [
            "s.t.x",
            "s.u.y",
            "s.v.z",
        ]
