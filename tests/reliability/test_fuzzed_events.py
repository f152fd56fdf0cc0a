"""Any JSON value in any position of an event (numbers where lists go, lists where objects go, objects where
subtypes go, unhashable values where names go) is counted as wrong-shaped and left out: reading, the graph,
proposals, every check and impact never crash on it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_governance.governance.checks import run_checks
from airflow_lineage_governance.governance.classify import propose
from airflow_lineage_governance.governance.config import Rules, load_metadata
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.build import build_graph
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import FileEventSource, final_events, read_events
from tests.support.events import NS, Listed, complete, output, source

pytestmark = pytest.mark.reliability

BASE = complete(
    "p.offers",
    output(
        "marketing.offers",
        {
            "learner_id": ["crm.learners.learner_id"],
            "country": [source("crm.learners.country"), source("crm.learners.email", "INDIRECT", "FILTER")],
        },
        rows=["crm.learners.date_of_birth"],
        schema=["learner_id", "country"],
    ),
    dag_run="run-1",
    try_number=1,
    inputs=[
        {
            "namespace": NS,
            "name": "crm.learners",
            "facets": {"schema": {"fields": [{"name": "email", "type": "string"}]}},
        }
    ],
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Returns the path of every position in the JSON value (object keys and list indexes), itself included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*prefix, index)))
    return found


POSITIONS = paths(BASE)


def replaced(event: dict[str, Any], path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    changed = copy.deepcopy(event)
    parent = changed
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return changed


def answer_everything(governance: StoredGovernance) -> None:
    run_checks(governance.nightly("fuzzed"), ["crm.learners", "marketing.offers"])
    for column in ("crm.learners.email", "crm.learners.country", "marketing.offers.country"):
        try:
            governance.impact(column)
            governance.provenance(column)
        except ColumnNotInLineageError:
            pass
    governance.graph().to_networkx()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.sampled_from(POSITIONS), value=JSON)
def test_any_value_in_any_position_is_counted_never_a_crash(tmp_path_factory, position, value):
    event = replaced(BASE, position, value)
    path = tmp_path_factory.mktemp("fuzz") / "events.jsonl"
    path.write_text(json.dumps(BASE) + "\n" + json.dumps(event) + "\n")
    events, report = read_events(FileEventSource(path), "platform")
    read_as_events = (
        len(events)
        + report.wrong_shape
        + report.unknown_type
        + report.other_namespace
        + report.duplicates
        + report.malformed
    )
    assert read_as_events == 2  # every line is either an event or counted
    rules = Rules(namespace=NS)
    graph = build_graph(events, NS)
    metadata_path = _metadata(tmp_path_factory)
    propose(graph, load_metadata(metadata_path, rules).declared(), rules)
    final_events(events, report)
    with StoredGovernance.from_events(path, metadata_path=metadata_path, job_namespaces=["platform"]) as governance:
        answer_everything(governance)


def _metadata(factory: Any) -> Any:
    path = factory.mktemp("meta") / "metadata.toml"
    path.write_text('[tables."crm.learners"]\nsource = true\ncolumns = { email = "personal" }\n')
    return path


def test_a_wrong_shaped_part_of_a_kept_event_is_counted():
    broken = copy.deepcopy(BASE)
    entry = broken["outputs"][0]["facets"]["columnLineage"]["fields"]["country"]
    entry["inputFields"][0]["transformations"] = [{"type": ["DIRECT"], "subtype": {"x": 1}}]
    entry["inputFields"].append(7)
    broken["outputs"][0]["facets"]["columnLineage"]["dataset"] = "crm.learners"
    events, _ = read_events(Listed([broken]))
    graph = build_graph(events, NS)
    assert graph.wrong_parts == 3
