"""Duplicates are one run's events of the same type at the same instant, however the source wrote the time; a run's
events are compared one by one while few and by key when many, and both count the same."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.graph.events import read_events
from tests.support.events import Listed, event


def _at(second: int, offset: bool = False) -> str:
    return f"2026-10-01T02:00:{second:02d}.5{'00000+00:00' if offset else 'Z'}"


@pytest.mark.parametrize("many", [1, 3, 8, 9, 30])
def test_a_runs_repeated_events_are_duplicates_and_its_other_events_are_not(many):
    kinds = ["START", *["RUNNING"] * (many - 1), "COMPLETE"]
    sent = [event(kind, "dag.a", run="r1", time=_at(i)) for i, kind in enumerate(kinds)]
    again = [event(kind, "dag.a", run="r1", time=_at(i, offset=True)) for i, kind in enumerate(kinds)]  # same instants
    other = [event("RUNNING", "dag.a", run="r1", time=_at(i + 40)) for i in range(3)]  # same run, other instants
    elsewhere = [event(kind, "dag.a", run="r2", time=_at(i)) for i, kind in enumerate(kinds)]  # another run
    events, report = read_events(Listed([*sent, *again[::-1], *other, *elsewhere, *again]))
    assert report.duplicates == 2 * len(kinds)
    assert [(e.run_id, e.event_type, e.event_time) for e in events] == [
        *(("r1", e["eventType"], e["eventTime"]) for e in sent + other),
        *(("r2", e["eventType"], e["eventTime"]) for e in elsewhere),
    ]


def test_the_same_instant_of_another_type_is_no_duplicate():
    sent = [event(kind, "dag.a", run="r1", time=_at(1)) for kind in ("START", "RUNNING", "COMPLETE", "FAIL")]
    events, report = read_events(Listed([*sent, *sent]))
    assert report.duplicates == 4 and [e.event_type for e in events] == ["START", "RUNNING", "COMPLETE", "FAIL"]
