"""The facet as an OpenLineage consumer reads it: validated against the published facet schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from openlineage.client.serde import Serde

from learning_platform.pipelines import pipeline_sql
from tests.lineage.conftest import read

SCHEMA = json.loads((Path(__file__).parents[1] / "resources" / "ColumnLineageDatasetFacet-1-2-0.json").read_text())


def facet_json(sql: str, schema: dict) -> dict:
    return json.loads(Serde.to_json(read(sql, schema).facet("iceberg://platform")))


def test_facet_validates_and_carries_transformations_and_dataset(schema):
    data = facet_json(pipeline_sql("course_performance"), schema)
    jsonschema.validate(data, SCHEMA)
    completions = data["fields"]["completions"]
    by_field = {f["field"]: f for f in completions["inputFields"]}
    assert by_field["completed_at"]["namespace"] == "iceberg://platform"
    assert by_field["completed_at"]["name"] == "learning.enrollments"
    assert by_field["completed_at"]["transformations"] == [
        {"type": "INDIRECT", "subtype": "FILTER", "description": "FILTER (WHERE …) of COUNT", "masking": False}]
    assert by_field["enrollment_id"]["transformations"][0]["subtype"] == "AGGREGATION"
    assert completions["transformationType"] == "AGGREGATION"
    dataset = {(d["name"], d["field"]): [t["subtype"] for t in d["transformations"]] for d in data["dataset"]}
    assert dataset[("learning.courses", "category")] == ["GROUP_BY"]
    assert all(t["type"] == "INDIRECT" for d in data["dataset"] for t in d["transformations"])


def test_masked_columns_and_deprecated_type(schema):
    data = facet_json("create table out.t as select md5(l.email) as h, l.country from crm.learners l", schema)
    jsonschema.validate(data, SCHEMA)
    assert data["fields"]["h"]["transformationType"] == "MASKED"
    assert data["fields"]["h"]["inputFields"][0]["transformations"][0]["masking"] is True
    assert data["fields"]["country"]["transformationType"] == "IDENTITY"


def test_columns_without_sources_are_present_with_empty_inputs(schema):
    data = facet_json("create table out.t as select count(*) as n from crm.learners l", schema)
    jsonschema.validate(data, SCHEMA)
    assert data["fields"]["n"]["inputFields"] == []
