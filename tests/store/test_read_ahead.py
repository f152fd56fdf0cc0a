"""Items worked out in a thread of their own: in order, what the thread raised raised in turn, nothing left running."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from airflow_lineage_governance.store.read_ahead import SWITCH_INTERVAL, read_ahead


def counted(upto: int, seen: list[str], fail_at: int | None = None) -> Iterator[int]:
    try:
        for number in range(upto):
            if number == fail_at:
                raise ValueError(f"item {number} cannot be worked out")
            seen.append(threading.current_thread().name)
            yield number
    finally:
        seen.append("closed")


def test_the_items_come_in_order_each_worked_out_in_the_other_thread():
    seen: list[str] = []
    assert list(read_ahead(counted(50, seen), depth=2)) == list(range(50))
    assert set(seen[:-1]) == {"lineage-store-read-ahead"} and seen[-1] == "closed"


def test_what_the_thread_raises_reaches_the_caller_after_the_items_before_it():
    taken: list[int] = []
    with pytest.raises(ValueError, match="^item 3 cannot be worked out$"):
        for item in read_ahead(counted(10, [], fail_at=3)):
            taken.append(item)
    assert taken == [0, 1, 2]
    assert not any(thread.name == "lineage-store-read-ahead" for thread in threading.enumerate())


def test_a_caller_that_stops_early_stops_the_thread_and_closes_the_items():
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="^the store failed$"):
        for item in read_ahead(counted(1_000_000, seen)):
            if item == 5:
                raise RuntimeError("the store failed")
    assert seen[-1] == "closed" and len(seen) < 100
    assert not any(thread.name == "lineage-store-read-ahead" for thread in threading.enumerate())


def test_the_caller_gets_pythons_lock_back_sooner_while_the_thread_runs_and_the_process_keeps_its_own_after():
    before = sys.getswitchinterval()
    during: list[float] = []
    for _ in read_ahead(counted(3, [])):
        during.append(sys.getswitchinterval())
    assert during == pytest.approx([SWITCH_INTERVAL] * 3) and SWITCH_INTERVAL < before
    assert sys.getswitchinterval() == before
    with pytest.raises(ValueError):
        list(read_ahead(counted(10, [], fail_at=1)))
    assert sys.getswitchinterval() == before


def test_two_read_aheads_at_once_leave_the_process_its_own_switch_interval_when_both_are_done():
    before = sys.getswitchinterval()
    first, second = read_ahead(counted(3, [])), read_ahead(counted(3, []))
    assert next(first) == 0 and next(second) == 0
    first.close()  # the first ends while the second still works ahead
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    assert list(second) == [1, 2]
    assert sys.getswitchinterval() == before
