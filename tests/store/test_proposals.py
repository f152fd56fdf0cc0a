"""Proposed classes, the lineage checks' findings and stale jobs from the store on both engines against the
in-memory governance's (the CLI's JSON) on the repo's test histories: a job whose lineage changed, late events, a
cycle, rows shaped through a table, and a generated history of the scale benchmark's shape."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from airflow_lineage_governance.governance.checks import run_checks
from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.store.lineage_store import LineageStore
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


def proposals_json(proposals) -> str:
    return json.dumps([p.to_dict() for p in proposals.values()], indent=2)


def assert_same_proposals(governance, stored, times) -> int:
    for at in times:
        assert proposals_json(stored.proposals(at)) == proposals_json(governance.as_of(at).proposals), at
        for window in (timedelta(hours=20), timedelta(days=2)):
            if at is not None:
                assert stored.stale_jobs(at, window) == governance.stale_jobs(at, window), (at, window)
    return len(times)


def test_proposals_and_stale_jobs_equal_the_in_memory_governance(store_location, tmp_path):
    events = write(tmp_path / "events.jsonl", changed_history())
    (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (tmp_path / "metadata.toml").write_text(METADATA)
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
    governance = Governance.load(events, **paths)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=2)
    times = [None, *(datetime(2026, 10, day, hour, tzinfo=UTC) for day in (1, 2, 3, 4) for hour in (1, 3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert assert_same_proposals(governance, stored, times) == 9
        catalog = ["crm.learners", "out.t", "out.u", "out.v", "out.w", "src.orphan"]
        for at in times:
            found = [f.to_dict() for f in stored.findings(catalog, at)]
            assert found == [f.to_dict() for f in run_checks(governance.as_of(at), catalog)], at
        kinds = {f.kind for f in stored.findings(catalog)}
        assert {"understated_classification", "unaccounted_table", "missing_metadata"} <= {str(k) for k in kinds}
        proposed = stored.proposals(datetime(2026, 10, 2, 3, tzinfo=UTC))
        assert {str(c): p.proposed for c, p in proposed.items()}["out.t.x"] == "personal"


def test_proposals_equal_the_in_memory_governance_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    history = [history_scale.event(job, day, jobs) for day in range(10) for job in range(jobs)]
    random.Random(3).shuffle(history)
    events = write(tmp_path / "events.jsonl", history)
    (tmp_path / "lineage.toml").write_text(f'namespace = "{history_scale.NS}"\n')
    (tmp_path / "metadata.toml").write_text(
        "".join(f'[tables."src.s{n}"]\nsource = true\ncolumns = {{ c0 = "personal" }}\n' for n in range(0, 200, 7))
    )
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
    governance = Governance.load(events, **paths)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=300)
    rng = random.Random(11)
    times = [None, *(history_scale.START + timedelta(days=rng.uniform(0, 11)) for _ in range(3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert assert_same_proposals(governance, stored, times) == 4
