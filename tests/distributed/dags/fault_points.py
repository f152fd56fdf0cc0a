"""Fault points for the distributed suite's worker-kill tests, loaded by the task processes that import
distributed_faults.py: the REST catalog's commit is held, once, at a point a test arms, until the test kills the
worker running it.

A test arms a point by writing `faults/<db>.<table>.<point>` beside this file (point `before_commit`: the data
files and manifests are written, the commit not sent; `after_commit`: the commit landed, the task has not
returned, so no COMPLETE event was sent). The first commit of that table to reach the point renames the file to
`….reached`, writes its pid there, and sleeps; later tries find nothing armed and commit as usual."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pyiceberg.catalog.rest import RestCatalog

FAULTS = Path(__file__).resolve().parent / "faults"
_commit = RestCatalog.commit_table


def _hold(table: Any, point: str) -> None:
    armed = FAULTS / f"{'.'.join(table.name())}.{point}"
    reached = armed.with_name(armed.name + ".reached")
    try:
        armed.rename(reached)
    except FileNotFoundError:
        return
    reached.write_text(str(os.getpid()))
    while True:  # until the test kills this process with its worker
        time.sleep(1)


def commit_table(self: RestCatalog, table: Any, requirements: Any, updates: Any) -> Any:
    _hold(table, "before_commit")
    response = _commit(self, table, requirements, updates)
    _hold(table, "after_commit")
    return response


RestCatalog.commit_table = commit_table  # type: ignore[method-assign]
