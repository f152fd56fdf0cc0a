"""Classification proposals: Denning's join along lineage, declared classes never lowered, cycles whole."""

from __future__ import annotations

from airflow_lineage_governance.governance.classify import propose, understated, written_columns
from airflow_lineage_governance.governance.config import Rules
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef
from tests.support.events import complete, graph_of, output, source

C = ColumnRef.parse
RULES = Rules()


def classes(proposals) -> dict[str, str | None]:
    return {str(c): p.proposed for c, p in proposals.items()}


def test_the_strictest_input_decides_direct_first_among_equals():
    graph = graph_of(
        complete(
            "p.a",
            output(
                "out.t",
                {"x": ["crm.l.email", "crm.l.country"], "y": [source("crm.l.name", "INDIRECT", "JOIN"), "crm.l.dob"]},
                ["crm.l.consent"],
            ),
        )
    )
    declared = {
        C("crm.l.email"): "personal",
        C("crm.l.country"): "internal",
        C("crm.l.name"): "personal",
        C("crm.l.dob"): "personal",
        C("crm.l.consent"): "public",
    }
    proposals = propose(graph, declared, RULES)
    assert classes(proposals) == {"out.t.x": "personal", "out.t.y": "personal"}
    decided = proposals[C("out.t.y")].decided_by
    assert (str(decided.source), decided.type) == ("crm.l.dob", EdgeType.DIRECT)
    assert proposals[C("out.t.x")].to_dict() == {
        "column": "out.t.x",
        "proposed": "personal",
        "declared": None,
        "decided_by": {"source": "crm.l.email", "type": "DIRECT", "subtype": "IDENTITY"},
    }


def test_masking_never_lowers_and_unclassified_inputs_propose_nothing():
    graph = graph_of(
        complete("p.a", output("out.t", {"h": [source("crm.l.email", masking=True)], "n": ["crm.l.unknown"]}))
    )
    assert classes(propose(graph, {C("crm.l.email"): "personal"}, RULES)) == {"out.t.h": "personal", "out.t.n": None}


def test_written_inputs_carry_their_effective_class_and_declared_is_never_lowered():
    graph = graph_of(
        complete("p.a", output("mid.t", {"x": ["crm.l.country"]})), complete("p.b", output("out.t", {"y": ["mid.t.x"]}))
    )
    declared = {C("crm.l.country"): "internal", C("mid.t.x"): "sensitive"}
    proposals = propose(graph, declared, RULES)
    assert classes(proposals) == {"mid.t.x": "internal", "out.t.y": "sensitive"}
    assert proposals[C("mid.t.x")].effective(RULES) == "sensitive"
    assert understated(proposals, RULES) == []


def test_only_the_edge_types_asked_for_carry_a_class():
    graph = graph_of(complete("p.a", output("out.t", {"x": ["crm.l.country"]}, ["crm.l.email"])))
    declared = {C("crm.l.country"): "internal", C("crm.l.email"): "personal"}
    assert classes(propose(graph, declared, RULES)) == {"out.t.x": "personal"}
    assert classes(propose(graph, declared, RULES, (EdgeType.DIRECT,))) == {"out.t.x": "internal"}


def test_understated_lists_declared_classes_below_the_proposal():
    graph = graph_of(complete("p.a", output("out.t", {"x": ["crm.l.email"], "y": ["crm.l.country"]})))
    declared = {
        C("crm.l.email"): "personal",
        C("crm.l.country"): "internal",
        C("out.t.x"): "internal",
        C("out.t.y"): "internal",
    }
    found = understated(propose(graph, declared, RULES), RULES)
    assert [(str(p.column), p.declared, p.proposed) for p in found] == [("out.t.x", "internal", "personal")]


def test_a_two_job_cycle_fed_by_a_personal_column_is_personal_all_round():
    # a.t.x reads crm.l.email and b.t.y; b.t.y reads a.t.x: an incremental pair reading each other's output
    graph = graph_of(
        complete("p.a", output("a.t", {"x": ["crm.l.email", "b.t.y"]})),
        complete("p.b", output("b.t", {"y": ["a.t.x"], "z": ["b.t.y"]})),
    )
    proposals = propose(graph, {C("crm.l.email"): "personal"}, RULES)
    assert classes(proposals) == {"a.t.x": "personal", "b.t.y": "personal", "b.t.z": "personal"}
    assert str(proposals[C("b.t.y")].decided_by.source) == "a.t.x"


def test_a_cycle_carries_the_strictest_declared_class_of_its_columns_and_never_lowers_one():
    graph = graph_of(
        complete("p.a", output("a.t", {"x": ["crm.l.country", "b.t.y"]})),
        complete("p.b", output("b.t", {"y": ["a.t.x"]})),
    )
    declared = {C("crm.l.country"): "internal", C("b.t.y"): "sensitive", C("a.t.x"): "public"}
    proposals = propose(graph, declared, RULES)
    assert classes(proposals) == {"a.t.x": "sensitive", "b.t.y": "sensitive"}
    assert proposals[C("b.t.y")].effective(RULES) == "sensitive"
    assert [str(p.column) for p in understated(proposals, RULES)] == ["a.t.x"]


def test_a_column_reading_itself_keeps_what_reaches_it():
    graph = graph_of(complete("p.a", output("a.t", {"total": ["a.t.total", "crm.l.email"]})))
    proposals = propose(graph, {C("crm.l.email"): "personal"}, RULES)
    assert classes(proposals) == {"a.t.total": "personal"}
    unclassified = propose(graph_of(complete("p.a", output("a.t", {"total": ["a.t.total"]}))), {}, RULES)
    assert classes(unclassified) == {"a.t.total": None}


def test_written_columns_are_every_output_column_by_name():
    graph = graph_of(complete("p.a", output("b.t", {"x": ["crm.l.a"]}), output("a.t", {"y": [], "x": []})))
    assert [str(c) for c in written_columns(graph)] == ["a.t.x", "a.t.y", "b.t.x"]
