"""Impact (downstream) and provenance (upstream) of a column over a small history in the store, on both engines: the
values, rows and paths reached, the score, what `--json` prints (`Impact.to_json` whatever the names hold), and a
column no event names refused in one sentence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.answers import column_asked
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError, GraphError
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store import provenance
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.provenance import StoreWalker
from tests.support.events import NS, complete, output, source, write

C = ColumnRef.parse
T = TableRef.parse
AUDIENCE = [
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
]


def stored(location: str, folder: Path, events: list[dict]) -> StoredGovernance:
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(folder / "events.jsonl", events)))
    (folder / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (folder / "metadata.toml").write_text("")
    return StoredGovernance.open(location, rules_path=folder / "lineage.toml", metadata_path=folder / "metadata.toml")


@pytest.fixture
def walker(store_location, tmp_path) -> Iterator[StoreWalker]:
    with stored(store_location, tmp_path, AUDIENCE) as governance:
        yield governance.walker()


def test_downstream_values_rows_and_paths(walker):
    impact = provenance.impact(walker, C("crm.learners.email"))
    assert impact.values == [C("a.b.export.email"), C("marketing.audience.email")]
    assert impact.rows == []
    assert [str(e.target) for e in impact.paths[C("a.b.export.email")]] == [
        "marketing.audience.email",
        "a.b.export.email",
    ]
    consent = provenance.impact(
        walker,
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


def test_impact_to_dict_prints_names(walker):
    data = provenance.impact(walker, C("crm.learners.consent"), {T("marketing.audience"): "crm-team"}).to_dict()
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


def test_upstream_goes_through_columns_and_rows(walker):
    found = provenance.provenance(walker, C("a.b.export.email"))
    assert found.sources == [C("crm.learners.consent"), C("crm.learners.email"), C("marketing.audience.email")]
    assert [str(e.source) for e in found.paths[C("crm.learners.consent")]] == [
        "crm.learners.consent",
        "marketing.audience.email",
    ]
    assert found.to_dict()["sources"] == ["crm.learners.consent", "crm.learners.email", "marketing.audience.email"]


def test_a_column_no_event_mentions_is_one_sentence(walker):
    with pytest.raises(ColumnNotInLineageError) as raised:
        provenance.impact(walker, C("crm.learners.emial"))
    assert str(raised.value) == (
        "crm.learners.emial: no received lineage event mentions this column; check the "
        "name, or that the jobs reading it sent their events."
    )
    assert isinstance(raised.value, GraphError) and isinstance(raised.value, LineageGovernanceError)
    with pytest.raises(ColumnNotInLineageError):
        provenance.provenance(walker, C("crm.nothing.x"))


def test_a_column_asked_about_is_parsed_once_and_a_bad_name_says_how_to_write_it():
    assert column_asked("a.b.export.email") == ColumnRef(TableRef(("a", "b"), "export"), "email")
    for text in ("email", "learners.email", "crm..email"):
        with pytest.raises(ColumnNotInLineageError) as raised:
            column_asked(text)
        assert str(raised.value) == (
            f"{text}: no received lineage event mentions this column; name it as namespace.table.column."
        )


@pytest.mark.parametrize(
    "name",
    ["plain", "é_accent", "tab\\there", "del\x7fchar", 'quote"back\\slash', "line\u2028sep", "<script>"],
)
def test_to_json_is_the_indented_json_of_to_dict(store_location, tmp_path, name):
    events = [
        complete("dag.a", output(f"db.{name}", {"x": ["src.t.c"]}, rows=["src.t.c"])),
        complete("dag.b", output("db.z", {f"c{name}": [f"db.{name}.x"]})),
    ]
    with stored(store_location, tmp_path, events) as governance:
        impact = provenance.impact(governance.walker(), ColumnRef.parse("src.t.c"), weight=lambda table: 0.1 / 3)
        assert len(impact.columns_reached) == 2
        assert impact.to_json() == json.dumps(impact.to_dict(), indent=2) + "\n"
