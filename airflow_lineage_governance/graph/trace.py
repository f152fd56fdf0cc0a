"""Incident tracing by snapshot: which run wrote a table's snapshot (its try, its SQL hash), which snapshot of
each input it read, recursively to the sources; and forwards, every output snapshot that read a contaminated
snapshot, directly or through others. Look-ups in the history's indexes (snapshot written -> run, snapshot
read -> runs), no scan.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.errors import GraphError
from airflow_lineage_governance.graph.events import paused_collection
from airflow_lineage_governance.graph.history import LineageHistory, RunRecord
from airflow_lineage_governance.refs import TableRef

Snapshot = tuple[TableRef, str]


class SnapshotNotInLineageError(GraphError):
    """Raised when no COMPLETE event of the history wrote or read the snapshot asked about (or the text names
    none); the sentence says how to name one."""


def snapshot_asked(text: str) -> Snapshot:
    """Returns the (table, snapshot) a person's `namespace.table@SNAPSHOT` names; raises
    SnapshotNotInLineageError saying how to write it."""
    name, at, snapshot = text.rpartition("@")
    try:
        table = TableRef.parse(name)
    except InvalidNameError:
        table = None
    if not at or not snapshot or table is None:
        raise SnapshotNotInLineageError(f"{text}: name a snapshot as namespace.table@SNAPSHOT_ID (the "
                                        "datasetVersion of the table's version facet).")
    return table, snapshot


@dataclass(slots=True)
class Origin:
    """A snapshot and where it came from: the run that wrote it (None: a source, or written by no run the
    history holds) and the origin of each input snapshot that run read."""

    table: TableRef
    snapshot: str | None
    run: RunRecord | None = None
    inputs: list[Origin] = field(default_factory=list)
    seen_before: bool = False  # already traced higher up (a cycle, or a snapshot two inputs share)

    def to_dict(self) -> dict[str, object]:
        """Returns the origin as the CLI's JSON shows it (the run's evidence, then the inputs, recursively)."""
        return {"table": str(self.table), "snapshot": self.snapshot,
                "written_by": self.run.to_dict() if self.run is not None else None,
                "seen_before": self.seen_before, "inputs": [i.to_dict() for i in self.inputs]}

    def lines(self, depth: int = 0) -> list[str]:
        """Returns the origin as indented text lines, one per snapshot."""
        pad = "  " * depth
        run = self.run
        if run is None:
            head = f"{pad}{self.table}@{self.snapshot or '?'}: a source (no run in the lineage wrote it)"
        else:
            event = run.event
            head = (f"{pad}{self.table}@{self.snapshot or '?'} <- {event.job_name} run {event.run_id} try "
                    f"{event.try_number if event.try_number is not None else '?'} at {event.event_time}, SQL "
                    f"{run.sql_hash or 'unknown'}" + (" (traced above)" if self.seen_before else ""))
        return [head, *(line for origin in self.inputs for line in origin.lines(depth + 1))]


def trace_back(history: LineageHistory, table: TableRef, snapshot: str) -> Origin:
    """Returns the origin of the snapshot, recursively to the sources. Raises SnapshotNotInLineageError when no
    COMPLETE event of the history wrote or read it."""
    key = (table, snapshot)
    if key not in history.writers and key not in history.readers:
        raise SnapshotNotInLineageError(f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
                                        "snapshot; check the snapshot id, or that the runs near it sent events.")
    with paused_collection():  # thousands of origins at once: the collector would rescan them as they grow
        return _origin(history.writers, key)


def _origin(writers: dict[Snapshot, RunRecord], key: Snapshot) -> Origin:
    """Returns the origin of `key`, depth first in the order each run stated its inputs (the order a recursion
    takes, with a stack): a written snapshot met again is marked `seen_before` and not traced again."""
    run = writers.get(key)
    root = Origin(key[0], key[1], run)
    if run is None:
        return root
    seen = {key}
    into = root.inputs
    stack: list[tuple[list[Origin], tuple[TableRef, str | None]]] = [(into, k) for k in reversed(run.inputs)]
    pop, push = stack.pop, stack.append
    while stack:
        into, read = pop()
        run = writers.get(read)  # type: ignore[arg-type]  # no snapshot None is a key
        found = Origin(read[0], read[1], run)
        into.append(found)
        if run is None:
            continue
        if read in seen:
            found.seen_before = True
            continue
        seen.add(read)  # type: ignore[arg-type]
        into = found.inputs
        for k in reversed(run.inputs):
            push((into, k))
    return root


@dataclass(frozen=True, slots=True)
class Contaminated:
    """An output snapshot that read a contaminated snapshot: the run, what it read, what it wrote."""

    run: RunRecord
    read: Snapshot
    table: TableRef
    snapshot: str | None
    owner: str | None = None
    tier: int | None = None

    def to_dict(self) -> dict[str, object]:
        """Returns the contaminated output as the CLI's JSON shows it."""
        return {"table": str(self.table), "snapshot": self.snapshot, "read": f"{self.read[0]}@{self.read[1]}",
                "owner": self.owner, "tier": self.tier, "run": self.run.to_dict()}

    def line(self) -> str:
        """Returns the contaminated output as one text line."""
        event = self.run.event
        return (f"{self.table}@{self.snapshot or '?'} (owner {self.owner or 'none'}, tier "
                f"{self.tier if self.tier is not None else 'none'}) <- {event.job_name} run {event.run_id} at "
                f"{event.event_time}, read {self.read[0]}@{self.read[1]}")


def trace_forward(history: LineageHistory, table: TableRef, snapshot: str,
                  about: Callable[[TableRef], tuple[str | None, int | None]] | None = None) -> list[Contaminated]:
    """Returns every output snapshot that read the snapshot, or read an output that did, and so on, in the
    order reached (nearest first), each with its owner and tier from `about(table)`. Raises
    SnapshotNotInLineageError when no COMPLETE event of the history wrote or read the snapshot."""
    key = (table, snapshot)
    if key not in history.writers and key not in history.readers:
        raise SnapshotNotInLineageError(f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
                                        "snapshot; check the snapshot id, or that the runs near it sent events.")
    with paused_collection():  # thousands of answers at once: the collector would rescan them as they grow
        return _contaminated(history.readers, key, about)


def _contaminated(readers: dict[Snapshot, list[RunRecord]], key: Snapshot,
                  about: Callable[[TableRef], tuple[str | None, int | None]] | None) -> list[Contaminated]:
    """Returns what trace_forward does, breadth first from `key`. A run that read two contaminated snapshots is
    listed once per snapshot; its outputs are queued the first time only."""
    found: list[Contaminated] = []
    add = found.append
    seen: set[Snapshot] = {key}
    done: set[RunRecord] = set()  # runs whose outputs are queued (a set of records: hashed by identity)
    known: dict[TableRef, tuple[str | None, int | None]] = {}  # table -> about(table), asked once per table
    nobody = (None, None)
    queue = deque([key])
    while queue:
        read = queue.popleft()
        for run in readers.get(read, ()):
            first = run not in done
            if first:
                done.add(run)
            for out_table, version in run.outputs:
                if about is None:
                    owner, tier = nobody
                else:
                    found_about = known.get(out_table)
                    if found_about is None:
                        found_about = known[out_table] = about(out_table)
                    owner, tier = found_about
                add(Contaminated(run, read, out_table, version, owner, tier))
                if first and version is not None and (out_table, version) not in seen:
                    seen.add((out_table, version))
                    queue.append((out_table, version))
    return found
