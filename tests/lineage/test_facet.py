"""The facet as an OpenLineage consumer reads it: validated against the official facet schema in
../shared/openlineage-spec, through tests/support/openlineage_spec.py (the schema its `_schemaURL` names)."""

from __future__ import annotations

import json

from openlineage.client.serde import Serde

from airflow_lineage_governance.lineage.facet import column_lineage_facet
from learning_platform.pipelines import pipeline_sql
from tests.support.lineage import read
from tests.support.openlineage_spec import conformance


def facet_json(sql: str, schema: dict) -> dict:
    return json.loads(Serde.to_json(column_lineage_facet(read(sql, schema), "iceberg://platform")))


def validate(facet: dict) -> None:
    """Asserts the facet conforms to the schema its `_schemaURL` names, inside a conforming run event."""
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-10-01T02:00:00Z",
        "producer": "tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "01999a2e-0000-7000-8000-000000000001"},
        "job": {"namespace": "platform", "name": "t"},
        "outputs": [{"namespace": "iceberg://platform", "name": "out.t", "facets": {"columnLineage": facet}}],
    }
    found = conformance([event])
    assert found.errors == []
    assert found.validated["columnLineage"].endswith("ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet")
    assert found.version_fallbacks == {}  # validated against the very version the facet names


def test_facet_validates_and_carries_transformations_and_dataset(schema):
    data = facet_json(pipeline_sql("course_performance"), schema)
    validate(data)
    completions = data["fields"]["completions"]
    by_field = {f["field"]: f for f in completions["inputFields"]}
    assert by_field["completed_at"]["namespace"] == "iceberg://platform"
    assert by_field["completed_at"]["name"] == "learning.enrollments"
    assert by_field["completed_at"]["transformations"] == [
        {"type": "INDIRECT", "subtype": "FILTER", "description": "FILTER (WHERE …) of COUNT", "masking": False}
    ]
    assert by_field["enrollment_id"]["transformations"][0]["subtype"] == "AGGREGATION"
    # A DIRECT AGGREGATION and an INDIRECT FILTER input: one label would mislabel one of them.
    assert completions["transformationType"] == ""
    dataset = {(d["name"], d["field"]): [t["subtype"] for t in d["transformations"]] for d in data["dataset"]}
    assert dataset[("learning.courses", "category")] == ["GROUP_BY"]
    assert all(t["type"] == "INDIRECT" for d in data["dataset"] for t in d["transformations"])


def test_masked_columns_and_deprecated_type(schema):
    data = facet_json("create table out.t as select md5(l.email) as h, l.country from crm.learners l", schema)
    validate(data)
    assert data["fields"]["h"]["transformationType"] == "MASKED"
    assert data["fields"]["h"]["inputFields"][0]["transformations"][0]["masking"] is True
    assert data["fields"]["country"]["transformationType"] == "IDENTITY"


def test_the_deprecated_type_is_set_only_where_it_cannot_mislead(schema):
    data = facet_json(
        "create table out.t as select l.country, upper(l.country) || l.email as mixed, "
        "md5(l.email) || md5(l.full_name) as hashed, md5(l.email) || l.country as half, "
        "l.country || cast(count(l.email) as varchar) as differ, "
        "count(*) as n, max(l.email) as top from crm.learners l where l.marketing_consent "
        "group by l.country, l.email, l.full_name",
        schema,
    )
    validate(data)
    types = {name: entry["transformationType"] for name, entry in data["fields"].items()}
    assert types == {
        "country": "IDENTITY",
        "mixed": "TRANSFORMATION",
        "hashed": "MASKED",
        "half": "TRANSFORMATION",
        "differ": "",
        "n": "",
        "top": "AGGREGATION",
    }
    transformations = {f["field"]: f["transformations"] for f in data["fields"]["half"]["inputFields"]}
    assert {k: [(t["type"], t["subtype"], t["masking"]) for t in v] for k, v in transformations.items()} == {
        "country": [("DIRECT", "TRANSFORMATION", False)],
        "email": [("DIRECT", "TRANSFORMATION", True)],
    }


def test_columns_without_sources_are_present_with_empty_inputs(schema):
    data = facet_json("create table out.t as select count(*) as n from crm.learners l", schema)
    validate(data)
    assert data["fields"]["n"]["inputFields"] == []
