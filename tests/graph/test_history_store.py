"""The lineage history kept between nightly runs: a second run asks Marquez only for events after the
watermark, and still answers from the whole history (the store's events plus the new ones)."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.refs import ColumnRef
from tests.support.events import NS, complete, output
from tests.support.governance import METADATA
from tests.support.marquez_api import Server

C = ColumnRef.parse


def nightly(day: int, column: str) -> dict:
    return complete(
        "dag.a", output("out.t", {"x": [f"crm.learners.{column}"]}), run=f"r{day}", time=f"2026-10-{day:02d}T02:00:00Z"
    )


@pytest.fixture
def governance_files(tmp_path):
    rules, metadata = tmp_path / "lineage.toml", tmp_path / "metadata.toml"
    rules.write_text(f'namespace = "{NS}"\n')
    metadata.write_text(METADATA)
    return {"rules_path": rules, "metadata_path": metadata}


def load(events: list[dict], store, files) -> tuple[Governance, Server]:
    server = Server(events)
    try:
        return Governance.load(server.url, store=store, **files), server
    finally:
        server.close()


def test_a_second_nightly_run_reads_only_new_events(tmp_path, governance_files):
    store = tmp_path / "history"
    first, server = load([nightly(1, "email")], store, governance_files)
    assert first.report.events == 1 and server.requests[0]["after"] == ["1970-01-01T00:00:00Z"]
    assert json.loads((store / "watermark.json").read_text()) == {"watermark": "2026-10-01T02:00:00+00:00"}

    second, server = load([nightly(1, "email"), nightly(2, "full_name")], store, governance_files)  # day 1 again
    assert server.requests[0]["after"] == ["2026-10-01T01:00:00Z"]  # the watermark less the overlap
    assert [r.event.run_id for r in second.history.runs["dag.a"]] == ["r1", "r2"]
    assert second.report.duplicates == 1  # day 1, read again in the overlap, is kept once
    assert len((store / "events.jsonl").read_text().splitlines()) == 2
    assert second.impact("crm.learners.email").retired[0].record.event.run_id == "r1"
