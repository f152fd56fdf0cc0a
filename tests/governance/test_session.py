"""Governance loaded once from TOML and an events source; impact and provenance by ref or by name."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.governance.errors import GovernanceConfigError
from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.events import NS, complete, output, write
from tests.support.governance import METADATA

C = ColumnRef.parse


@pytest.fixture
def files(tmp_path):
    rules, metadata = tmp_path / "lineage.toml", tmp_path / "metadata.toml"
    rules.write_text(f'namespace = "{NS}"\n[blast_radius]\ntier_weights = {{ 1 = 10.0 }}\n')
    metadata.write_text(METADATA)
    events = write(
        tmp_path / "events.jsonl",
        [complete("p.offers", output("marketing.offers", {"country": ["crm.learners.country"]})), "{not json"],
    )
    return {"rules_path": rules, "metadata_path": metadata}, events


def test_load_reads_everything_once(files):
    options, events = files
    governance = Governance.load(events, **options)
    assert governance.report.events == 1 and governance.report.malformed == 1
    assert list(governance.proposals) == [C("marketing.offers.country")]
    by_ref, by_name = governance.impact(C("crm.learners.country")), governance.impact("crm.learners.country")
    assert by_ref == by_name and by_ref.values == [C("marketing.offers.country")]
    assert by_ref.score == 10.0 and by_ref.owners == {TableRef.parse("marketing.offers"): "marketing"}
    assert governance.provenance("marketing.offers.country").sources == [C("crm.learners.country")]
    with pytest.raises(ColumnNotInLineageError, match="name it as namespace.table.column"):
        governance.impact("country")


def test_load_tolerant_gives_no_events_and_the_reason(files, tmp_path):
    options, _ = files
    folder = tmp_path / "a-folder"
    folder.mkdir()
    governance, problem = Governance.load_tolerant(folder, **options)
    assert problem == f"{folder}: is a folder, not an events file."
    assert governance.events == [] and governance.graph.edges() == []
    assert Governance.load_tolerant(None, **options)[1] == "no event source is configured"
    with pytest.raises(GovernanceConfigError):
        Governance.load_tolerant(None, rules_path=tmp_path / "none.toml")
