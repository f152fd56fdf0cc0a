"""Runs of a job share a lineage shape exactly when they state equal lineage: compared by their orjson bytes for
events read from JSON lines, in full for events of any other source, and both ways give the same shapes."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from airflow_lineage_governance.graph.events import FileEventSource, read_events
from airflow_lineage_governance.graph.history import LineageHistory
from tests.support.events import NS, Listed, complete, output, write


def base() -> dict[str, Any]:
    """Returns a COMPLETE of dag.a that reads two tables and writes out.t, with schema, lineage, SQL, versions."""
    event = complete(
        "dag.a",
        output("out.t", {"x": ["src.a.p", "src.b.q"]}, rows=["src.a.r"], schema=["x"]),
        inputs=[
            {"namespace": NS, "name": "src.a", "facets": {"schema": {"fields": [{"name": "p", "type": "long"}]}}},
            {"namespace": NS, "name": "src.b", "facets": {}},
        ],
    )
    event["job"]["facets"] = {"sql": {"query": "INSERT INTO out.t SELECT p FROM src.a JOIN src.b"}}
    return event


def shapes_of(events: list[dict[str, Any]], source: Any) -> list[int]:
    """Returns, per run in time order, the number of the shape it has (0 for the first shape seen, and so on)."""
    history = LineageHistory(NS)
    read_events(source, on_complete=history.add)
    serials: dict[int, int] = {}
    return [serials.setdefault(r.shape.serial, len(serials)) for r in history.runs["dag.a"]]


def runs(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Returns the events as runs of dag.a on consecutive days, each with its own run id and snapshots."""
    made = []
    for day, event in enumerate(events, start=1):
        event = copy.deepcopy(event)
        event["eventTime"], event["run"]["runId"] = f"2026-10-{day:02d}T02:00:00Z", f"r{day}"
        for dataset in [*event["inputs"], *event["outputs"]] if isinstance(event["inputs"], list) else []:
            if isinstance(dataset, dict) and isinstance(dataset.get("facets"), dict):
                dataset["facets"]["version"] = {"datasetVersion": f"v{day}"}
        made.append(event)
    return made


def both_ways(tmp_path: Any, events: list[dict[str, Any]]) -> list[int]:
    """Returns the shapes of the runs read from a JSON lines file, after checking a source of Python values (the
    full comparison) gives the same."""
    from_lines = shapes_of(events, FileEventSource(write(tmp_path / "events.jsonl", events)))
    assert from_lines == shapes_of(events, Listed(events))
    return from_lines


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(event: dict[str, Any]) -> None:
        part: Any = event
        for step in path[:-1]:
            part = part[step]
        part[path[-1]] = value

    return change


LINEAGE = ("outputs", 0, "facets", "columnLineage")
CHANGES = {
    "sql": _set(("job", "facets", "sql", "query"), "INSERT INTO out.t SELECT q FROM src.a JOIN src.b"),
    "no sql": _set(("job", "facets"), {}),
    "output schema type": _set(("outputs", 0, "facets", "schema", "fields", 0, "type"), "long"),
    "input schema type": _set(("inputs", 0, "facets", "schema", "fields", 0, "type"), "string"),
    "input schema added": _set(("inputs", 1, "facets", "schema"), {"fields": []}),
    "input field": _set((*LINEAGE, "fields", "x", "inputFields", 0, "field"), "p2"),
    "input field table": _set((*LINEAGE, "fields", "x", "inputFields", 1, "name"), "src.c"),
    "subtype": _set((*LINEAGE, "fields", "x", "inputFields", 0, "transformations", 0, "subtype"), "TRANSFORMATION"),
    "masking": _set((*LINEAGE, "fields", "x", "inputFields", 0, "transformations", 0, "masking"), True),
    "row source": _set((*LINEAGE, "dataset", 0, "field"), "s"),
    "output name": _set(("outputs", 0, "name"), "out.u"),
    "output namespace": _set(("outputs", 0, "namespace"), "iceberg://other"),
    "input name": _set(("inputs", 1, "name"), "src.c"),
    "input namespace": _set(("inputs", 1, "namespace"), "iceberg://other"),
    "input dropped": lambda event: event["inputs"].pop(),
    "input added": lambda event: event["inputs"].append({"namespace": NS, "name": "src.c"}),
    "input not an object": _set(("inputs", 1), ["src.b", NS, None]),
    "inputs not a list": _set(("inputs",), {"namespace": NS, "name": "src.b"}),
    "lineage null": _set(LINEAGE, None),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_equal_lineage_shares_one_shape_and_any_one_change_makes_a_new_one(tmp_path, name):
    changed = base()
    CHANGES[name](changed)
    assert both_ways(tmp_path, runs(base(), base(), changed, changed, base())) == [0, 0, 1, 1, 0]


def test_what_is_no_lineage_keeps_the_shape(tmp_path):
    other = base()
    other["job"]["facets"]["sql"]["query"] = "insert  into out.t\nselect p from src.a join src.b"  # same statement
    other["run"]["facets"] = {"airflow": {"dagRun": {"run_id": "manual__2"}, "taskInstance": {"try_number": 2}}}
    other["outputs"][0]["facets"]["outputStatistics"] = {"rowCount": 7}
    other["producer"] = "another"
    other["inputs"][1]["facets"] = {"columnLineage": {"fields": {}}}  # an input's lineage facet is not its lineage
    assert both_ways(tmp_path, runs(base(), other)) == [0, 0]  # and each run's own snapshots differ (runs())


def test_a_dataset_of_another_form_with_the_same_values_is_another_shape(tmp_path):
    listed, unfaceted = base(), base()
    listed["inputs"][1] = ["src.b", NS, None]  # not an object, with a dataset's name, namespace and schema
    unfaceted["inputs"][1]["facets"] = None  # no facets, as an input with facets but no schema: the same lineage
    assert both_ways(tmp_path, runs(base(), listed, unfaceted, base())) == [0, 1, 0, 0]


def test_outputs_without_facets_beside_outputs_with_lineage(tmp_path):
    first, second = base(), base()
    extra = {"namespace": NS, "name": "out.u", "facets": None}
    first["outputs"].append(extra)
    second["outputs"] = [dict(extra, name="out.t"), dict(second["outputs"][0], name="out.u")]
    swapped = copy.deepcopy(second)
    swapped["outputs"][1]["facets"]["columnLineage"]["dataset"] = []
    assert both_ways(tmp_path, runs(first, second, swapped, first)) == [0, 1, 2, 0]


def test_lineage_nested_past_orjsons_depth_is_compared_in_full(tmp_path):
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    nested, other = base(), base()
    nested["outputs"][0]["facets"]["columnLineage"]["extra"] = deep
    other["outputs"][0]["facets"]["columnLineage"]["extra"] = [deep]
    assert both_ways(tmp_path, runs(nested, nested, other, nested)) == [0, 0, 1, 0]


def test_only_events_read_from_json_lines_are_compared_by_their_bytes(tmp_path):
    history = LineageHistory(NS)
    seen: list[bool] = []
    path = write(tmp_path / "events.jsonl", runs(base()))
    read_events(FileEventSource(path), on_complete=lambda e: (seen.append(e.from_json), history.add(e)))
    read_events(Listed(runs(base())), on_complete=lambda e: (seen.append(e.from_json), history.add(e)))
    assert seen == [True, False]
    assert [type(shape.signature) for shape in history.shapes] == [bytes, tuple]
