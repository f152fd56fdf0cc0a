"""Lineage with time in the store, on both engines: every COMPLETE kept with its evidence and its lineage shape, the
graph as of a time, stale and retired edges, cycles, declared lineage, tracing by snapshot, and the same lineage
stated by other SQL (or other lineage by the same SQL); each asked of a history whose events arrive out of order."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.build import build_graph
from airflow_lineage_governance.graph.events import FileEventSource, read_events
from airflow_lineage_governance.graph.records import sql_hash
from airflow_lineage_governance.kinds import Confidence
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.errors import SnapshotNotInStoreError
from airflow_lineage_governance.store.graph_as_of import lineage_graph
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.support.events import NS, output, write
from tests.support.history import run

C = ColumnRef.parse
T = TableRef.parse
DAY_2 = datetime(2026, 10, 2, 12, tzinfo=UTC)

DECLARED = """
[[declared]]
job = "dag.export"
owner = "marketing"
reason = "no events"
inputs = ["out.u"]
outputs = ["export.list"]
columns = { "export.list.y" = ["out.u.y"] }
"""


def changed() -> list[dict]:
    """dag.a read crm.learners.email on days 1 and 2, then crm.learners.full_name from day 3 (sent first)."""
    return [
        run(
            "dag.a",
            output("out.t", {"x": ["crm.learners.full_name"]}),
            day=3,
            run="r3",
            reads=[("crm.learners", "s3")],
            sql="SELECT full_name AS x FROM crm.learners",
            try_number=2,
        ),
        run(
            "dag.a",
            output("out.t", {"x": ["crm.learners.email"]}),
            day=1,
            run="r1",
            reads=[("crm.learners", "s1")],
            sql="select email as x from crm.learners",
        ),
        run(
            "dag.a",
            output("out.t", {"x": ["crm.learners.email"]}),
            day=2,
            run="r2",
            reads=[("crm.learners", "s2")],
            sql="SELECT  email AS x\nFROM crm.learners",
        ),
        run("dag.b", output("out.u", {"y": ["out.t.x"]}), day=3, run="b3", reads=[("out.t", "r3-out")]),
    ]


@pytest.fixture
def governed(store_location, tmp_path):
    """Returns a function that stores the events and opens the governance over them (metadata.toml `metadata`)."""

    def load(events: list[dict], metadata: str = "") -> StoredGovernance:
        with LineageStore.open(store_location, create=True) as store:
            store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=2)
        (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
        (tmp_path / "metadata.toml").write_text(metadata)
        return StoredGovernance.open(
            store_location, rules_path=tmp_path / "lineage.toml", metadata_path=tmp_path / "metadata.toml"
        )

    return load


def completes(governance: StoredGovernance, job: str) -> list[tuple]:
    """Returns the job's COMPLETEs in time order: run id, try, shape and SQL hash."""
    return governance.store.engine.query(
        "SELECT c.run_id, c.try_number, c.shape_id, c.sql_hash FROM completes c JOIN jobs j ON j.job_id = c.job_id "
        "WHERE j.name = ? ORDER BY c.at_us",
        [job],
    )


def test_every_complete_is_kept_in_time_order_and_same_lineage_shares_one_shape(governed):
    with governed(changed()) as governance:
        (r1, try1, shape1, hash1), (r2, _, shape2, hash2), (r3, try3, shape3, hash3) = completes(governance, "dag.a")
        assert (r1, r2, r3) == ("r1", "r2", "r3") and (try1, try3) == (1, 2)
        assert shape1 == shape2 != shape3
        assert hash1 == hash2 != hash3  # whitespace and case do not change the hash
        assert hash3 == sql_hash("SELECT full_name AS x FROM crm.learners")
        assert sql_hash("select 'A'") != sql_hash("select 'a'")  # a quoted literal keeps its case
        origin = governance.trace("out.t@r3-out")
        assert origin.run is not None and origin.run.try_number == 2
        assert [(str(o.table), o.snapshot) for o in origin.inputs] == [("crm.learners", "s3")]


def test_the_graph_as_of_a_time_holds_each_jobs_latest_complete_then(governed):
    with governed(changed()) as governance:
        day_2 = governance.store.edges_as_of(DAY_2)
        assert {(str(e.source), str(e.target), e.run_id) for e in day_2} == {("crm.learners.email", "out.t.x", "r2")}
        assert governance.store.edges_as_of(datetime(2026, 9, 30, tzinfo=UTC)) == []
        now = governance.graph()
        assert {str(e.source) for e in now.edges()} == {"crm.learners.full_name", "out.t.x"}
        assert {e.run_id for e in now.edges() if e.job == "dag.a"} == {"r3"}
        assert now.outputs == {T("out.t"): "dag.a", T("out.u"): "dag.b"}


def test_the_graph_as_of_now_is_the_graph_of_the_latest_runs(governed, tmp_path):
    events = [
        run("dag.a", output("out.t", {"x": ["crm.learners.email"]}, ["crm.learners.status"]), day=1, run="r1"),
        run("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=2, run="r2"),
        run("dag.b", output("out.u", {"y": ["out.t.x"]}, schema=["y", "z"]), day=1, run="b1"),
    ]
    received, _ = read_events(FileEventSource(write(tmp_path / "read.jsonl", events)))
    built = build_graph(received, NS)
    with governed(events) as governance:
        chosen = lineage_graph(governance.store.engine)
        assert {(e.source, e.target, e.type, e.subtype, e.run_id) for e in chosen.edges()} == {
            (e.source, e.target, e.type, e.subtype, e.run_id) for e in built.edges()
        }
        assert chosen.outputs == built.outputs
        assert {t: list(c) for t, c in chosen.table_columns.items()} == {
            t: list(c) for t, c in built.table_columns.items()
        }


def test_a_column_only_superseded_runs_mention_reaches_nothing_and_lists_its_old_edges_stale(governed):
    with governed(changed()) as governance:
        impact = governance.impact("crm.learners.email")
        assert impact.columns_reached == []
        assert [(str(e.edge.target), e.record.event.run_id, e.stale) for e in impact.retired if e.record] == [
            ("out.t.x", "r2", True)
        ]
        then = governance.impact("crm.learners.email", DAY_2)
        assert then.columns_reached == [C("out.t.x")] and then.retired == []
        assert then.as_of == "2026-10-02T12:00:00+00:00"


def test_each_reached_column_has_the_evidence_of_every_hop_and_its_last_write(governed):
    with governed(changed()) as governance:
        impact = governance.impact("crm.learners.full_name")
        reached = impact.reached[C("out.u.y")]
        assert reached.confidence is Confidence.OBSERVED and not reached.stale
        first, second = (h.to_dict() for h in reached.hops)
        assert (first["run_id"], first["try"], first["input_snapshot"], first["output_snapshot"]) == (
            "r3",
            2,
            "s3",
            "r3-out",
        )
        assert first["sql_hash"] == sql_hash("SELECT full_name AS x FROM crm.learners")
        assert first["source_kind"] == "observed"
        assert (second["run_id"], second["input_snapshot"], second["output_snapshot"]) == ("b3", "r3-out", "b3-out")
        as_dict = impact.to_dict()["reached"]["out.u.y"]
        assert as_dict["confidence"] == "observed" and as_dict["last_written_by"]["run_id"] == "b3"


def test_edges_of_runs_older_than_the_window_are_stale_not_dropped(governed):
    day_5 = datetime(2026, 10, 5, tzinfo=UTC)
    with governed(changed()) as governance:
        impact = governance.impact("crm.learners.full_name", day_5, timedelta(days=1))
        assert impact.columns_reached == [C("out.t.x"), C("out.u.y")]
        assert all(r.stale for r in impact.reached.values())
        fresh = governance.impact("crm.learners.full_name", day_5, timedelta(days=7))
        assert not any(r.stale for r in fresh.reached.values())
        assert governance.stale_jobs(day_5, timedelta(days=1)) == ["dag.a", "dag.b"]


def test_a_column_on_a_cycle_reaches_itself(governed):
    events = [
        run("dag.inc", output("out.totals", {"total": ["out.totals.total", "crm.orders.amount"]}), day=1, run="i1")
    ]
    with governed(events) as governance:
        impact = governance.impact("out.totals.total")
        assert impact.reaches_itself and impact.columns_reached == [C("out.totals.total")]
        assert [str(e.source) for e in impact.paths[C("out.totals.total")]] == ["out.totals.total"]
        assert governance.provenance("out.totals.total").reaches_itself
        assert not governance.impact("crm.orders.amount").reaches_itself


def test_declared_lineage_is_walked_with_its_confidence(governed):
    with governed(changed(), DECLARED) as governance:
        impact = governance.impact("crm.learners.full_name")
        reached = impact.reached[C("export.list.y")]
        assert reached.confidence is Confidence.DECLARED
        assert reached.hops[-1].to_dict()["owner"] == "marketing"
        assert impact.reached[C("out.u.y")].confidence is Confidence.OBSERVED
        assert T("export.list") not in governance.graph().outputs  # a declaration accounts for no table
        assert T("export.list") not in governance.store.written_tables()
        assert governance.declared_jobs()["dag.export"].note == "declared by marketing: no events"


def test_trace_back_and_forward_by_snapshot(governed):
    with governed(changed(), '[tables."out.t"]\nowner = "team"\ntier = 1\n') as governance:
        origin = governance.trace("out.u@b3-out")
        assert origin.run is not None and origin.run.run_id == "b3"
        (t_origin,) = origin.inputs
        assert (str(t_origin.table), t_origin.snapshot, t_origin.run and t_origin.run.run_id) == (
            "out.t",
            "r3-out",
            "r3",
        )
        assert [(str(o.table), o.snapshot, o.run) for o in t_origin.inputs] == [("crm.learners", "s3", None)]
        forward = governance.trace("crm.learners@s3", forward=True)
        assert [(str(c.table), c.snapshot, c.owner) for c in forward] == [
            ("out.t", "r3-out", "team"),
            ("out.u", "b3-out", None),
        ]
        assert governance.trace("crm.learners@s1", forward=True)[0].snapshot == "r1-out"
        with pytest.raises(SnapshotNotInStoreError, match="out.u@nope: no received COMPLETE"):
            governance.trace("out.u@nope")
        with pytest.raises(SnapshotNotInStoreError, match="^out.u: name a snapshot as namespace.table@SNAPSHOT_ID"):
            governance.trace("out.u")


def test_the_same_sql_stating_other_lineage_is_another_shape(governed):
    first = run("dag.a", output("out.t", {"x": ["crm.learners.email"]}), day=1, run="r1", sql="SELECT x")
    second = run("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=2, run="r2", sql="SELECT x")
    with governed([first, second]) as governance:
        (_, _, shape1, hash1), (_, _, shape2, hash2) = completes(governance, "dag.a")
        assert shape1 != shape2 and hash1 == hash2
        assert {str(e.source) for e in governance.graph().edges()} == {"crm.learners.full_name"}


def test_events_read_from_a_source_into_a_store_in_memory_answer_as_the_store(governed, tmp_path):
    events = changed()
    source = write(tmp_path / "source.jsonl", [*events, events[1], {"eventType": "COMPLETE"}])
    with open(source, "ab") as handle:
        handle.write(b"not json\n")
    with governed(events) as stored:
        read = StoredGovernance.from_events(source, rules_path=tmp_path / "lineage.toml")
        with read:
            assert read.impact("crm.learners.full_name").to_json() == stored.impact("crm.learners.full_name").to_json()
            assert read.trace("out.u@b3-out").lines() == stored.trace("out.u@b3-out").lines()
            report = read.report()
            assert (report.events, report.duplicates, report.wrong_shape, report.malformed) == (4, 1, 1, 1)
            assert report.source == str(source)
    other = StoredGovernance.from_events(source, job_namespaces=["elsewhere"])
    with other:
        assert (other.report().events, other.report().other_namespace) == (0, 4 + 1)
        assert other.graph().edges() == []


LINEAGE = ("outputs", 0, "facets", "columnLineage")
LINEAGE_CHANGES = {
    "input field": ((*LINEAGE, "fields", "x", "inputFields", 0, "field"), "p2"),
    "input field table": ((*LINEAGE, "fields", "x", "inputFields", 1, "name"), "src.c"),
    "subtype": ((*LINEAGE, "fields", "x", "inputFields", 0, "transformations", 0, "subtype"), "TRANSFORMATION"),
    "masking": ((*LINEAGE, "fields", "x", "inputFields", 0, "transformations", 0, "masking"), True),
    "row source": ((*LINEAGE, "dataset", 0, "field"), "s"),
    "output name": (("outputs", 0, "name"), "out.u"),
    "lineage null": (LINEAGE, None),
}
SAME_LINEAGE = {
    "sql": (("job", "facets", "sql", "query"), "INSERT INTO out.t SELECT q FROM src.a JOIN src.b"),
    "no sql": (("job", "facets"), {}),
    "output schema type": (("outputs", 0, "facets", "schema", "fields", 0, "type"), "long"),
    "run facets": (("run", "facets"), {"airflow": {"taskInstance": {"try_number": 2}}}),
    "statistics": (("outputs", 0, "facets", "outputStatistics"), {"rowCount": 7}),
}


def shaped() -> dict:
    """Returns a COMPLETE of dag.a that reads two tables and writes out.t, with schema, lineage and SQL."""
    event = run("dag.a", output("out.t", {"x": ["src.a.p", "src.b.q"]}, ["src.a.r"], schema=["x"]), day=1, run="r")
    event["job"]["facets"] = {"sql": {"query": "INSERT INTO out.t SELECT p FROM src.a JOIN src.b"}}
    return event


def changed_by(path: tuple, value: object) -> dict:
    event = shaped()
    part = event
    for step in path[:-1]:
        part = part[step]
    part[path[-1]] = value
    return event


def on_days(*events: dict) -> list[dict]:
    made = [copy.deepcopy(event) for event in events]
    for day, event in enumerate(made, start=1):
        event["eventTime"], event["run"]["runId"] = f"2026-10-{day:02d}T02:00:00Z", f"r{day}"
    return made


@pytest.mark.parametrize("name", sorted({**LINEAGE_CHANGES, **SAME_LINEAGE}))
def test_runs_share_a_shape_exactly_when_they_state_equal_lineage(governed, name):
    other = changed_by(*{**LINEAGE_CHANGES, **SAME_LINEAGE}[name])
    with governed(on_days(shaped(), shaped(), other, other, shaped())) as governance:
        shapes = [shape for _, _, shape, _ in completes(governance, "dag.a")]
        numbered = [sorted(set(shapes), key=shapes.index).index(s) for s in shapes]
        assert numbered == ([0, 0, 1, 1, 0] if name in LINEAGE_CHANGES else [0, 0, 0, 0, 0])
