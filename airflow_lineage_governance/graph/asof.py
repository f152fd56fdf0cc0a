"""The lineage history as of a time, read lazily for walks (impact, provenance).

An edge is there when the run of its job chosen as of that time stated it (or a person declared it, or the DAG files
design it). No graph is built: a walk looks at the edges of the columns it reaches only. Each edge's evidence (run, try,
snapshots, SQL hash, source, staleness) comes from the run record that stated it.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime, timedelta

from airflow_lineage_governance.graph.build import Edge, LineageGraph
from airflow_lineage_governance.graph.evidence import CONFIDENCE_OF, Evidence
from airflow_lineage_governance.graph.history import INF, LineageHistory
from airflow_lineage_governance.graph.nodes import LineageNode, Ordered
from airflow_lineage_governance.graph.records import RunRecord, Shape
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeSource
from airflow_lineage_governance.refs import ColumnRef, TableRef

Node = ColumnRef | TableRef
EVERY_SOURCE = (EdgeSource.OBSERVED, EdgeSource.DECLARED, EdgeSource.DESIGNED)
UNKNOWN = 255
WORK_OUT_ALL_AFTER = 1024  # shapes worked out one by one before a view works out all at once


class AsOf:
    """The history as of `at` (None: now) for walks; edges of runs older than `at - active_since` are stale.

    :param sources: the edge sources walked (observed, declared and designed by default).
    """

    def __init__(
        self,
        history: LineageHistory,
        at: datetime | None = None,
        active_since: timedelta | None = None,
        sources: tuple[EdgeSource, ...] = EVERY_SOURCE,
    ) -> None:
        self.history, self.at, self.active_since = history, at, active_since
        self.sources = frozenset(sources)
        self.stale_before = (at or datetime.now(UTC)) - active_since if active_since is not None else None
        self._chosen: dict[str, RunRecord | None] = {}
        self._at = at.timestamp() if at is not None else None
        self._stale_at = self.stale_before.timestamp() if self.stale_before is not None else None
        self._holds = bytearray([UNKNOWN]) * len(history.shapes)  # by shape serial: its `state`
        self._worked_out = 0
        self.complete = False  # every shape's state is worked out (no UNKNOWN left)
        self._written: dict[TableRef, RunRecord | None] = {}

    def run_of(self, job: str) -> RunRecord | None:
        """Return the job's latest COMPLETE at or before the view's time, or None."""
        try:
            return self._chosen[job]
        except KeyError:
            record = self._chosen[job] = self.history.run_at(job, self.at)
            return record

    def _current(self, edge: Edge, shape: Shape) -> bool:
        return self.holds(shape.serial)

    def holds(self, serial: int) -> bool:
        """Return whether the shape of that serial holds as of the view's time.

        A declaration or design of a source walked, or the shape of its job's run chosen as of that time (worked out
        once per view).
        """
        return self.state(serial) != 0

    def state(self, serial: int) -> int:
        """Return 0 when the shape of that serial does not hold as of the view's time, else 1 + its glance.

        The glance is `reach.mark`: its confidence's rank twice, plus 1 when its run is stale; worked out once per view.
        """
        known = self._holds
        if serial < len(known) and known[serial] != UNKNOWN:
            return known[serial]
        self._worked_out += 1
        if self._worked_out == WORK_OUT_ALL_AFTER:
            self.work_out_all()
            return self._holds[serial] if serial < len(self._holds) else 0
        history = self.history
        static = history.static_sources.get(serial)
        if static is not None:
            state = self._static_state(static)
        elif EdgeSource.OBSERVED in self.sources and history.holds_at(serial, self._at):
            state = 1 + self._stale(serial)
        else:
            state = 0
        if serial >= len(known):  # a shape added after the view was made
            known.extend(bytes([UNKNOWN]) * (serial + 1 - len(known)))
        known[serial] = state
        return state

    def work_out_all(self) -> None:
        """Works out the state of every shape now (a walk that meets thousands of shapes then reads them all at once).

        `complete` says it is done.
        """
        history, at, sources = self.history, self._at, self.sources
        count = len(history.shapes)
        known = self._holds
        known[:] = bytes(count)  # in place: a walk holds the array
        if EdgeSource.OBSERVED in sources:
            stale = self._stale
            if at is None:
                holding = [s for s, until in enumerate(history.stretch_until) if until == INF]
                holding = [s for s in holding if history.stretch_from[s] != INF]
            else:
                holding = [
                    s
                    for s, (start, until) in enumerate(zip(history.stretch_from, history.stretch_until, strict=True))
                    if start <= at < until
                ]
                holding.extend(
                    s
                    for s, stretches in history.earlier_stretches.items()
                    if any(start <= at < until for start, until in stretches)
                )
            for serial in holding:
                known[serial] = 1 + stale(serial)
        for serial, source in history.static_sources.items():
            known[serial] = self._static_state(source)
        self.complete = True

    def _static_state(self, source: EdgeSource) -> int:
        """Return the state of a declared or designed shape: 1 + its source's rank twice when walked, else 0."""
        return 1 + CONFIDENCE_RANK[CONFIDENCE_OF[source]] * 2 if source in self.sources else 0

    def _stale(self, serial: int) -> bool:
        """Return whether the run that holds the observed shape as of the view's time is stale."""
        if self._stale_at is None:
            return False
        history, at = self.history, self._at
        start = history.stretch_from[serial]
        if start >= self._stale_at and (at is None or start <= at):
            return False  # the run is in the shape's latest stretch, which began inside the window
        times = history.times[history.shapes[serial].job]
        return times[(bisect_right(times, at) if at is not None else len(times)) - 1] < self._stale_at

    def _holding(self, ordered: Ordered) -> list[tuple[Edge, LineageNode]]:
        """Return the edges of a node's entries that hold as of the view's time, in the order given.

        Each with the node at its other end, each (source, target, type, subtype) once.
        """
        found: list[tuple[Edge, LineageNode]] = []
        keys: set[tuple[object, ...]] = set()
        entries, serials = ordered.entries, ordered.serials
        known, state_of = self._holds, self.state
        size = len(known)
        for index, serial in enumerate(serials):
            state = known[serial] if serial < size else UNKNOWN
            if state == 0 or state == UNKNOWN and not state_of(serial):
                continue
            edge, _, other = entries[index]
            key = edge[:4]
            if key not in keys:
                keys.add(key)
                found.append((edge, other))
        return found

    def leaving(self, node: LineageNode) -> list[tuple[Edge, LineageNode]]:
        """Return the edges leaving the node as of the view's time, each with its target's node.

        Ordered by target, type, subtype and source.
        """
        return self._holding(node.leaving())

    def entering(self, node: LineageNode) -> list[tuple[Edge, LineageNode]]:
        """Return the edges entering the node as of the view's time, each with its source's node.

        DIRECT first, then by source.
        """
        return self._holding(node.entering())

    def out_edges(self, column: ColumnRef) -> list[Edge]:
        """Return the edges leaving the column as of the view's time, by target, type, subtype and source."""
        node = self.history.nodes.get(column)
        return [edge for edge, _ in self.leaving(node)] if node is not None else []

    def in_edges(self, ref: Node) -> list[Edge]:
        """Return the edges entering the column or table as of the view's time, DIRECT first, then by source."""
        node = self.history.nodes.get(ref)
        return [edge for edge, _ in self.entering(node)] if node is not None else []

    def columns_of(self, table: TableRef) -> list[ColumnRef]:
        """Return the table's columns as its writer's run as of the view's time names them.

        Else every column the history ever named for it.
        """
        return self._columns_now(table)

    def _columns_now(self, table: TableRef) -> list[ColumnRef]:
        known = self.history.columns.get(table, {})
        for job in sorted(self.history.writers_of.get(table, ())):
            record = self.run_of(job)
            if record is not None and table in record.shape.outputs:
                names = record.shape.columns.get(table, [])
                return [known.get(name) or ColumnRef(table, name) for name in names]
        return list(known.values())

    def knows(self, column: ColumnRef) -> bool:
        """Returns True when any run, declaration or design, at any time, names the column."""
        return column.field in self.history.columns.get(column.table, {})

    def name_of(self, ref: Node) -> str:
        """Return the dotted name of the ref (made once per ref and history)."""
        return self.history.name_of(ref)

    def record_of(self, edge: Edge) -> RunRecord | None:
        """Return the record that states the edge as of the view's time."""
        if edge.source_kind is not EdgeSource.OBSERVED:
            return next((r for r in self.history.static if r.job == edge.job and r.source is edge.source_kind), None)
        return self.run_of(edge.job)

    def evidence(self, edge: Edge) -> Evidence:
        """Return the edge's evidence as of the view's time."""
        if edge.source_kind is EdgeSource.OBSERVED:
            job = edge.job
            record = self._chosen[job] if job in self._chosen else self.run_of(job)
            stale = record is not None and self.stale_before is not None and record.event.at < self.stale_before
            return Evidence(edge, record, stale)
        record = self.record_of(edge)
        return Evidence(edge, record, self.is_stale(record))

    def is_stale(self, record: RunRecord | None) -> bool:
        """Return True when the record is an observed run older than the `active_since` window."""
        return (
            record is not None
            and record.source is EdgeSource.OBSERVED
            and self.stale_before is not None
            and record.event.at < self.stale_before
        )

    def retired_from(self, column: ColumnRef) -> list[Evidence]:
        """Return the edges leaving the column that only earlier runs stated; always stale.

        Not the run of their job as of the view's time: each comes with the last run at or before that time that stated
        it.
        """
        found: dict[tuple[Node, Node, str, str, str], Evidence] = {}
        node = self.history.nodes.get(column)
        entries = node.leaving()[0] if node is not None else ()
        holding = {
            (edge.source, edge.target, edge.type, edge.subtype, edge.job)
            for edge, shape, _ in entries
            if shape.static is None and self._current(edge, shape)
        }
        for edge, shape, _ in entries:
            if shape.static is not None or self._current(edge, shape):
                continue
            key = (edge.source, edge.target, edge.type, edge.subtype, edge.job)
            if key in holding:
                continue  # the job's run at the time still states it: not retired
            record = self._last_with(edge.job, shape)
            known = found.get(key)
            if record is not None and (
                known is None or known.record is None or record.event.order > known.record.event.order
            ):
                found[key] = Evidence(edge, record, True)
        return sorted(found.values(), key=lambda e: (str(e.edge.target), e.edge.type, e.edge.subtype, e.edge.job))

    def _last_with(self, job: str, shape: Shape) -> RunRecord | None:
        current = self.run_of(job)
        if current is None:
            return None  # the job had not run yet: its edges are not retired, they are to come
        records = self.history.runs[job]
        for index in range(bisect_right(records, current.event.order, key=lambda r: r.event.order) - 1, -1, -1):
            if records[index].shape is shape:
                return records[index]
        return None

    def last_write(self, table: TableRef) -> RunRecord | None:
        """Return the latest observed run, at or before the view's time, that wrote the table."""
        if table in self._written:
            return self._written[table]
        chosen = [
            r
            for r in (self.run_of(job) for job in self.history.writers_of.get(table, ()))
            if r is not None and table in r.shape.outputs
        ]
        found = self._written[table] = max(chosen, key=lambda r: r.event.order, default=None)
        return found


def stale_jobs(history: LineageHistory, at: datetime | None, active_since: timedelta | None) -> list[str]:
    """Return the jobs whose latest COMPLETE as of `at` (None: now) is older than `active_since` before it.

    Their edges are stale. Sorted; none without a window.
    """
    view = AsOf(history, at, active_since)
    return sorted(job for job in history.runs if view.is_stale(view.run_of(job)))


def view_of(lineage: LineageGraph | AsOf) -> AsOf | None:
    """Return the as-of view a walk can take evidence from.

    The view itself, the view of the history a graph was chosen from (graph_as_of), or None for a graph built without
    history.
    """
    if isinstance(lineage, AsOf):
        return lineage
    if lineage.history is not None:
        return AsOf(lineage.history, lineage.at)
    return None
