"""Items of an iterator worked out in a thread of their own while the caller handles the one before."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Iterator
from typing import TypeVar, cast

Item = TypeVar("Item")

_DONE = object()
_WAIT = 0.1  # seconds a full queue is waited on before the thread looks whether the caller has stopped
SWITCH_INTERVAL = 0.00005
"""Seconds a thread holding Python's lock runs before it hands it over to a thread waiting for it, while the thread
works ahead: the caller gets it back soon after each call into a database, which runs without it."""

_switching = threading.Lock()
_own_interval = [0.0]  # the process's switch interval before the first of the threads working ahead now
_working = [0]  # how many threads work ahead now


def _lower_switch_interval() -> None:
    with _switching:
        if _working[0] == 0:
            _own_interval[0] = sys.getswitchinterval()
            sys.setswitchinterval(min(_own_interval[0], SWITCH_INTERVAL))
        _working[0] += 1


def _restore_switch_interval() -> None:
    with _switching:
        _working[0] -= 1
        if _working[0] == 0:  # the last thread working ahead is done
            sys.setswitchinterval(_own_interval[0])


class _Failed:
    """What the thread raised, for the caller to raise in its turn."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(items: Iterator[Item], depth: int = 1) -> Iterator[Item]:
    """Yield the items of `items`, each worked out in another thread while the caller handles the ones before.

    The thread holds at most `depth` items the caller has not taken yet. What `items` raises is raised to the caller
    at that place; a caller that stops early (an exception, `close()`) stops the thread, which closes `items`. While
    the thread runs, Python's switch interval is `SWITCH_INTERVAL` at most (the process's own again once no thread
    works ahead).

    Args:
        items: The iterator; it runs in the other thread only.
        depth: How many items it may run ahead of the caller.

    Returns:
        The items, in their order.
    """
    waiting: queue.Queue[object] = queue.Queue(maxsize=depth)
    stopped = threading.Event()

    def hand_over(item: object) -> bool:
        while not stopped.is_set():
            try:
                waiting.put(item, timeout=_WAIT)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not hand_over(item):
                    return
            hand_over(_DONE)
        except BaseException as error:  # the caller raises it
            hand_over(_Failed(error))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=work, name="lineage-store-read-ahead", daemon=True)
    thread.start()
    _lower_switch_interval()
    try:
        while True:
            item = waiting.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield cast(Item, item)
    finally:
        stopped.set()
        thread.join()
        _restore_switch_interval()
