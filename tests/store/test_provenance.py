"""Impact and provenance from the store on both engines against the in-memory history's answers (the CLI's JSON,
byte for byte) on the repo's test histories: a job whose lineage changed, late events, a cycle, rows shaped through
a table, a person's declarations with and without columns, and a generated history of the scale benchmark's shape.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
from benchmarks import history_scale
from tests.store.test_queries import changed_history
from tests.support.events import NS, write

METADATA = """
[tables."out.t"]
owner = "analytics"
tier = 1
columns = { x = "personal" }

[tables."out.u"]
owner = "finance"
tier = 2

[[declared]]
job = "export.copy"
owner = "marketing-team"
reason = "copies out.u with a script that sends no lineage"
inputs = ["out.u"]
outputs = ["out.copy"]
columns = { "out.copy.y" = ["out.u.y"] }

[[declared]]
job = "export.rows"
owner = "marketing-team"
reason = "filters out.v by hand"
inputs = ["out.v"]
outputs = ["out.filtered"]
"""


def same_answers(
    governance: Governance,
    stored: StoredGovernance,
    columns: list[str],
    times: list[datetime | None],
    windows: list[timedelta | None],
) -> int:
    """Asserts that impact and provenance from the store print the in-memory JSON; returns how many were compared."""
    compared = 0
    for at in times:
        for window in windows:
            if window is not None and at is None:
                continue  # now moves between the two answers
            for column in columns:
                try:
                    expected = governance.impact(column, at, window)
                except ColumnNotInLineageError as error:
                    with pytest.raises(ColumnNotInLineageError, match=f"^{str(error)}$"):
                        stored.impact(column, at, window)
                    continue
                assert stored.impact(column, at, window).to_json() == expected.to_json(), (column, at, window)
                expected_up = json.dumps(governance.provenance(column, at, window).to_dict(), indent=2)
                assert json.dumps(stored.provenance(column, at, window).to_dict(), indent=2) == expected_up
                compared += 1
    return compared


def test_impact_and_provenance_print_the_in_memory_answers(store_location, tmp_path):
    events = write(tmp_path / "events.jsonl", changed_history())
    (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (tmp_path / "metadata.toml").write_text(METADATA)
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
    governance = Governance.load(events, **paths)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=2)
    columns = [
        "crm.learners.email",
        "crm.learners.full_name",
        "crm.learners.status",
        "out.t.x",
        "out.u.y",
        "out.u.z",
        "out.v.w",
        "out.v.k",
        "out.copy.y",
        "out.filtered.w",
        "crm.learners.nothing",
    ]
    times = [None, *(datetime(2026, 10, day, hour, tzinfo=UTC) for day in (1, 2, 3, 4) for hour in (1, 3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert same_answers(governance, stored, columns, times, [None, timedelta(hours=30)]) > 100
        copied = stored.impact("out.u.y")
        assert copied.reached[ColumnRef.parse("out.copy.y")].confidence == "declared"
        assert TableRef.parse("out.filtered") in stored.impact("out.v.k").rows
        assert ColumnRef.parse("out.u.y") in stored.provenance("out.copy.y").sources
        assert [str(e.edge.target) for e in stored.impact("crm.learners.email").retired] == ["out.t.x"]
        day_2 = stored.impact("crm.learners.email", datetime(2026, 10, 2, 3, tzinfo=UTC))
        assert day_2.columns_reached == [ColumnRef.parse("out.t.x")] and day_2.retired == []  # r2 still states it


@pytest.mark.slow
def test_impact_and_provenance_print_the_in_memory_answers_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    history = [history_scale.event(job, day, jobs) for day in range(10) for job in range(jobs)]
    random.Random(5).shuffle(history)
    events = write(tmp_path / "events.jsonl", history)
    (tmp_path / "lineage.toml").write_text(f'namespace = "{history_scale.NS}"\n')
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": None}
    governance = Governance.load(events, **paths)
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=300)
    rng = random.Random(7)
    columns = [str(ColumnRef(TableRef(("out",), f"t{rng.randrange(jobs)}"), f"c{rng.randrange(4)}")) for _ in range(8)]
    columns += [str(ColumnRef(TableRef(("src",), f"s{rng.randrange(120)}"), "c0")) for _ in range(4)]
    times = [None, *(history_scale.START + timedelta(days=rng.uniform(0, 11)) for _ in range(3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert same_answers(governance, stored, columns, times, [None, timedelta(days=2)]) > 40
