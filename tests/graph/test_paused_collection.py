"""The collector paused for a read: what the block kept is moved to the oldest generation, still collectable, and
what the process froze before stays frozen."""

from __future__ import annotations

import gc
import weakref

from airflow_lineage_governance.graph import events
from airflow_lineage_governance.graph.events import keep_for_the_process, paused_collection


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_what_the_block_kept_is_old_and_still_collected_when_it_becomes_garbage(monkeypatch):
    gc.unfreeze()  # what earlier tests kept for the process (keep_for_the_process) is scanned again, as at start
    monkeypatch.setattr(events, "_kept", False)
    with paused_collection():
        assert not gc.isenabled()
        kept = [_Node() for _ in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_count()[0] < 1000  # no scan left owed
    gone = weakref.ref(kept[0])
    del kept
    assert gone() is not None  # a cycle: reference counting alone does not free it
    gc.collect()
    assert gone() is None


def test_what_the_process_froze_before_stays_frozen(monkeypatch):
    monkeypatch.setattr(events, "_kept", False)
    frozen = [_Node()]
    keep_for_the_process()
    try:
        before = gc.get_freeze_count()
        with paused_collection():
            kept = [_Node() for _ in range(100)]
        assert gc.get_freeze_count() == before and gc.isenabled() and frozen and kept
    finally:
        gc.unfreeze()


def test_a_paused_collector_stays_paused():
    gc.disable()
    try:
        with paused_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
