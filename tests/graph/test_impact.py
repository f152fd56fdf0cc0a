"""Impact (downstream) and provenance (upstream) of a column over a small graph built in-process."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError, GraphError
from airflow_lineage_governance.graph.impact import column_asked, downstream, upstream
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.events import complete, graph_of, output, source

C = ColumnRef.parse
T = TableRef.parse


@pytest.fixture(scope="module")
def graph():
    return graph_of(
        complete(
            "p.audience",
            output(
                "marketing.audience",
                {
                    "email": ["crm.learners.email"],
                    "name": [source("crm.learners.full_name", "DIRECT", "TRANSFORMATION")],
                },
                ["crm.learners.consent"],
            ),
        ),
        complete("p.export", output("a.b.export", {"email": ["marketing.audience.email"]})),
    )


def test_downstream_values_rows_and_paths(graph):
    impact = downstream(graph, C("crm.learners.email"))
    assert impact.values == [C("a.b.export.email"), C("marketing.audience.email")]
    assert impact.rows == []
    assert [str(e.target) for e in impact.paths[C("a.b.export.email")]] == [
        "marketing.audience.email",
        "a.b.export.email",
    ]
    consent = downstream(
        graph,
        C("crm.learners.consent"),
        {T("marketing.audience"): "crm-team"},
        lambda table: 10.0 if table == T("a.b.export") else 1.0,
    )
    assert consent.values == [] and consent.rows == [T("marketing.audience")]
    assert consent.columns_reached == [
        C("a.b.export.email"),
        C("marketing.audience.email"),
        C("marketing.audience.name"),
    ]
    assert consent.owners == {T("a.b.export"): None, T("marketing.audience"): "crm-team"}
    assert consent.score == 12.0


def test_impact_to_dict_prints_names(graph):
    data = downstream(graph, C("crm.learners.consent"), {T("marketing.audience"): "crm-team"}).to_dict()
    assert data["column"] == "crm.learners.consent" and data["rows"] == ["marketing.audience"]
    assert data["owners"] == {"a.b.export": None, "marketing.audience": "crm-team"}
    assert data["paths"]["marketing.audience.email"] == [
        {
            "source": "crm.learners.consent",
            "target": "marketing.audience",
            "type": "INDIRECT",
            "subtype": "FILTER",
            "masking": False,
            "job": "p.audience",
        }
    ]
    assert list(data) == [
        "column",
        "values",
        "rows",
        "columns_reached",
        "paths",
        "owners",
        "score",  # as before
        "reached",
        "retired",
        "reaches_itself",
        "as_of",
    ]  # evidence and time
    assert data["reached"]["marketing.audience.email"]["confidence"] == "observed"
    assert data["reaches_itself"] is False and data["retired"] == [] and data["as_of"] is None


def test_upstream_goes_through_columns_and_rows(graph):
    provenance = upstream(graph, C("a.b.export.email"))
    assert provenance.sources == [C("crm.learners.consent"), C("crm.learners.email"), C("marketing.audience.email")]
    assert [str(e.source) for e in provenance.paths[C("crm.learners.consent")]] == [
        "crm.learners.consent",
        "marketing.audience.email",
    ]
    assert provenance.to_dict()["sources"] == ["crm.learners.consent", "crm.learners.email", "marketing.audience.email"]


def test_a_column_no_event_mentions_is_one_sentence(graph):
    with pytest.raises(ColumnNotInLineageError) as raised:
        downstream(graph, C("crm.learners.emial"))
    assert str(raised.value) == (
        "crm.learners.emial: no received lineage event mentions this column; check the "
        "name, or that the jobs reading it sent their events."
    )
    assert isinstance(raised.value, GraphError) and isinstance(raised.value, LineageGovernanceError)
    with pytest.raises(ColumnNotInLineageError):
        upstream(graph, C("crm.nothing.x"))


def test_a_column_asked_about_is_parsed_once_and_a_bad_name_says_how_to_write_it():
    assert column_asked("a.b.export.email") == ColumnRef(TableRef(("a", "b"), "export"), "email")
    for text in ("email", "learners.email", "crm..email"):
        with pytest.raises(ColumnNotInLineageError) as raised:
            column_asked(text)
        assert str(raised.value) == (
            f"{text}: no received lineage event mentions this column; name it as namespace.table.column."
        )
