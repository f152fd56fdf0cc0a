"""Proposed classes, the lineage checks' findings and stale jobs from the store on both engines against those over the
networkx reference's graph as of each time (the CLI's JSON) and the answers written out, on the repo's test histories:
a job whose lineage changed, late events, a cycle, rows shaped through a table, and a generated history of the scale
benchmark's shape."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from airflow_lineage_governance.governance.checks import tables_without_metadata, unaccounted, understated_classes
from airflow_lineage_governance.governance.classify import propose
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory
from benchmarks import history_scale
from tests.store.test_queries import changed_history
from tests.support.events import NS, write

METADATA = """
[tables."crm.learners"]
source = true
columns = { email = "personal", full_name = "personal", status = "internal" }

[tables."out.t"]
owner = "analytics"
tier = 1
columns = { x = "internal" }
"""


FINDINGS_NOW = [
    "understated classification: out.t.x: declared internal, lineage proposes personal (from "
    "crm.learners.full_name, DIRECT IDENTITY)",
    "unaccounted table: out.w: in the catalog, but no declared source and no job's output in the lineage",
    "unaccounted table: src.orphan: in the catalog, but no declared source and no job's output in the lineage",
    # out.u's columns in the order the jobs' first COMPLETEs (by time) name them: dag.c's (day 2) reads z, then y
    "missing metadata: out.u: written with no metadata; lineage proposes z unknown, y personal",
    "missing metadata: out.v: written with no metadata; lineage proposes w personal, k personal",
]
"""What the checks find now."""


def proposals_json(proposals) -> str:
    return json.dumps([p.to_dict() for p in proposals.values()], indent=2)


def assert_same_proposals(reference: ReferenceHistory, stored: StoredGovernance, times) -> int:
    declared = stored.metadata.declared()
    for at in times:
        expected = propose(reference.lineage_graph(at), declared, stored.rules)
        assert proposals_json(stored.proposals(at)) == proposals_json(expected), at
        for window in (timedelta(hours=20), timedelta(days=2)):
            if at is not None:
                assert stored.stale_jobs(at, window) == reference.stale_jobs(at, at - window), (at, window)
    return len(times)


def reference_findings(reference: ReferenceHistory, stored: StoredGovernance, catalog, at) -> list[dict]:
    graph = reference.lineage_graph(at)
    proposals = propose(graph, stored.metadata.declared(), stored.rules)
    found = [
        *understated_classes(proposals, stored.rules),
        *unaccounted(catalog, stored.metadata, graph),
        *tables_without_metadata(graph, stored.metadata, proposals),
    ]
    return [f.to_dict() for f in found]


def test_proposals_and_stale_jobs_equal_the_references(store_location, tmp_path):
    reference = ReferenceHistory(changed_history())
    events = write(tmp_path / "events.jsonl", changed_history())
    (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (tmp_path / "metadata.toml").write_text(METADATA)
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=2)
    times = [None, *(datetime(2026, 10, day, hour, tzinfo=UTC) for day in (1, 2, 3, 4) for hour in (1, 3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert assert_same_proposals(reference, stored, times) == 9
        catalog = ["crm.learners", "out.t", "out.u", "out.v", "out.w", "src.orphan"]
        for at in times:
            found = [f.to_dict() for f in stored.findings(catalog, at)]
            assert found == reference_findings(reference, stored, catalog, at), at
        kinds = {f.kind for f in stored.findings(catalog)}
        assert {"understated_classification", "unaccounted_table", "missing_metadata"} <= {str(k) for k in kinds}
        proposed = stored.proposals(datetime(2026, 10, 2, 3, tzinfo=UTC))
        assert {str(c): p.proposed for c, p in proposed.items()}["out.t.x"] == "personal"
        day_4 = datetime(2026, 10, 4, 3, tzinfo=UTC)
        assert stored.stale_jobs(day_4, timedelta(hours=20)) == ["dag.a", "dag.b", "dag.c"]
        assert stored.stale_jobs(day_4, timedelta(days=2)) == ["dag.c"]
        assert [f.line() for f in stored.findings(catalog)] == FINDINGS_NOW


def test_proposals_equal_the_references_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    history = [history_scale.event(job, day, jobs) for day in range(10) for job in range(jobs)]
    random.Random(3).shuffle(history)
    reference = ReferenceHistory(history)
    events = write(tmp_path / "events.jsonl", history)
    (tmp_path / "lineage.toml").write_text(f'namespace = "{history_scale.NS}"\n')
    (tmp_path / "metadata.toml").write_text(
        "".join(f'[tables."src.s{n}"]\nsource = true\ncolumns = {{ c0 = "personal" }}\n' for n in range(0, 200, 7))
    )
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=300)
    rng = random.Random(11)
    times = [None, *(history_scale.START + timedelta(days=rng.uniform(0, 11)) for _ in range(3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert assert_same_proposals(reference, stored, times) == 4
