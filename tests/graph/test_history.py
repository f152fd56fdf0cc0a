"""Lineage with time: every COMPLETE kept with its evidence, the graph as of a time, stale and retired edges,
cycles, declared lineage, tracing by snapshot, and the store read incrementally."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.cli.common import parse_duration
from airflow_lineage_governance.graph.asof import AsOf
from airflow_lineage_governance.graph.build import build_graph
from airflow_lineage_governance.graph.history import graph_as_of
from airflow_lineage_governance.graph.impact import downstream, upstream
from airflow_lineage_governance.graph.records import sql_hash
from airflow_lineage_governance.graph.trace import SnapshotNotInLineageError, trace_back, trace_forward
from airflow_lineage_governance.kinds import Confidence, EdgeSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.events import NS, output
from tests.support.history import history_of, run

C = ColumnRef.parse
T = TableRef.parse


@pytest.fixture
def changed(tmp_path):
    """dag.a read crm.learners.email on days 1 and 2, then crm.learners.full_name from day 3 (out of order)."""
    return history_of(
        tmp_path,
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
    )[0]


def test_every_complete_is_kept_in_time_order_and_same_lineage_shares_one_shape(changed):
    assert [r.event.run_id for r in changed.runs["dag.a"]] == ["r1", "r2", "r3"]
    first, second, third = changed.runs["dag.a"]
    assert first.shape is second.shape and third.shape is not first.shape
    assert third.event.try_number == 2 and third.read(T("crm.learners")) == "s3" and third.wrote(T("out.t")) == "r3-out"
    assert first.sql_hash == second.sql_hash != third.sql_hash  # whitespace and case do not change the hash
    assert sql_hash("select 'A'") != sql_hash("select 'a'")  # a quoted literal keeps its case


def test_the_graph_as_of_a_time_holds_each_jobs_latest_complete_then(changed):
    day2 = graph_as_of(changed, datetime(2026, 10, 2, 12, tzinfo=UTC))
    assert {(str(e.source), str(e.target), e.run_id) for e in day2.edges()} == {("crm.learners.email", "out.t.x", "r2")}
    assert graph_as_of(changed, datetime(2026, 9, 30, tzinfo=UTC)).edges() == []
    now = graph_as_of(changed)
    assert {str(e.source) for e in now.edges()} == {"crm.learners.full_name", "out.t.x"}
    assert now.runs["dag.a"].event.run_id == "r3" and now.outputs == {T("out.t"): "dag.a", T("out.u"): "dag.b"}


def test_graph_as_of_now_is_the_graph_of_the_latest_runs(tmp_path):
    history, received = history_of(
        tmp_path,
        run("dag.a", output("out.t", {"x": ["crm.learners.email"]}, ["crm.learners.status"]), day=1, run="r1"),
        run("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=2, run="r2"),
        run("dag.b", output("out.u", {"y": ["out.t.x"]}, schema=["y", "z"]), day=1, run="b1"),
    )
    built, chosen = build_graph(received, NS), graph_as_of(history)
    assert chosen.edges() == built.edges() and chosen.outputs == built.outputs
    assert dict(chosen.table_columns) == dict(built.table_columns) and list(chosen.jobs) == list(built.jobs)


def test_a_column_only_superseded_runs_mention_reaches_nothing_and_lists_its_old_edges_stale(changed):
    impact = downstream(AsOf(changed), C("crm.learners.email"))
    assert impact.columns_reached == []
    assert [(str(e.edge.target), e.record.event.run_id, e.stale) for e in impact.retired] == [("out.t.x", "r2", True)]
    then = downstream(AsOf(changed, datetime(2026, 10, 2, 12, tzinfo=UTC)), C("crm.learners.email"))
    assert then.columns_reached == [C("out.t.x")] and then.retired == []
    assert then.as_of == "2026-10-02T12:00:00+00:00"


def test_each_reached_column_has_the_evidence_of_every_hop_and_its_last_write(changed):
    impact = downstream(AsOf(changed), C("crm.learners.full_name"))
    reached = impact.reached[C("out.u.y")]
    assert reached.confidence is Confidence.OBSERVED and not reached.stale
    first, second = (h.to_dict() for h in reached.hops)
    assert (first["run_id"], first["try"], first["input_snapshot"], first["output_snapshot"]) == (
        "r3",
        2,
        "s3",
        "r3-out",
    )
    assert first["sql_hash"] == changed.runs["dag.a"][2].sql_hash and first["source_kind"] == "observed"
    assert (second["run_id"], second["input_snapshot"], second["output_snapshot"]) == ("b3", "r3-out", "b3-out")
    assert reached.last_written_by is changed.runs["dag.b"][0]
    as_dict = impact.to_dict()["reached"]["out.u.y"]
    assert as_dict["confidence"] == "observed" and as_dict["last_written_by"]["run_id"] == "b3"


def test_edges_of_runs_older_than_the_window_are_stale_not_dropped(changed):
    day5 = datetime(2026, 10, 5, tzinfo=UTC)
    impact = downstream(AsOf(changed, day5, timedelta(days=1)), C("crm.learners.full_name"))
    assert impact.columns_reached == [C("out.t.x"), C("out.u.y")]
    assert all(r.stale for r in impact.reached.values())
    fresh = downstream(AsOf(changed, day5, parse_duration("7d")), C("crm.learners.full_name"))
    assert not any(r.stale for r in fresh.reached.values())
    assert parse_duration("36h") == timedelta(hours=36) and parse_duration("soon") is None


def test_a_column_on_a_cycle_reaches_itself(tmp_path):
    history, _ = history_of(
        tmp_path,
        run("dag.inc", output("out.totals", {"total": ["out.totals.total", "crm.orders.amount"]}), day=1, run="i1"),
    )
    impact = downstream(AsOf(history), C("out.totals.total"))
    assert impact.reaches_itself and impact.columns_reached == [C("out.totals.total")]
    assert [str(e.source) for e in impact.paths[C("out.totals.total")]] == ["out.totals.total"]
    assert upstream(AsOf(history), C("out.totals.total")).reaches_itself
    assert not downstream(AsOf(history), C("crm.orders.amount")).reaches_itself


def test_declared_lineage_is_walked_with_its_confidence(changed):
    from airflow_lineage_governance.graph.build import Edge
    from airflow_lineage_governance.kinds import EdgeType

    edge = Edge(C("out.u.y"), C("export.list.y"), EdgeType.DIRECT, "UNKNOWN", False, "", "", "")
    changed.add_static(
        "dag.export", [edge], EdgeSource.DECLARED, owner="marketing", reason="no events", outputs=[T("export.list")]
    )
    impact = downstream(AsOf(changed), C("crm.learners.full_name"))
    reached = impact.reached[C("export.list.y")]
    assert reached.confidence is Confidence.DECLARED
    assert reached.hops[-1].to_dict()["owner"] == "marketing"
    assert impact.reached[C("out.u.y")].confidence is Confidence.OBSERVED
    assert (
        C("export.list.y")
        not in downstream(AsOf(changed, sources=(EdgeSource.OBSERVED,)), C("crm.learners.full_name")).reached
    )
    assert T("export.list") not in graph_as_of(changed).outputs  # a declaration accounts for no table


def test_trace_back_and_forward_by_snapshot(changed):
    origin = trace_back(changed, T("out.u"), "b3-out")
    assert origin.run.event.run_id == "b3"
    (t_origin,) = origin.inputs
    assert (str(t_origin.table), t_origin.snapshot, t_origin.run.event.run_id) == ("out.t", "r3-out", "r3")
    assert [(str(o.table), o.snapshot, o.run) for o in t_origin.inputs] == [("crm.learners", "s3", None)]
    forward = trace_forward(changed, T("crm.learners"), "s3", lambda t: ("team", 1))
    assert [(str(c.table), c.snapshot, c.owner) for c in forward] == [
        ("out.t", "r3-out", "team"),
        ("out.u", "b3-out", "team"),
    ]
    assert trace_forward(changed, T("crm.learners"), "s1")[0].snapshot == "r1-out"
    with pytest.raises(SnapshotNotInLineageError, match="out.u@nope: no received COMPLETE"):
        trace_back(changed, T("out.u"), "nope")


def test_the_same_sql_stating_other_lineage_is_another_shape(tmp_path):
    first = run("dag.a", output("out.t", {"x": ["crm.learners.email"]}), day=1, run="r1", sql="SELECT x")
    second = run("dag.a", output("out.t", {"x": ["crm.learners.full_name"]}), day=2, run="r2", sql="SELECT x")
    history, _ = history_of(tmp_path, first, second)
    assert history.runs["dag.a"][0].shape is not history.runs["dag.a"][1].shape
    assert {str(e.source) for e in graph_as_of(history).edges()} == {"crm.learners.full_name"}
