"""The graph rebuilt from COMPLETE events: typed nodes, the latest run per job, hostile parts left out."""

from __future__ import annotations

from airflow_lineage_governance.graph.build import Edge, build_graph
from airflow_lineage_governance.graph.events import FileEventSource, read_events
from airflow_lineage_governance.kinds import EdgeType, Subtype
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.events import NS, complete, graph_of, output, source, write

C = ColumnRef.parse
T = TableRef.parse


def test_the_latest_run_of_a_job_defines_its_edges(tmp_path):
    path = write(
        tmp_path / "events.jsonl",
        [
            complete(
                "dag.a",
                output("out.t", {"x": ["crm.learners.full_name"]}, ["crm.learners.status"]),
                run="r2",
                time="2026-10-02T02:00:00Z",
            ),
            complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="r1", time="2026-10-01T02:00:00Z"),
        ],
    )
    events, _ = read_events(FileEventSource(path))
    graph = build_graph(events, NS)
    assert {(e.source, e.target) for e in graph.edges()} == {
        (C("crm.learners.full_name"), C("out.t.x")),
        (C("crm.learners.status"), T("out.t")),
    }
    assert graph.outputs == {T("out.t"): "dag.a"}
    assert graph.jobs["dag.a"].run_id == "r2"


def test_nodes_are_refs_and_an_edge_into_a_table_is_told_by_type():
    graph = graph_of(complete("dag.a", output("a.b.wide", {"x": ["crm.learners.email"]}, ["x.y.z.flag"])))
    by_target = {e.target: e for e in graph.edges()}
    into_column, into_table = by_target[C("a.b.wide.x")], by_target[T("a.b.wide")]
    assert into_column.target == ColumnRef(TableRef(("a", "b"), "wide"), "x") and not into_column.into_table
    assert into_table.source == ColumnRef(TableRef(("x", "y"), "z"), "flag") and into_table.into_table
    assert (into_column.type, into_column.subtype) == (EdgeType.DIRECT, Subtype.IDENTITY)
    assert into_table.to_dict() == {
        "source": "x.y.z.flag",
        "target": "a.b.wide",
        "type": "INDIRECT",
        "subtype": "FILTER",
        "masking": False,
        "job": "dag.a",
    }
    assert graph.columns_of(T("a.b.wide")) == [C("a.b.wide.x")]
    assert graph.knows(C("x.y.z.flag")) and not graph.knows(C("x.y.z.other"))


def test_one_ref_per_name_however_many_edges_name_it():
    graph = graph_of(complete("dag.a", output("out.t", {"x": ["crm.l.a"], "y": ["crm.l.a"]}, ["crm.l.a"])))
    sources = {id(e.source) for e in graph.edges()}
    assert len(graph.edges()) == 3 and len(sources) == 1
    assert graph.name_of(C("crm.l.a")) == "crm.l.a"


def test_schemas_name_columns_in_order_and_duplicates_are_one_edge():
    graph = graph_of(
        complete(
            "dag.a",
            output("out.t", {"y": ["crm.l.a", "crm.l.a"]}, schema=["x", "y"]),
            inputs=[{"namespace": NS, "name": "crm.l", "facets": {"schema": {"fields": [{"name": "b"}, {"name": 3}]}}}],
        )
    )
    assert graph.columns_of(T("out.t")) == [C("out.t.x"), C("out.t.y")]
    assert graph.columns_of(T("crm.l")) == [C("crm.l.b"), C("crm.l.a")]
    assert len(graph.edges()) == 1


def test_other_namespaces_and_names_of_no_table_are_left_out():
    graph = graph_of(
        complete(
            "dag.a",
            output(
                "out.t",
                {
                    "x": [
                        "crm.l.a",
                        source("crm.l.b", namespace="s3://x"),
                        {"namespace": NS, "name": "nodots", "field": "c"},
                    ]
                },
            ),
            output("elsewhere.t", {"x": ["crm.l.a"]}, namespace="s3://x"),
            output("nodots", {"x": ["crm.l.a"]}),
        )
    )
    assert [str(e.source) for e in graph.edges()] == ["crm.l.a"]
    assert list(graph.outputs) == [T("out.t")]


def test_wrong_shaped_parts_of_an_event_are_skipped():
    weird = [
        {"type": ["DIRECT"], "subtype": "IDENTITY"},
        {"type": "DIRECT", "subtype": {"a": 1}},
        3,
        {"type": "SIDEWAYS", "subtype": "NEW"},
    ]
    bad = complete(
        "dag.a",
        {
            "namespace": NS,
            "name": "out.t",
            "facets": {
                "columnLineage": {
                    "fields": {
                        "x": {
                            "inputFields": [
                                {"namespace": NS, "name": "crm.l", "field": "a", "transformations": weird},
                                {"namespace": NS, "name": "crm.l", "field": "b"},
                                7,
                            ]
                        },
                        "y": "not an object",
                        "z": {"inputFields": "not a list"},
                    },
                    "dataset": {"not": "a list"},
                }
            },
        },
    )
    bad["inputs"] = "not a list"
    graph = graph_of(bad)
    assert sorted((str(e.source), e.type, e.subtype) for e in graph.edges()) == [
        ("crm.l.a", "SIDEWAYS", "NEW"),
        ("crm.l.b", "DIRECT", "UNKNOWN"),
    ]


def test_edges_of_a_node_are_in_a_stable_order():
    graph = graph_of(
        complete("dag.a", output("out.t", {"x": [source("crm.l.b", "INDIRECT", "JOIN"), "crm.l.c", "crm.l.a"]}))
    )
    assert [str(e.source) for e in graph.in_edges(C("out.t.x"))] == ["crm.l.a", "crm.l.c", "crm.l.b"]
    assert isinstance(graph.edges()[0], Edge)


def test_to_networkx_has_every_edge():
    graph = graph_of(complete("dag.a", output("out.t", {"x": ["crm.l.a"]}, ["crm.l.b"])))
    nx_graph = graph.to_networkx()
    assert nx_graph.number_of_edges() == 2 and nx_graph.has_edge(C("crm.l.b"), T("out.t"))
