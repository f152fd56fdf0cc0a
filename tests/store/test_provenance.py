"""Impact and provenance from the store on both engines against the in-memory history's answers written out (the
CLI's JSON, byte for byte) and the networkx reference's reach, on the repo's test histories: a job whose lineage
changed, late events, a cycle, rows shaped through a table, a person's declarations with and without columns, and a
generated history of the scale benchmark's shape.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.reference import ReferenceHistory
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


ANSWERS = Path(__file__).with_name("provenance_answers.json")
"""The in-memory history's impact and provenance JSON (or error sentence) of each column, time and window asked."""


def key(column: str, at: datetime | None, window: timedelta | None) -> str:
    return f"{column} as of {at.isoformat() if at else 'now'}" + (f" active since {window}" if window else "")


def same_answers(
    reference: ReferenceHistory,
    stored: StoredGovernance,
    columns: list[str],
    times: list[datetime | None],
    windows: list[timedelta | None],
    written: dict[str, dict] | None = None,
) -> int:
    """Asserts that the columns impact and provenance from the store reach are the reference's (those it reaches
    through observed lineage: the reference holds no declarations), and that they print the answers `written` out;
    returns how many were compared."""
    compared = 0
    for at in times:
        for window in windows:
            if window is not None and at is None:
                continue  # now moves between the two answers
            for column in columns:
                expected = written.get(key(column, at, window)) if written is not None else None
                try:
                    impact = stored.impact(column, at, window)
                except ColumnNotInLineageError as error:
                    assert expected is None or str(error) == expected["error"]
                    assert reference.impact(ColumnRef.parse(column), at) == (set(), set(), set())
                    continue
                provenance = stored.provenance(column, at, window)
                if expected is not None:
                    assert json.loads(impact.to_json()) == expected["impact"], (column, at, window)
                    assert provenance.to_dict() == expected["upstream"], (column, at, window)
                    compared += 1
                asked = ColumnRef.parse(column)
                reached, values, rows = reference.impact(asked, at)
                observed = {c for c, r in impact.reached.items() if r.confidence == "observed"}
                assert observed == reached, (column, at)
                assert {c for c in impact.values if c in observed} == values, (column, at)
                assert {t for t in impact.rows if t.name not in ("copy", "filtered")} == rows, (column, at)
                sources = {c for c, r in provenance.reached.items() if r.confidence == "observed"}
                assert sources == reference.upstream(asked, at), (column, at)
                compared += written is None
    return compared


def test_impact_and_provenance_print_the_in_memory_answers(store_location, tmp_path):
    reference = ReferenceHistory(changed_history())
    events = write(tmp_path / "events.jsonl", changed_history())
    (tmp_path / "lineage.toml").write_text(f'namespace = "{NS}"\n')
    (tmp_path / "metadata.toml").write_text(METADATA)
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": tmp_path / "metadata.toml"}
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
        written = json.loads(ANSWERS.read_text())
        assert same_answers(reference, stored, columns, times, [None, timedelta(hours=30)], written) == 45
        copied = stored.impact("out.u.y")
        assert copied.reached[ColumnRef.parse("out.copy.y")].confidence == "declared"
        assert TableRef.parse("out.filtered") in stored.impact("out.v.k").rows
        assert ColumnRef.parse("out.u.y") in stored.provenance("out.copy.y").sources
        assert [str(e.edge.target) for e in stored.impact("crm.learners.email").retired] == ["out.t.x"]
        day_2 = stored.impact("crm.learners.email", datetime(2026, 10, 2, 3, tzinfo=UTC))
        assert day_2.columns_reached == [ColumnRef.parse("out.t.x")] and day_2.retired == []  # r2 still states it


@pytest.mark.slow
def test_impact_and_provenance_reach_what_the_reference_reaches_on_a_generated_history(store_location, tmp_path):
    jobs = 100
    history = [history_scale.event(job, day, jobs) for day in range(10) for job in range(jobs)]
    random.Random(5).shuffle(history)
    reference = ReferenceHistory(history)
    events = write(tmp_path / "events.jsonl", history)
    (tmp_path / "lineage.toml").write_text(f'namespace = "{history_scale.NS}"\n')
    paths = {"rules_path": tmp_path / "lineage.toml", "metadata_path": None}
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(events), batch_size=300)
    rng = random.Random(7)
    columns = [str(ColumnRef(TableRef(("out",), f"t{rng.randrange(jobs)}"), f"c{rng.randrange(4)}")) for _ in range(8)]
    columns += [str(ColumnRef(TableRef(("src",), f"s{rng.randrange(120)}"), "c0")) for _ in range(4)]
    times = [None, *(history_scale.START + timedelta(days=rng.uniform(0, 11)) for _ in range(3))]
    with StoredGovernance.open(store_location, **paths) as stored:
        assert same_answers(reference, stored, columns, times, [None, timedelta(days=2)]) > 40
