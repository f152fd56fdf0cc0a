"""The conformance checker itself: it finds what is wrong, and our own facets' schemas hold for what we emit."""

from __future__ import annotations

import copy
import json

from openlineage.client.serde import Serde

from airflow_lineage_governance.lineage.facet import LineageTruncationRunFacet
from tests.support.openlineage_spec import SPEC, conformance

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-10-01T02:00:46.541480+00:00",
    "producer": "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "01999a2e-0000-7000-8000-000000000001", "facets": {}},
    "job": {"namespace": "platform", "name": "platform_nightly.marketing_audience", "facets": {}},
    "inputs": [],
    "outputs": [
        {
            "namespace": "iceberg://platform",
            "name": "marketing.audience",
            "facets": {
                "columnLineage": {
                    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/"
                    "ColumnLineageDatasetFacet",
                    "fields": {
                        "email": {
                            "inputFields": [
                                {
                                    "namespace": "iceberg://platform",
                                    "name": "crm.learners",
                                    "field": "email",
                                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                                }
                            ]
                        }
                    },
                }
            },
        }
    ],
}


def test_the_spec_is_read_from_shared():
    assert (SPEC / "OpenLineage.json").is_file()


def test_a_conforming_event_passes_and_a_broken_one_is_named():
    assert conformance([EVENT]).errors == []
    no_time = copy.deepcopy(EVENT)
    del no_time["eventTime"]
    no_inputs = copy.deepcopy(EVENT)
    del no_inputs["outputs"][0]["facets"]["columnLineage"]["fields"]["email"]["inputFields"]
    found = conformance([no_time, no_inputs])
    assert len(found.errors) == 2
    assert "'eventTime' is a required property" in found.errors[0]
    assert "columnLineage" in found.errors[1] and "'inputFields' is a required property" in found.errors[1]


def test_our_truncation_facet_conforms_to_its_schema_and_wrong_values_fail():
    facet = json.loads(Serde.to_json(LineageTruncationRunFacet(edges=9, kept=3, limit=3, target="analytics.x")))
    event = copy.deepcopy(EVENT)
    event["run"]["facets"]["lineageTruncation"] = facet
    found = conformance([event])
    assert found.errors == []
    assert found.validated["lineageTruncation"].endswith(
        "LineageTruncationRunFacet.json#/$defs/LineageTruncationRunFacet"
    )
    facet["kept"] = "three"
    assert len(conformance([event]).errors) == 1
