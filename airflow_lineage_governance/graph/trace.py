"""Incident tracing by snapshot.

Which run wrote a table's snapshot (its try, its SQL hash), which snapshot of each input it read, recursively to the
sources; and forwards, every output snapshot that read a contaminated snapshot, directly or through others. Look-ups in
the history's indexes (snapshot written -> run, snapshot read -> runs), no scan, no recursion. At 1,000,000 events the
widest traces meet thousands of snapshots: both run with the cyclic collector paused, and a trace back keeps its
depth-first order in a few arrays, its origins below the root made when read, so that the collection after it has a few
objects to scan, not thousands.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.errors import GraphError
from airflow_lineage_governance.graph.events import paused_collection
from airflow_lineage_governance.graph.history import LineageHistory
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.refs import TableRef

Snapshot = tuple[TableRef, str]


class SnapshotNotInLineageError(GraphError):
    """Raised when no COMPLETE event of the history wrote or read the snapshot asked about (or the text names none).

    The sentence says how to name one.
    """


def snapshot_asked(text: str) -> Snapshot:
    """Return the (table, snapshot) a person's `namespace.table@SNAPSHOT` names.

    Raises SnapshotNotInLineageError saying how to write it.
    """
    name, at, snapshot = text.rpartition("@")
    try:
        table = TableRef.parse(name)
    except InvalidNameError:
        table = None
    if not at or not snapshot or table is None:
        raise SnapshotNotInLineageError(
            f"{text}: name a snapshot as namespace.table@SNAPSHOT_ID (the datasetVersion of the table's version facet)."
        )
    return table, snapshot


class Origin:
    """A snapshot and where it came from.

    The run that wrote it (None: a source, or written by no run the history holds) and the origin of each input snapshot
    that run read (`inputs`).

    A trace holds thousands of origins; those below the root are made when `inputs` is first read, from the
    trace's depth-first order (`_Trace`), so that the answer keeps a few objects alive, not thousands.
    """

    __slots__ = ("table", "snapshot", "run", "seen_before", "_inputs", "_trace", "_at")

    def __init__(
        self,
        table: TableRef,
        snapshot: str | None,
        run: RunRecord | None = None,
        inputs: list[Origin] | None = None,
        seen_before: bool = False,
    ) -> None:
        self.table = table
        self.snapshot = snapshot
        self.run = run
        self.seen_before = seen_before  # already traced higher up (a cycle, or a snapshot two inputs share)
        self._inputs = [] if inputs is None else inputs
        self._trace: _Trace | None = None
        self._at = 0

    @property
    def inputs(self) -> list[Origin]:
        """Return the origin of each input snapshot the run read, in the order its event named them."""
        if self._trace is not None:
            self._inputs, self._trace = self._trace.inputs_of(self._at), None
        return self._inputs

    @inputs.setter
    def inputs(self, inputs: list[Origin]) -> None:
        self._inputs, self._trace = inputs, None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Origin) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.table, self.snapshot, self.run, self.inputs, self.seen_before) == (
            other.table,
            other.snapshot,
            other.run,
            other.inputs,
            other.seen_before,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as a dataclass with eq)

    def __repr__(self) -> str:
        return (
            f"Origin(table={self.table!r}, snapshot={self.snapshot!r}, run={self.run!r}, "
            f"inputs={self.inputs!r}, seen_before={self.seen_before!r})"
        )

    def to_dict(self) -> dict[str, object]:
        """Return the origin as the CLI's JSON shows it (the run's evidence, then the inputs, recursively)."""
        root = self._as_dict()
        stack = [(self, root)]
        while stack:  # depth first with a stack: a chain of thousands of runs is no recursion error
            origin, into = stack.pop()
            for read in origin.inputs:
                entry = read._as_dict()
                into["inputs"].append(entry)
                stack.append((read, entry))
        return root

    def _as_dict(self) -> dict[str, Any]:
        return {
            "table": str(self.table),
            "snapshot": self.snapshot,
            "written_by": self.run.to_dict() if self.run is not None else None,
            "seen_before": self.seen_before,
            "inputs": [],
        }

    def lines(self, depth: int = 0) -> list[str]:
        """Return the origin as indented text lines, one per snapshot (its inputs' lines after it, indented)."""
        found = []
        stack = [(self, depth)]
        while stack:
            origin, at = stack.pop()
            found.append(origin._line(at))
            inputs = origin.inputs
            stack.extend((inputs[i], at + 1) for i in range(len(inputs) - 1, -1, -1))
        return found

    def _line(self, depth: int) -> str:
        pad = "  " * depth
        run = self.run
        if run is None:
            return f"{pad}{self.table}@{self.snapshot or '?'}: a source (no run in the lineage wrote it)"
        event = run.event
        return (
            f"{pad}{self.table}@{self.snapshot or '?'} <- {event.job_name} run {event.run_id} try "
            f"{event.try_number if event.try_number is not None else '?'} at {event.event_time}, SQL "
            f"{run.sql_hash or 'unknown'}" + (" (traced above)" if self.seen_before else "")
        )


class _Trace:
    """A trace back in depth-first order, each run's inputs in the order its event named them.

    As a recursion takes them: per place, the snapshot, the run that wrote it (None: a source), whether it was traced
    higher up, and the place after its inputs (and theirs, and so on).
    """

    __slots__ = ("snapshots", "runs", "seen", "ends")

    def __init__(self, writers: dict[Snapshot, RunRecord], key: Snapshot) -> None:
        root = writers.get(key)
        snapshots: list[tuple[TableRef, str | None]] = [key]
        runs: list[RunRecord | None] = [root]
        seen = bytearray(1)
        ends = array("q", (1,))
        met: dict[tuple[TableRef, str | None], object] = {key: root}  # snapshot -> the run that wrote it, or None
        stack: list[tuple[TableRef, str | None] | int] = []
        if root is not None:
            stack.append(~0)  # where the root's inputs end, taken once each of them is traced
            stack.extend(reversed(root.inputs))
        pop, push, extend = stack.pop, stack.append, stack.extend
        place = 0
        while stack:
            item = pop()
            if isinstance(item, int):
                ends[~item] = place + 1
                continue
            place += 1
            snapshots.append(item)
            ends.append(place + 1)
            run = met.get(item, met)
            if run is met:
                run = met[item] = writers.get(item)  # type: ignore[arg-type]  # (no key has the snapshot None)
                seen.append(0)
                if run is not None:
                    push(~place)
                    extend(reversed(run.inputs))
            else:  # met before: a source again, or a written snapshot traced above
                seen.append(run is not None)
            runs.append(run)  # type: ignore[arg-type]
        self.snapshots, self.runs, self.seen, self.ends = snapshots, runs, seen, ends

    def origin(self, at: int) -> Origin:
        """Return the origin at place `at`, its inputs made when read."""
        table, snapshot = self.snapshots[at]
        found = Origin(table, snapshot, self.runs[at], None, self.seen[at] == 1)
        if self.ends[at] > at + 1:
            found._trace, found._at = self, at
        return found

    def inputs_of(self, at: int) -> list[Origin]:
        """Return the origins of the inputs of the place `at`.

        The first place after it, then each one after the end of the last.
        """
        found = []
        end, ends = self.ends[at], self.ends
        at += 1
        while at < end:
            found.append(self.origin(at))
            at = ends[at]
        return found


def trace_back(history: LineageHistory, table: TableRef, snapshot: str) -> Origin:
    """Return the origin of the snapshot, recursively to the sources.

    Raises SnapshotNotInLineageError when no COMPLETE event of the history wrote or read it.
    """
    key = (table, snapshot)
    if key not in history.writers and key not in history.readers:
        raise SnapshotNotInLineageError(
            f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
            "snapshot; check the snapshot id, or that the runs near it sent events."
        )
    with paused_collection():  # a trace meets thousands of snapshots: their look-ups allocate as they go
        return _Trace(history.writers, key).origin(0)


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
        """Return the contaminated output as the CLI's JSON shows it."""
        return {
            "table": str(self.table),
            "snapshot": self.snapshot,
            "read": f"{self.read[0]}@{self.read[1]}",
            "owner": self.owner,
            "tier": self.tier,
            "run": self.run.to_dict(),
        }

    def line(self) -> str:
        """Return the contaminated output as one text line."""
        event = self.run.event
        return (
            f"{self.table}@{self.snapshot or '?'} (owner {self.owner or 'none'}, tier "
            f"{self.tier if self.tier is not None else 'none'}) <- {event.job_name} run {event.run_id} at "
            f"{event.event_time}, read {self.read[0]}@{self.read[1]}"
        )


def trace_forward(
    history: LineageHistory,
    table: TableRef,
    snapshot: str,
    about: Callable[[TableRef], tuple[str | None, int | None]] | None = None,
) -> list[Contaminated]:
    """Return every output snapshot that read the snapshot, or read an output that did, and so on.

    In the order reached (nearest first), each with its owner and tier from `about(table)`. Raises
    SnapshotNotInLineageError when no COMPLETE event of the history wrote or read the snapshot.
    """
    key = (table, snapshot)
    if key not in history.writers and key not in history.readers:
        raise SnapshotNotInLineageError(
            f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
            "snapshot; check the snapshot id, or that the runs near it sent events."
        )
    with paused_collection():  # thousands of answers at once: the collector would rescan them as they grow
        return _contaminated(history.readers, key, about)


def _contaminated(
    readers: dict[Snapshot, list[RunRecord]],
    key: Snapshot,
    about: Callable[[TableRef], tuple[str | None, int | None]] | None,
) -> list[Contaminated]:
    """Return what trace_forward does, breadth first from `key`.

    A run that read two contaminated snapshots is listed once per snapshot; its outputs are queued the first time only.
    """
    found: list[Contaminated] = []
    add = found.append
    seen: set[tuple[TableRef, str | None]] = {key}
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
            for wrote in run.outputs:
                table, snapshot = wrote
                if about is None:
                    owner, tier = nobody
                else:
                    asked = known.get(table)
                    if asked is None:
                        asked = known[table] = about(table)
                    owner, tier = asked
                add(_contaminated_output(run, read, table, snapshot, owner, tier))
                if first and snapshot is not None:
                    size = len(seen)
                    seen.add(wrote)
                    if len(seen) > size:  # one look-up, not two
                        queue.append(wrote)  # type: ignore[arg-type]
    return found


_new = object.__new__
_set_run, _set_read, _set_table, _set_snapshot, _set_owner, _set_tier = (
    Contaminated.__dict__[name].__set__ for name in ("run", "read", "table", "snapshot", "owner", "tier")
)


def _contaminated_output(
    run: RunRecord, read: Snapshot, table: TableRef, snapshot: str | None, owner: str | None, tier: int | None
) -> Contaminated:
    """Return Contaminated(run, read, table, snapshot, owner, tier), in half the time.

    A frozen dataclass's __init__ sets each field through object.__setattr__, which looks the field up again each time;
    this calls each slot's own setter.
    """
    found = _new(Contaminated)
    _set_run(found, run)
    _set_read(found, read)
    _set_table(found, table)
    _set_snapshot(found, snapshot)
    _set_owner(found, owner)
    _set_tier(found, tier)
    return found
