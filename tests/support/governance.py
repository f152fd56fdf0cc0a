"""A Governance over events built in-process, with rules and metadata written as TOML text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_lineage_governance.governance.config import load_metadata, load_rules
from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.graph.events import ReadReport, to_run_event
from tests.support.events import NS, graph_of

METADATA = """
[tables."crm.learners"]
owner = "crm-team"
source = true
tier = 2
columns = { email = "personal", country = "internal", learner_id = "internal" }

[tables."marketing.offers"]
owner = "marketing"
tier = 1
columns = { learner_id = "internal", country = "internal" }
"""


def governance_of(tmp_path: Path, *events: dict[str, Any], metadata: str = METADATA, rules: str = "") -> Governance:
    """Returns the governance of the events, with lineage.toml `rules` and metadata.toml `metadata`."""
    rules_path, metadata_path = tmp_path / "lineage.toml", tmp_path / "metadata.toml"
    rules_path.write_text(rules or f'namespace = "{NS}"\n')
    metadata_path.write_text(metadata)
    loaded_rules = load_rules(rules_path)
    received = [e for e in (to_run_event(raw) for raw in events) if e is not None]
    report = ReadReport(source="in-process", events=len(received))
    return Governance(
        loaded_rules,
        load_metadata(metadata_path, loaded_rules),
        received,
        report,
        graph_of(*events, namespace=loaded_rules.namespace),
    )
