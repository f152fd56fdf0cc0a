"""Governance over an events source read into a store in memory: impact and provenance by ref or by name, and a
source or TOML that cannot be read refused with one sentence."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.governance.errors import GovernanceConfigError
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError, EventSourceError
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


def test_the_source_is_read_once_and_answers_by_ref_or_by_name(files):
    options, events = files
    governance = StoredGovernance.from_events(events, **options)
    assert governance.report().events == 1 and governance.report().malformed == 1
    assert list(governance.proposals()) == [C("marketing.offers.country")]
    by_ref, by_name = governance.impact(C("crm.learners.country")), governance.impact("crm.learners.country")
    assert by_ref.to_dict() == by_name.to_dict() and by_ref.values == [C("marketing.offers.country")]
    assert by_ref.score == 10.0 and by_ref.owners == {TableRef.parse("marketing.offers"): "marketing"}
    assert governance.provenance("marketing.offers.country").sources == [C("crm.learners.country")]
    with pytest.raises(ColumnNotInLineageError, match="name it as namespace.table.column"):
        governance.impact("country")


def test_a_source_or_toml_that_cannot_be_read_is_one_sentence(files, tmp_path):
    options, _ = files
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(EventSourceError) as raised:
        StoredGovernance.from_events(folder, **options)
    assert str(raised.value) == f"{folder}: is a folder, not an events file."
    with pytest.raises(GovernanceConfigError):
        StoredGovernance.from_events(tmp_path / "events.jsonl", rules_path=tmp_path / "none.toml")
