"""An event line read by its parts equals the same line parsed whole, and a line orjson would read otherwise, or
refuse, is left to be parsed whole."""

from __future__ import annotations

import json
import sys
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_governance.graph.events import RunEvent, to_run_event
from airflow_lineage_governance.store.event_parts import EventParts, parts_of, read_line
from airflow_lineage_governance.store.ingest import holds_nul, shape_rows
from tests.support.events import complete, event, output

SNAPSHOTS = {"version": {"datasetVersion": "7801"}}


def typical(**changes: Any) -> dict[str, Any]:
    """Return a COMPLETE as the operator writes one: a DAG run's task reading a snapshot and writing one."""
    raw = complete(
        "dag.job",
        output("out.t", {"x": ["crm.people.email"], "y": ["crm.people.id"]}, ["crm.people.status"], schema=["x", "y"]),
        run="01990000-3e5a-7000-8000-0000000000e1",
        dag_run="scheduled__2026-10-01",
        inputs=[{"namespace": "iceberg://platform", "name": "crm.people", "facets": dict(SNAPSHOTS)}],
    )
    raw["outputs"][0]["facets"]["version"] = {"datasetVersion": "7802"}
    raw["job"]["facets"] = {"sql": {"query": "insert into out.t select email, id from crm.people where status"}}
    raw.update(changes)
    return raw


def whole(line: bytes) -> tuple[RunEvent, EventParts | None] | None:
    """Return what the ingest reads of the line parsed whole (None: orjson refuses it, or no good event to keep)."""
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    found = to_run_event(raw)
    if found is None or holds_nul(raw):
        return None
    return found, parts_of(raw) if found.event_type == "COMPLETE" else None


def assert_read_as_whole(line: bytes) -> bool:
    """Assert that the line, when read by its parts, reads as parsed whole; return whether it was read by its parts."""
    quick = read_line(line)
    if quick is None:
        return False
    expected = whole(line)
    assert expected is not None, line
    (event, parts), (event_whole, parts_whole) = quick, expected
    assert event.raw is None
    assert (event, event.at) == (event_whole, event_whole.at)
    assert (event.dag_run_id, event.try_number, event.extraction_failed) == (
        event_whole.dag_run_id,
        event_whole.try_number,
        event_whole.extraction_failed,
    )
    if parts is None or parts_whole is None:
        assert parts is parts_whole is None
    else:
        assert (parts.datasets, parts.query) == (parts_whole.datasets, parts_whole.query)
        assert parts.lineage_key is not None
    return True


def test_a_typical_complete_is_read_by_its_parts_as_it_reads_whole():
    for line in (json.dumps(typical()).encode() + b"\n", orjson.dumps(typical())):
        assert assert_read_as_whole(line)
        quick = read_line(line)
        assert quick is not None and quick[1] is not None
        assert quick[1].datasets == (
            ("input", "crm.people", "iceberg://platform", "7801"),
            ("output", "out.t", "iceberg://platform", "7802"),
        )
        assert quick[1].query == "insert into out.t select email, id from crm.people where status"
        assert (quick[0].run_id, quick[0].dag_run_id, quick[0].try_number) == (
            "01990000-3e5a-7000-8000-0000000000e1",
            "scheduled__2026-10-01",
            1,
        )


def test_a_start_is_read_without_parts():
    line = json.dumps(event("START", "dag.job", run="r1", dag_run="d1", try_number=2)).encode()
    assert assert_read_as_whole(line)
    quick = read_line(line)
    assert quick is not None and quick[1] is None and quick[0].try_number == 2


def test_equal_lineage_keys_state_the_same_lineage_whatever_else_differs():
    first = read_line(json.dumps(typical()).encode())
    later = typical(eventTime="2026-10-02T02:00:00Z", producer="another")
    later["inputs"][0]["facets"] = {"version": {"datasetVersion": "9001"}, "dataQuality": {"rowCount": 12}}
    second = read_line(json.dumps(later).encode())
    changed = typical()
    changed["outputs"][0]["facets"]["columnLineage"]["fields"]["x"]["inputFields"][0]["field"] = "phone"
    third = read_line(json.dumps(changed).encode())
    assert first is not None and second is not None and third is not None
    keys = [found[1].lineage_key for found in (first, second, third) if found[1] is not None]
    assert keys[0] == keys[1] != keys[2]
    assert shape_rows(to_run_event(typical())) != shape_rows(to_run_event(changed))  # type: ignore[arg-type]


HOSTILE = {
    # orjson refuses these: none may be read by its parts
    "a number no double holds, in a facet": b'"dataQuality": {"rowCount": 1e400}',
    "a number no double holds, in a schema": b'"schema": {"fields": [{"name": "x", "size": -1E+999}]}',
    "a 400-digit number": b'"dataQuality": {"rowCount": 1' + b"0" * 400 + b"}",
    "invalid UTF-8 in a facet": b'"dataQuality": {"note": "\xff\xfe"}',
    "a lone surrogate": b'"dataQuality": {"note": "\\ud800"}',
    "nested past orjson's depth": b'"dataQuality": ' + b"[" * 1100 + b"]" * 1100,
    # orjson reads these, some otherwise than a skipping decoder would
    "a NUL": b'"dataQuality": {"note": "a\\u0000b"}',
    "an escaped key": b'"eventTyp\\u0065": "START"',
    "a number of 300 digits": b'"dataQuality": {"rowCount": 1' + b"0" * 300 + b"}",
    "an exponent": b'"dataQuality": {"rowCount": 1.5e3}',
    "UTF-8": '"dataQuality": {"note": "Zoë"}'.encode(),
    "deep, within orjson's depth": b'"dataQuality": ' + b"[" * 300 + b"]" * 300,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_line_orjson_refuses_or_reads_otherwise_is_never_read_differently(name):
    plain = typical()
    plain["run"]["runId"] = "run-a"  # no `3e5` in it, which has the line checked by orjson whatever else it holds
    line = json.dumps(plain).encode()
    spliced = line[:-1] + b", " + HOSTILE[name] + b"}"
    assert_read_as_whole(spliced)
    try:
        orjson.loads(spliced)
    except orjson.JSONDecodeError:
        assert read_line(spliced) is None


@pytest.mark.parametrize(
    "change",
    [
        {"run": {"runId": "r", "facets": {"airflow": {"taskInstance": {"try_number": 2**70}}}}},
        {"run": {"runId": "r", "facets": {"airflow": {"taskInstance": {"try_number": True}}}}},
        {"run": {"runId": "r", "facets": {"airflow": {"taskInstance": {"try_number": 1.0}}}}},
        {"run": {"runId": "r", "facets": {"extractionError": []}}},
        {"run": {"runId": "r", "facets": {"extractionError": {}}}},
        {"run": {"runId": "r", "facets": None}},
        {"run": {"runId": ""}},
        {"job": {"name": "dag.job", "namespace": None}},
        {"inputs": None, "outputs": {}},
        {"inputs": ["crm.people", {"name": 3}]},
        {"inputs": [{"name": "crm.people", "namespace": 7, "facets": None}]},
        {"inputs": [{"name": "crm.people", "facets": {"version": {"datasetVersion": 7801}}}]},
        {"inputs": [{"name": "not a table", "facets": {"version": None, "schema": None}}]},
        {"eventType": "UNKNOWN"},
        {"eventTime": "yesterday"},
    ],
)
def test_parts_of_an_unexpected_shape_read_as_parsed_whole(change):
    assert_read_as_whole(json.dumps(typical(**change)).encode())


def test_a_key_repeated_in_an_object_is_read_as_orjson_reads_it():
    line = json.dumps(typical()).encode()
    for repeated in (b'"run": 5', b'"run": {"runId": "other"}', b'"inputs": null', b'"eventType": "FAIL"'):
        assert_read_as_whole(line[:-1] + b", " + repeated + b"}")
        assert_read_as_whole(b"{" + repeated + b", " + line[1:])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, JSON)


DATASET = st.fixed_dictionaries(
    {"name": maybe(st.sampled_from(["crm.people", "out.t", "no table"]))},
    optional={
        "namespace": maybe(st.sampled_from(["iceberg://a", "iceberg://b"])),
        "facets": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "version": maybe(st.fixed_dictionaries({"datasetVersion": maybe(st.sampled_from(["1", "2"]))})),
                    "schema": JSON,
                    "columnLineage": JSON,
                    "other": JSON,
                },
            )
        ),
    },
)
EVENT = st.fixed_dictionaries(
    {
        "eventType": maybe(st.sampled_from(["COMPLETE", "START", "FAIL"])),
        "eventTime": maybe(st.sampled_from(["2026-10-01T02:00:00Z", "2026-10-01T02:00:00.5+02:00", ""])),
        "run": maybe(
            st.fixed_dictionaries(
                {"runId": maybe(st.sampled_from(["0199-3e50-e1", "r2"]))},
                optional={
                    "facets": maybe(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "airflow": maybe(
                                    st.fixed_dictionaries(
                                        {},
                                        optional={
                                            "dagRun": maybe(st.fixed_dictionaries({"run_id": maybe(st.just("d"))})),
                                            "taskInstance": maybe(
                                                st.fixed_dictionaries({"try_number": maybe(st.integers())})
                                            ),
                                        },
                                    )
                                ),
                                "extractionError": JSON,
                            },
                        )
                    )
                },
            )
        ),
        "job": maybe(
            st.fixed_dictionaries(
                {"name": maybe(st.just("dag.job"))},
                optional={
                    "namespace": maybe(st.just("platform")),
                    "facets": maybe(st.fixed_dictionaries({"sql": maybe(st.fixed_dictionaries({"query": JSON}))})),
                },
            )
        ),
    },
    optional={"inputs": maybe(st.lists(maybe(DATASET), max_size=3)), "outputs": maybe(st.lists(DATASET, max_size=3))},
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EVENT)
def test_any_event_read_by_its_parts_reads_as_parsed_whole(raw):
    for line in (json.dumps(raw).encode(), json.dumps(raw, ensure_ascii=False).encode(), json.dumps(raw, indent=1)):
        assert_read_as_whole(line if isinstance(line, bytes) else line.encode())


def test_a_line_nested_past_orjsons_depth_is_parsed_whole_however_deep_python_may_recurse():
    plain = typical()
    plain["run"]["runId"] = "run-a"
    line = json.dumps(plain).encode()[:-1] + b', "dataQuality": ' + b"[" * 1100 + b"]" * 1100 + b"}"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        assert read_line(line) is None
    finally:
        sys.setrecursionlimit(limit)
