"""A fresh demo run's events posted to a real Marquez 0.51.1: every output column answers in Marquez's column-lineage
view with its inputs, the lineage graph links each job to its tables, and each dataset version holds the typed
fields of the events."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pytest

from tests.marquez.conftest import DemoRun
from tests.support.marquez_server import Marquez

pytestmark = [pytest.mark.integration, pytest.mark.marquez]


@dataclass
class Column:
    """What the demo's COMPLETE events say of one output column, over every run that wrote it."""

    type: str
    direct: set[tuple[str, str]] = field(default_factory=set)
    inputs: set[tuple[str, str]] = field(default_factory=set)
    """Every input field the column's entry names, DIRECT or INDIRECT: Marquez keeps each as an edge."""


def output_columns(demo: DemoRun) -> dict[tuple[str, str], Column]:
    columns: dict[tuple[str, str], Column] = {}
    for event in demo.events:
        if event["eventType"] != "COMPLETE":
            continue
        for output in event.get("outputs") or []:
            facets = output.get("facets") or {}
            types = {f["name"]: f.get("type") for f in (facets.get("schema") or {}).get("fields", [])}
            for name, entry in ((facets.get("columnLineage") or {}).get("fields") or {}).items():
                column = columns.setdefault((output["name"], name), Column(types.get(name) or ""))
                for source in entry["inputFields"]:
                    key = (source["name"], source["field"])
                    column.inputs.add(key)
                    if any(t["type"] == "DIRECT" for t in source.get("transformations") or []):
                        column.direct.add(key)
    return columns


@pytest.fixture(scope="module")
def posted(marquez: Marquez, demo_run: DemoRun) -> DemoRun:
    statuses = [marquez.post_event(line) for line in demo_run.lines]
    assert statuses and all(status in (200, 201) for status in statuses), statuses
    return demo_run


def test_every_output_column_answers_with_its_direct_inputs(marquez: Marquez, posted: DemoRun):
    columns = output_columns(posted)
    assert len(columns) == 31
    namespace = posted.dataset_namespace
    failed: list[str] = []
    for (table, name), expected in sorted(columns.items()):
        node = f"datasetField:{namespace}:{table}:{name}"
        status, body = marquez.get("/api/v1/column-lineage", nodeId=node)
        if status != 200:
            failed.append(f"{table}.{name}: HTTP {status}")
            continue
        found = {n["id"]: n for n in body["graph"]}
        if node not in found:
            failed.append(f"{table}.{name}: not in its own graph")
            continue
        # The column's edges, over every version of its table: `inputFields` holds one version's inputs only
        # (analytics.learner_dim, written by two jobs, shows either job's).
        edges = {edge["destination"] for edge in found[node]["inEdges"]}
        wanted = {f"datasetField:{namespace}:{source}:{field}" for source, field in expected.inputs}
        direct = {f"datasetField:{namespace}:{source}:{field}" for source, field in expected.direct}
        if not direct <= edges or edges != wanted:
            failed.append(f"{table}.{name}: inputs {sorted(edges)}, expected {sorted(wanted)}")
        data = found[node]["data"]
        if not {(source["dataset"], source["field"]) for source in data["inputFields"]} <= expected.inputs:
            failed.append(f"{table}.{name}: input fields {data['inputFields']}")
        if data["fieldType"] != expected.type:
            failed.append(f"{table}.{name}: type {data['fieldType']!r}, expected {expected.type!r}")
    assert failed == [], f"{len(failed)} of {len(columns)} columns: " + "; ".join(failed)


def test_the_lineage_graph_links_each_job_to_what_it_read_and_wrote(marquez: Marquez, posted: DemoRun):
    jobs: dict[str, tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    for event in posted.events:
        if event["eventType"] == "COMPLETE" and event.get("outputs"):
            reads, writes = jobs[event["job"]["name"]]
            reads.update(f"dataset:{d['namespace']}:{d['name']}" for d in event.get("inputs") or [])
            writes.update(f"dataset:{d['namespace']}:{d['name']}" for d in event["outputs"])
    assert len(jobs) == 8
    for job, (reads, writes) in jobs.items():
        node = f"job:{posted.namespace}:{job}"
        status, body = marquez.get("/api/v1/lineage", nodeId=node, depth=1)
        assert status == 200, (job, status, body)
        found = {n["id"]: n for n in body["graph"]}
        assert {e["origin"] for e in found[node]["inEdges"]} == reads, job
        assert {e["destination"] for e in found[node]["outEdges"]} == writes, job


def test_every_dataset_version_holds_the_typed_fields_and_the_snapshot(marquez: Marquez, posted: DemoRun):
    schemas: dict[str, list[tuple[str, str]]] = {}
    snapshots: dict[str, str] = {}
    for event in posted.events:
        for side in ("inputs", "outputs"):
            for dataset in event.get(side) or []:
                facets = dataset.get("facets") or {}
                schemas[dataset["name"]] = [(f["name"], f.get("type")) for f in facets["schema"]["fields"]]
                if side == "outputs" and event["eventType"] == "COMPLETE":
                    snapshots[dataset["name"]] = facets["version"]["datasetVersion"]
    assert len(schemas) == 14 and len(snapshots) == 7
    namespace = posted.dataset_namespace.replace(":", "%3A").replace("/", "%2F")
    for name, fields in sorted(schemas.items()):
        status, body = marquez.get(f"/api/v1/namespaces/{namespace}/datasets/{name}/versions", limit=100)
        assert status == 200, (name, status, body)
        for version in body["versions"]:
            assert [(f["name"], f["type"]) for f in version["fields"]] == fields, (name, version["version"])
        status, dataset = marquez.get(f"/api/v1/namespaces/{namespace}/datasets/{name}")
        assert status == 200 and sorted((f["name"], f["type"]) for f in dataset["fields"]) == sorted(fields), name
        if name in snapshots:
            latest = body["versions"][0]
            assert latest["facets"]["version"]["datasetVersion"] == snapshots[name], name
