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


@dataclass
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
    if (table, snapshot) not in history.writers and (table, snapshot) not in history.readers:
        raise SnapshotNotInLineageError(f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
                                        "snapshot; check the snapshot id, or that the runs near it sent events.")
    seen: set[Snapshot] = set()

    def origin(of: TableRef, version: str | None) -> Origin:
        run = history.writers.get((of, version)) if version is not None else None
        found = Origin(of, version, run)
        if version is None or run is None:
            return found
        if (of, version) in seen:
            found.seen_before = True
            return found
        seen.add((of, version))
        found.inputs = [origin(t, v) for t, v in run.inputs]
        return found

    return origin(table, snapshot)


@dataclass(frozen=True)
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
    if (table, snapshot) not in history.writers and (table, snapshot) not in history.readers:
        raise SnapshotNotInLineageError(f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
                                        "snapshot; check the snapshot id, or that the runs near it sent events.")
    found: list[Contaminated] = []
    seen: set[Snapshot] = {(table, snapshot)}
    queue = deque([(table, snapshot)])
    while queue:
        read = queue.popleft()
        for run in history.readers.get(read, ()):
            for out_table, version in run.outputs:
                owner, tier = about(out_table) if about is not None else (None, None)
                found.append(Contaminated(run, read, out_table, version, owner, tier))
                if version is not None and (out_table, version) not in seen:
                    seen.add((out_table, version))
                    queue.append((out_table, version))
    return found
