"""The runtime lineage the design diff reads, from the store on both engines, against the in-memory history's
(graph/diff.py) on the repo's test histories: the same jobs, edges, tables and evidence at every time, and the
same differences from a design."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from airflow_lineage_governance.graph.diff import design_diff, observed_jobs
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.store.test_queries import changed_history, in_memory
from tests.support.design import CHANGED, OFFERS, design_of, history_of, run_event
from tests.support.events import write

TIMES = [None, datetime(2026, 9, 30, tzinfo=UTC), *(datetime(2026, 10, d, 12, tzinfo=UTC) for d in (1, 2, 3))]


@pytest.fixture
def stored(store_location, tmp_path):
    def load(events: list[dict]) -> LineageStore:
        store = LineageStore.open(store_location, create=True)
        store.ingest(FileEventSource(write(tmp_path / "store.jsonl", events)), batch_size=2)
        return store

    return load


def test_each_jobs_runtime_lineage_as_of_a_time_equals_the_in_memory_history(stored, tmp_path):
    events = changed_history()
    history = in_memory(tmp_path, events)
    with stored(events) as store:
        compared = 0
        for at in TIMES:
            expected, found = observed_jobs(history, at), store.observed_jobs(at)
            assert found == expected, at
            compared += len(found)
        assert compared > 8


def test_the_design_diff_over_the_store_is_the_in_memory_one(stored):
    events = [
        run_event("p.offers", OFFERS, "2026-10-01T02:00:00Z", "r1"),
        run_event("p.offers", CHANGED, "2026-10-02T02:00:00Z", "r2"),
        run_event("adhoc.copy", CHANGED.replace("marketing.offers", "marketing.copy"), "2026-10-01T03:00:00Z", "r3"),
    ]
    history = history_of(*events)
    design = design_of(offers=OFFERS, other=CHANGED.replace("marketing.offers", "marketing.other"))
    with stored(events) as store:
        for at, label in ((datetime(2026, 10, 1, 12, tzinfo=UTC), "then"), (None, "now")):
            expected = design_diff(design, observed_jobs(history, at), label).to_dict()
            assert design_diff(design, store.observed_jobs(at), label).to_dict() == expected
        now = design_diff(design, store.observed_jobs(), "now")
        assert [m.run_id for m in now.sql_mismatches] == ["r2"] and now.count > 2
