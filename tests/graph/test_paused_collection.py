"""The collector paused for a read: what the block kept is moved to the oldest generation, still collectable."""

from __future__ import annotations

import gc
import weakref

from airflow_lineage_governance.graph.events import paused_collection


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_what_the_block_kept_is_old_and_still_collected_when_it_becomes_garbage():
    with paused_collection():
        assert not gc.isenabled()
        kept = [_Node() for _ in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_count()[0] < 1000  # no scan left owed
    gone = weakref.ref(kept[0])
    del kept
    assert gone() is not None  # a cycle: reference counting alone does not free it
    gc.collect()
    assert gone() is None


def test_a_paused_collector_stays_paused():
    gc.disable()
    try:
        with paused_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
