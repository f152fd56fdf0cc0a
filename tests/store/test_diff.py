"""The runtime lineage the design diff reads, from the store on both engines, against the networkx reference on the
repo's test histories: the same jobs, edges, tables and evidence at every time, and the differences from a design
written out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from airflow_lineage_governance.cli.design import diff_lines
from airflow_lineage_governance.graph.diff import design_diff
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory
from tests.store.test_queries import changed_history
from tests.support.design import CHANGED, OFFERS, design_of, run_event
from tests.support.events import complete, output, write
from tests.support.history import run

TIMES = [None, datetime(2026, 9, 30, tzinfo=UTC), *(datetime(2026, 10, d, 12, tzinfo=UTC) for d in (1, 2, 3))]


@pytest.fixture
def stored(store_location, tmp_path):
    def load(events: list[dict]) -> LineageStore:
        store = LineageStore.open(store_location, create=True)
        store.ingest(FileEventSource(write(tmp_path / "store.jsonl", events)), batch_size=2)
        return store

    return load


def test_each_jobs_runtime_lineage_as_of_a_time_equals_the_references(stored):
    events = changed_history()
    reference = ReferenceHistory(events)
    with stored(events) as store:
        compared = 0
        for at in TIMES:
            found = store.observed_jobs(at)
            chosen = {job: event for (_, job), event in reference.chosen(at).items()}
            assert set(found) == set(chosen), at
            for job, (edges, dataset_edges, run_id) in reference.observed(at).items():
                seen, event = found[job], chosen[job]
                assert {(e.source, e.target, str(e.type), str(e.subtype)) for e in seen.edges} == edges
                assert {(e.source, e.target) for e in seen.dataset_edges} == dataset_edges
                assert (seen.run_id, seen.event_time, seen.dag_run_id, seen.try_number) == (
                    run_id,
                    event.event_time,
                    event.dag_run_id,
                    event.try_number,
                )
                compared += 1
        assert compared > 8
        assert [(j.job, j.run_id) for j in store.observed_jobs(TIMES[3]).values()] == [
            ("dag.a", "r2"),
            ("dag.c", "c2"),
        ]


THEN = [
    "Design against runtime as of then: 4 differences over 2 designed tasks",
    "Designed, not observed:",
    "  p.other: no COMPLETE event of p.other as of then: a branch not taken, or a collection gap",
    "    crm.learners -> marketing.other",
    "    crm.learners.email -> marketing.other.email (DIRECT IDENTITY)",
    "    crm.learners.learner_id -> marketing.other.learner_id (DIRECT IDENTITY)",
    "  table marketing.other: designed in p.other, but no run observed reads or writes it",
    "Observed, not designed:",
    "  adhoc.copy: no task of the DAGs folder is adhoc.copy: drift, a manual run, or a task since removed",
    "    crm.learners -> marketing.copy",
    "    crm.learners.email -> marketing.copy.email (DIRECT IDENTITY)",
    "    crm.learners.learner_id -> marketing.copy.learner_id (DIRECT IDENTITY)",
    "  table marketing.copy: read or written by adhoc.copy, but no designed task reads or writes it",
]

NOW = [
    "Design against runtime as of now: 7 differences over 2 designed tasks",
    "SQL hash mismatches (the deployed SQL is not what ran):",
    "  p.offers: the deployed SQL is 294a19885f76, but run r2 (2026-10-02T02:00:00Z) ran 489c4bccfa26",
    "Designed, not observed:",
    "  p.offers: run r2 ran other SQL than the deployed SQL",
    "    crm.learners.country -> marketing.offers (INDIRECT FILTER)",
    "    crm.learners.marketing_consent -> marketing.offers (INDIRECT FILTER)",
    "    crm.learners.country -> marketing.offers.country (DIRECT IDENTITY)",
    "  p.other: no COMPLETE event of p.other as of now: a branch not taken, or a collection gap",
    "    crm.learners -> marketing.other",
    "    crm.learners.email -> marketing.other.email (DIRECT IDENTITY)",
    "    crm.learners.learner_id -> marketing.other.learner_id (DIRECT IDENTITY)",
    "  table marketing.other: designed in p.other, but no run observed reads or writes it",
    "Observed, not designed:",
    "  adhoc.copy: no task of the DAGs folder is adhoc.copy: drift, a manual run, or a task since removed",
    "    crm.learners -> marketing.copy",
    "    crm.learners.email -> marketing.copy.email (DIRECT IDENTITY)",
    "    crm.learners.learner_id -> marketing.copy.learner_id (DIRECT IDENTITY)",
    "  p.offers: run r2 ran other SQL than the deployed SQL",
    "    crm.learners.email -> marketing.offers.email (DIRECT IDENTITY)",
    "  table marketing.copy: read or written by adhoc.copy, but no designed task reads or writes it",
]


def test_the_design_diff_over_the_store_finds_each_difference(stored):
    events = [
        run_event("p.offers", OFFERS, "2026-10-01T02:00:00Z", "r1"),
        run_event("p.offers", CHANGED, "2026-10-02T02:00:00Z", "r2"),
        run_event("adhoc.copy", CHANGED.replace("marketing.offers", "marketing.copy"), "2026-10-01T03:00:00Z", "r3"),
    ]
    design = design_of(offers=OFFERS, other=CHANGED.replace("marketing.offers", "marketing.other"))
    with stored(events) as store:
        for at, label, expected in ((datetime(2026, 10, 1, 12, tzinfo=UTC), "then", THEN), (None, "now", NOW)):
            assert diff_lines(design_diff(design, store.observed_jobs(at), label)) == expected
        now = design_diff(design, store.observed_jobs(), "now")
        assert [m.run_id for m in now.sql_mismatches] == ["r2"] and now.count == 7


def test_a_store_grown_after_the_runtime_lineage_was_read_names_its_new_tables(store_location, tmp_path):
    first = [_reading("dag.a", "a1", "src.s", "out.t", day=1)]
    later = [_reading("dag.a", "a2", "src.new", "out.t", day=2), _reading("dag.b", "b1", "out.t", "out.v", day=2)]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "first.jsonl", first)))
        assert {job: sorted(map(str, o.tables)) for job, o in store.observed_jobs().items()} == {
            "dag.a": ["out.t", "src.s"]
        }
        store.ingest(FileEventSource(write(tmp_path / "later.jsonl", later)))  # two tables the first answer never met
        found = store.observed_jobs()
        assert {job: sorted(map(str, o.tables)) for job, o in found.items()} == {
            "dag.a": ["out.t", "src.new"],
            "dag.b": ["out.t", "out.v"],
        }
        assert {(str(e.source), str(e.target)) for e in found["dag.b"].dataset_edges} == {("out.t", "out.v")}


def test_a_store_grown_after_its_columns_were_read_names_the_new_columns_of_the_runtime_lineage(
    store_location, tmp_path
):
    first = [run("dag.a", output("out.t", {"x": ["crm.learners.email"]}), day=1, run="r1")]
    later = [  # columns the first answers never met: of a table met, and of a new table
        run("dag.a", output("out.t", {"x": ["crm.learners.full_name"], "y": ["crm.learners.email"]}), day=2, run="r2"),
        run("dag.b", output("out.u", {"z": ["out.t.y"]}, ["out.t.x"]), day=2, run="b2"),
    ]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "first.jsonl", first)))
        store.edges_as_of()  # the store's columns read and kept
        assert {(str(e.source), str(e.target)) for e in store.observed_jobs()["dag.a"].edges} == {
            ("crm.learners.email", "out.t.x")
        }
        store.ingest(FileEventSource(write(tmp_path / "later.jsonl", later)))
        found = store.observed_jobs()
        assert {job: sorted((str(e.source), str(e.target), e.type) for e in o.edges) for job, o in found.items()} == {
            "dag.a": [("crm.learners.email", "out.t.y", "DIRECT"), ("crm.learners.full_name", "out.t.x", "DIRECT")],
            "dag.b": [("out.t.x", "out.u", "INDIRECT"), ("out.t.y", "out.u.z", "DIRECT")],
        }


def _reading(job: str, run: str, read: str, written: str, *, day: int) -> dict:
    """Return the COMPLETE of a run of `job` that read one table and wrote another (no column lineage)."""
    return complete(
        job,
        {"namespace": "warehouse", "name": written},
        run=run,
        time=f"2026-10-0{day}T02:00:00Z",
        inputs=[{"namespace": "warehouse", "name": read}],
    )
