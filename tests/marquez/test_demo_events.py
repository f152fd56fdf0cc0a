"""The events of a fresh demo run hold one type per field (tests/support/field_types.py): each output is named with the
same typed fields in START and COMPLETE, and every input carries its typed schema."""

from __future__ import annotations

import pytest

from tests.marquez.conftest import DemoRun
from tests.support.field_types import field_type_problems

pytestmark = pytest.mark.integration


def test_the_demo_events_hold_one_type_per_field(demo_run: DemoRun):
    assert field_type_problems(demo_run.events, "the demo's events") == []


def test_start_and_complete_name_each_dataset_alike(demo_run: DemoRun):
    by_run: dict[str, dict[str, dict[str, list[tuple[str, str]]]]] = {}
    for event in demo_run.events:
        for side in ("inputs", "outputs"):
            for dataset in event.get(side) or []:
                fields = [(f["name"], f["type"]) for f in dataset["facets"]["schema"]["fields"]]
                assert all(kind for _, kind in fields), (event["job"]["name"], dataset["name"])
                by_run.setdefault(event["run"]["runId"], {}).setdefault(f"{side}:{dataset['name']}", {})[
                    event["eventType"]
                ] = fields
    assert len(by_run) == 8
    for datasets in by_run.values():
        for shown in datasets.values():
            assert set(shown) == {"START", "COMPLETE"} and shown["START"] == shown["COMPLETE"]
