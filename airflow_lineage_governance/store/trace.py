"""Tracing by snapshot, answered in the database.

Which run wrote a table's snapshot (its try, its SQL hash), which snapshot of each input it read, recursively to the
sources (`trace_back`); and forwards, every output snapshot that read a snapshot, directly or through others
(`trace_forward`).

A recursive query finds the runs a trace meets and returns each one's own row and its tables' rows, each naming the
run's place among them by instant, then run id (`_run_rows`); Python names their jobs and tables from the names it keeps
(`names`) and lays them out in the order a person reads them. On PostgreSQL the recursion walks `run_datasets` by its
indexes of snapshots and runs, carrying the runs' rows; on DuckDB it walks `snapshot_reads` from the snapshot's rows
(found by its key's span, `snapshot_spans`) within a range of instants, then beyond it only where a snapshot it reached
has rows, and reads the rows of the runs the walk met (forward, each row it followed names its run; back, the latest
writers of the snapshots it reached at the instants it met). A snapshot's writer is the latest COMPLETE that named it as
an output (by instant, then run id), whatever order the events arrived in. A run's inputs and outputs are listed by
table name.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import wraps
from operator import itemgetter
from typing import Any, NamedTuple, ParamSpec, TypeVar

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.events import paused_collection
from airflow_lineage_governance.kinds import EdgeSource
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.engine import Engine, Row
from airflow_lineage_governance.store.errors import SnapshotNotInStoreError
from airflow_lineage_governance.store.ids import SNAPSHOT_KEY, snapshot_key
from airflow_lineage_governance.store.ingest import dataset_id
from airflow_lineage_governance.store.names import names
from airflow_lineage_governance.store.schema import FAR_APART_US

Snapshot = tuple[TableRef, str]
Versions = tuple[tuple[TableRef, str | None], ...]


def snapshot_asked(text: str) -> Snapshot:
    """Return the (table, snapshot) a person's `namespace.table@SNAPSHOT` names.

    Args:
        text: The snapshot as a person writes it.

    Returns:
        The table and the snapshot id.

    Raises:
        SnapshotNotInStoreError: The text names no snapshot; the sentence says how to write one.
    """
    name, at, snapshot = text.rpartition("@")
    try:
        table = TableRef.parse(name)
    except InvalidNameError:
        table = None
    if not at or not snapshot or table is None:
        raise SnapshotNotInStoreError(
            f"{text}: name a snapshot as namespace.table@SNAPSHOT_ID (the datasetVersion of the table's version facet)."
        )
    return table, snapshot


class StoredRun(NamedTuple):
    """A COMPLETE run as a trace shows it.

    Its job, run id, try, time, SQL hash and the snapshots it read and wrote (by table name).
    """

    job: str
    run_id: str
    try_number: int | None
    event_time: str
    sql_hash: str | None
    at_us: int
    inputs: Versions = ()
    outputs: Versions = ()

    def to_dict(self) -> dict[str, object]:
        """Return the run's evidence as the CLI's JSON shows it."""
        return {
            "job": self.job,
            "source": str(EdgeSource.OBSERVED),
            "run_id": self.run_id or None,
            "try": self.try_number,
            "event_time": self.event_time or None,
            "sql_hash": self.sql_hash,
            "inputs": {str(t): v for t, v in self.inputs},
            "outputs": {str(t): v for t, v in self.outputs},
        }


@dataclass
class StoredOrigin:
    """A snapshot and where it came from.

    The run that wrote it (None: a source, or written by no run the store holds), and the origin of each input snapshot
    that run read; `seen_before` when it was traced higher up (a cycle, or a snapshot two inputs share).
    """

    table: TableRef
    snapshot: str | None
    run: StoredRun | None = None
    inputs: list[StoredOrigin] = field(default_factory=list)
    seen_before: bool = False

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
            found.append(origin.line(at))
            stack.extend((read, at + 1) for read in reversed(origin.inputs))
        return found

    def line(self, depth: int = 0) -> str:
        """Return this snapshot's own line, indented by `depth`."""
        pad = "  " * depth
        run = self.run
        if run is None:
            return f"{pad}{self.table}@{self.snapshot or '?'}: a source (no run in the lineage wrote it)"
        return (
            f"{pad}{self.table}@{self.snapshot or '?'} <- {run.job} run {run.run_id} try "
            f"{run.try_number if run.try_number is not None else '?'} at {run.event_time}, SQL "
            f"{run.sql_hash or 'unknown'}" + (" (traced above)" if self.seen_before else "")
        )


class StoredContaminated(NamedTuple):
    """An output snapshot that read a contaminated snapshot.

    The run, what it read, what it wrote, and the written table's owner and tier.
    """

    run: StoredRun
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
        return (
            f"{self.table}@{self.snapshot or '?'} (owner {self.owner or 'none'}, tier "
            f"{self.tier if self.tier is not None else 'none'}) <- {self.run.job} run {self.run.run_id} at "
            f"{self.run.event_time}, read {self.read[0]}@{self.read[1]}"
        )


def _run_rows(engine: Engine, met: str, datasets: str, completes: str = "completes") -> str:
    """Return the CTE and the query of the rows of `_runs` of the runs a trace met.

    `met` is a relation with the run key and instant of each run met (a run may be in it more than once), `datasets`
    one of the rows of `run_datasets` of those runs (`d`'s), and `completes` the relation their COMPLETEs are read from
    (which also names each row of `datasets` by its run's id).
    Each row names its run by the run's place among them by instant, then run id (from 0; the database numbers the
    runs, never sorting the rows): each run with a COMPLETE is one row of its own (kind 0: its job's id, instant, run
    id, time, SQL hash, try), and has one row per input (kind 2) and per output (3), each its table's id and
    snapshot, the rest NULL: the few values Python reads, numbers where Python names them. The rows come in no order.
    """
    text = engine.text_order
    return (
        "numbered AS MATERIALIZED (SELECT c.run_key, c.run_id, c.at_us, c.event_time, c.try_number, c.sql_hash, "
        f"c.job_id, ROW_NUMBER() OVER (ORDER BY c.at_us, c.run_id{text}) - 1 AS place FROM (SELECT DISTINCT run_key, "
        f"at_us FROM {met}) AS r JOIN {completes} c ON c.run_key = r.run_key AND c.at_us = r.at_us) "
        "SELECT place, 0, job_id, CAST(NULL AS TEXT), at_us, run_id, event_time, sql_hash, try_number FROM numbered "
        "UNION ALL SELECT r.place, CASE WHEN d.role = 'input' THEN 2 ELSE 3 END, d.dataset_id, d.snapshot, NULL, NULL, "
        f"NULL, NULL, NULL FROM {datasets} JOIN numbered r ON r.run_key = d.run_key AND r.at_us = d.at_us"
    )


def _latest_writer(engine: Engine, alias: str, writers: str) -> str:
    """Return the condition that the output row `alias` is its snapshot's latest writer (by instant, then run id).

    `writers` is the relation of output rows it is compared with, aliased `l`, ending in its WHERE clause.
    """
    text = engine.text_order
    return (
        f"NOT EXISTS (SELECT 1 FROM {writers} AND l.dataset_id = {alias}.dataset_id AND l.snapshot = "
        f"{alias}.snapshot AND (l.at_us > {alias}.at_us OR l.at_us = {alias}.at_us AND "
        f"l.run_id{text} > {alias}.run_id{text}))"
    )


def known(engine: Engine, table: TableRef, snapshot: str) -> bool:
    """Return True when some COMPLETE in the store wrote or read the snapshot."""
    table_id = dataset_id(table)
    if engine.dialect == "duckdb":  # the rows of the runs within its key's span
        span = _span(engine, snapshot_key(table_id, snapshot))
        return span is not None and bool(
            engine.query(
                "SELECT 1 FROM run_datasets WHERE at_us BETWEEN ? AND ? AND dataset_id = ? AND snapshot = ? LIMIT 1",
                [*span, table_id, snapshot],
            )
        )
    return bool(
        engine.query("SELECT 1 FROM run_datasets WHERE dataset_id = ? AND snapshot = ? LIMIT 1", [table_id, snapshot])
    )


def _span(engine: Engine, key: int) -> tuple[int, int] | None:
    """Return the earliest and latest instant of the `snapshot_reads` rows of a snapshot key, None when it has none."""
    rows = engine.query("SELECT first_at_us, last_at_us FROM snapshot_spans WHERE snapshot_key = ?", [key])
    return (int(rows[0][0]), int(rows[0][1])) if rows else None


def latest_snapshot(engine: Engine, table: TableRef) -> str | None:
    """Return the snapshot of `table` the latest COMPLETE writing it wrote (by instant, then run id), None when none.

    Args:
        engine: The store's engine.
        table: The table.

    Returns:
        The snapshot id, as the event's `version` facet named it.
    """
    text = engine.text_order
    rows = engine.query(  # the writers at the latest instant, told apart by their runs' ids
        "SELECT d.snapshot FROM run_datasets d JOIN completes c ON c.run_key = d.run_key AND c.at_us = d.at_us WHERE "
        "d.dataset_id = ? AND d.role = 'output' AND d.snapshot IS NOT NULL AND d.at_us = (SELECT MAX(at_us) FROM "
        "run_datasets WHERE dataset_id = ? AND role = 'output' AND snapshot IS NOT NULL) "
        f"ORDER BY c.run_id{text} DESC LIMIT 1",
        [dataset_id(table), dataset_id(table)],
    )
    return str(rows[0][0]) if rows else None


def _refuse_unknown(engine: Engine, table: TableRef, snapshot: str) -> None:
    if not known(engine, table, snapshot):
        raise SnapshotNotInStoreError(
            f"{table}@{snapshot}: no received COMPLETE event wrote or read this "
            "snapshot; check the snapshot id, or that the runs near it sent events."
        )


_Facts = tuple[str, str, int | None, str, str | None, int]
"""A run's job, run id, try, time, SQL hash and instant, as `StoredRun` takes them."""


def _runs(engine: Engine, rows: Sequence[Row]) -> list[StoredRun]:
    """Return the runs of the rows, in their places' order (by instant, then run id).

    The rows are `_run_rows`': each run's own row, and its inputs' and outputs', in any order. Their jobs and tables
    are named from the names the engine keeps (`names`), read again when a row names one they lack; each run's inputs
    and outputs are sorted by table name (`_by_name`).
    """
    known = names(engine)
    tables = known.tables
    facts: dict[int, _Facts] = {}
    read: dict[int, list[tuple[str, TableRef, str | None]]] = {}
    wrote: dict[int, list[tuple[str, TableRef, str | None]]] = {}
    for place, kind, key, snapshot, at_us, run_id, event_time, sql_hash, try_number in rows:
        if kind:
            table = tables.get(key)
            if table is None:
                known = names(engine, again=True)
                tables = known.tables
                table = tables[key]
            by_place = read if kind == 2 else wrote
            versions = by_place.get(place)
            if versions is None:
                versions = by_place[place] = []
            versions.append((table[0], table[1], snapshot))
            continue
        job = known.jobs.get(key)
        if job is None:
            known = names(engine, again=True)
            tables = known.tables
            job = known.jobs[key]
        facts[place] = (job, run_id, try_number, event_time, sql_hash, at_us)
    new = tuple.__new__  # a run made as the tuple it is: thousands of them in a large trace
    return [
        new(StoredRun, (*facts[place], _by_name(read.get(place, [])), _by_name(wrote.get(place, []))))
        for place in range(len(facts))
    ]


def _by_name(versions: list[tuple[str, TableRef, str | None]]) -> Versions:
    """Return the tables' snapshots (each a table's name, ref and snapshot) sorted by name.

    A run names a table once as an input and once as an output at most (`run_datasets`' key): no two of its inputs,
    nor two of its outputs, share a name.
    """
    if len(versions) < 2:
        return ((versions[0][1], versions[0][2]),) if versions else ()
    versions.sort(key=_NAME)
    return tuple([(table, snapshot) for _, table, snapshot in versions])


_NAME = itemgetter(0)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _uncollected(trace: Callable[_P, _R]) -> Callable[_P, _R]:
    """Return the trace run with Python's cyclic collector paused (`paused_collection`).

    A large trace makes tens of thousands of rows and runs, none in a cycle: the collector would scan everything the
    process holds (every ref the store's other questions read) again and again as they are made, 25 to 70 ms of a
    trace of a few thousand runs at 1,000,000 events.
    """

    @wraps(trace)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with paused_collection():
            return trace(*args, **kwargs)

    return paused


@_uncollected
def trace_back(engine: Engine, table: TableRef, snapshot: str) -> StoredOrigin:
    """Return the origin of the snapshot, recursively to the sources.

    Args:
        engine: The store's engine.
        table: The table.
        snapshot: The snapshot id (the datasetVersion of the table's version facet).

    Returns:
        The snapshot's origin: the run that wrote it and the origin of each snapshot it read, depth first, a
        snapshot met a second time marked `seen_before` and not traced again.

    Raises:
        SnapshotNotInStoreError: No COMPLETE in the store wrote or read the snapshot.
    """
    if engine.dialect == "duckdb":
        rows = _walked(engine, table, snapshot, forward=False)
    else:
        rows = _reached_back(engine, table, snapshot)
    writers: dict[tuple[TableRef, str | None], StoredRun] = {}
    for run in _runs(engine, rows):  # by instant, then run id: each snapshot's latest writer the last
        for output in run.outputs:
            writers[output] = run
    if (table, snapshot) not in writers:  # a source, or a snapshot no COMPLETE named
        _refuse_unknown(engine, table, snapshot)
    root = StoredOrigin(table, snapshot)
    seen: set[Snapshot] = set()
    stack = [root]
    while stack:  # depth first, each run's inputs in order: as a recursion would take them
        origin = stack.pop()
        if origin.snapshot is None:
            continue
        key = (origin.table, origin.snapshot)
        origin.run = writers.get(key)
        if origin.run is None:
            continue
        if key in seen:
            origin.seen_before = True
            continue
        seen.add(key)
        origin.inputs = [StoredOrigin(t, s) for t, s in origin.run.inputs]
        stack.extend(reversed(origin.inputs))
    return root


@_uncollected
def trace_forward(
    engine: Engine,
    table: TableRef,
    snapshot: str,
    about: Callable[[TableRef], tuple[str | None, int | None]] | None = None,
) -> list[StoredContaminated]:
    """Return every output snapshot that read the snapshot, or read an output that did, and so on.

    Args:
        engine: The store's engine.
        table: The table.
        snapshot: The snapshot id (the datasetVersion of the table's version facet).
        about: Returns a table's owner and tier (asked once per table); None leaves both unknown.

    Returns:
        The contaminated outputs nearest first (breadth first; a snapshot's readers by instant, then run id; a
        run's outputs by table name). A run that read two contaminated snapshots is listed once per snapshot.

    Raises:
        SnapshotNotInStoreError: No COMPLETE in the store wrote or read the snapshot.
    """
    if engine.dialect == "duckdb":
        rows = _walked(engine, table, snapshot, forward=True)
    else:
        rows = _reached_forward(engine, table, snapshot)
    readers: defaultdict[tuple[TableRef, str | None], list[StoredRun]] = defaultdict(list)
    for run in _runs(engine, rows):  # by instant, then run id
        for read in run.inputs:
            readers[read].append(run)
    if (table, snapshot) not in readers:  # written and never read, or a snapshot no COMPLETE named
        _refuse_unknown(engine, table, snapshot)
    asked: dict[TableRef, tuple[str | None, int | None]] = {}
    new = tuple.__new__  # an output made as the tuple it is
    found: list[StoredContaminated] = []
    start: tuple[TableRef, str | None] = (table, snapshot)
    seen = {start}
    queue = deque([start])
    while queue:
        read = queue.popleft()
        for run in readers.get(read, ()):
            for output in run.outputs:
                out_table, version = output
                known = asked.get(out_table)
                if known is None:
                    known = asked[out_table] = about(out_table) if about is not None else (None, None)
                found.append(new(StoredContaminated, (run, read, out_table, version, *known)))
                if version is not None and output not in seen:
                    seen.add(output)
                    queue.append(output)
    return found


def _reached_back(engine: Engine, table: TableRef, snapshot: str) -> list[Row]:
    """Return the rows of `_runs` of every writer of each snapshot a trace back meets, recursing over `run_datasets`.

    The recursion's rows are the writers' rows of `run_datasets`: every writer of the snapshot, then every writer of
    each snapshot a writer met read, and so on; `_runs` lays them out by instant, then run id, so the latest writer of
    each snapshot comes last.
    """
    return engine.query(
        "WITH RECURSIVE rows_met (run_key, at_us, role, dataset_id, snapshot) AS (SELECT x.run_key, x.at_us, x.role, "
        "x.dataset_id, x.snapshot FROM run_datasets o JOIN run_datasets x ON x.run_key = o.run_key AND x.at_us = "
        "o.at_us WHERE o.dataset_id = ? AND o.snapshot = ? AND o.role = 'output' UNION SELECT x.run_key, x.at_us, "
        "x.role, x.dataset_id, x.snapshot FROM rows_met i JOIN run_datasets o ON o.dataset_id = i.dataset_id AND "
        "o.snapshot = i.snapshot AND o.role = 'output' JOIN run_datasets x ON x.run_key = o.run_key AND "
        "x.at_us = o.at_us WHERE i.role = 'input' AND i.snapshot IS NOT NULL), "
        f"{_run_rows(engine, 'rows_met', 'rows_met d')}",
        [dataset_id(table), snapshot],
    )


def _reached_forward(engine: Engine, table: TableRef, snapshot: str) -> list[Row]:
    """Return the rows of `_runs` of each snapshot's readers a trace forward meets, recursing over `run_datasets`.

    The recursion's rows are the readers' rows of `run_datasets`: every reader of the snapshot, then every reader of
    each output of a reader met, and so on.
    """
    return engine.query(
        "WITH RECURSIVE rows_met (run_key, at_us, role, dataset_id, snapshot) AS (SELECT x.run_key, x.at_us, x.role, "
        "x.dataset_id, x.snapshot FROM run_datasets i JOIN run_datasets x ON x.run_key = i.run_key AND x.at_us = "
        "i.at_us WHERE i.dataset_id = ? AND i.snapshot = ? AND i.role = 'input' UNION SELECT x.run_key, x.at_us, "
        "x.role, x.dataset_id, x.snapshot FROM rows_met o JOIN run_datasets i ON i.dataset_id = o.dataset_id AND "
        "i.snapshot = o.snapshot AND i.role = 'input' JOIN run_datasets x ON x.run_key = i.run_key AND "
        "x.at_us = i.at_us WHERE o.role = 'output' AND o.snapshot IS NOT NULL), "
        f"{_run_rows(engine, 'rows_met', 'rows_met d')}",
        [dataset_id(table), snapshot],
    )


def _walked(engine: Engine, table: TableRef, snapshot: str, forward: bool) -> list[Row]:
    """Return the rows of `_runs` of the runs a trace meets, walking `snapshot_reads` (DuckDB).

    Back, each met snapshot's writers (the latest kept by `_latest_writer`'s rule); forward, each met snapshot's
    readers. The walk is by key: a key two snapshots share can add rows, never lose one, and the layout follows exact
    names.
    """
    reached, instants, runs = _reached_keys(engine, snapshot_key(dataset_id(table), snapshot), forward)
    if not instants:
        return []
    listed = sorted(instants)
    bounds = (listed[0], listed[-1])
    near = (
        "WITH near AS MATERIALIZED (SELECT * FROM run_datasets WHERE at_us BETWEEN ? AND ? AND at_us IN "
        "(SELECT UNNEST(?::BIGINT[]))), runs AS (SELECT * FROM completes WHERE at_us BETWEEN ? AND ?), "
    )
    if forward:  # the runs met are the readers: each row the walk followed names its run
        met = list(runs)
        return engine.query(
            f"{near}met AS (SELECT UNNEST(?::BIGINT[]) AS run_key, UNNEST(?::BIGINT[]) AS at_us), "
            f"{_run_rows(engine, 'met', 'near d', 'runs')}",
            [*bounds, listed, *bounds, [run for run, _ in met], [at_us for _, at_us in met]],
        )
    key = SNAPSHOT_KEY[engine.dialect].format(alias="m.")
    latest = _latest_writer(engine, "m", writers="found l WHERE TRUE")
    return engine.query(  # the writers met: each snapshot's latest only
        f"{near}found AS MATERIALIZED (SELECT m.dataset_id, m.snapshot, m.run_key, c.run_id, m.at_us FROM near m JOIN "
        f"runs c ON c.run_key = m.run_key AND c.at_us = m.at_us WHERE m.role = 'output' AND m.snapshot IS NOT NULL AND "
        f"{key} IN (SELECT UNNEST(?::BIGINT[]))), met AS (SELECT * FROM found m WHERE {latest}), "
        f"{_run_rows(engine, 'met', 'near d', 'runs')}",
        [*bounds, listed, *bounds, sorted(reached)],
    )


NEAR_US = 3_600_000_000
"""How far (an hour, in microseconds) before and after the instants that reached its keys a DuckDB trace's recursion
looks."""

ROUNDS = 8
"""How many rounds of recursion (each within a range of instants) a DuckDB trace walks before it walks the rest by one
recursion over the whole of `snapshot_reads`."""


class _Walk(NamedTuple):
    """A direction of a walk of `snapshot_reads` (aliased `s`): the key a row leaves, the key it reaches, its run."""

    start: str
    to: str
    run: str


_FORWARD = _Walk("read_key", "written_key", "s.run_key")
_BACK = _Walk("written_key", "read_key", "CAST(NULL AS BIGINT)")


def _reached_keys(engine: Engine, first: int, forward: bool) -> tuple[set[int], set[int], set[tuple[int, int]]]:
    """Return the keys a walk of `snapshot_reads` from `first` reaches, and the instants and runs of the rows followed.

    The first key's rows are read within its span (`snapshot_spans`). From the keys they reach, a round is one
    recursive query over the rows within `NEAR_US` of the instants that reached them (the range), which also returns
    the rows within `FAR_APART_US` beyond the range that leave a key it reached, and the reached keys whose rows lie
    far apart, whose rows beyond the range are then read within their spans. A key not far apart has every row within
    `FAR_APART_US` of the row that reached it, so within the range or just beyond: after a round every row leaving a
    key it reached was followed. The keys the rows beyond reach first are the next round's; after `ROUNDS` rounds, one
    recursive query over the whole table goes on from them. Forward, each row's run (its key and instant) is kept
    too: the readers met; back, no run (the writers met are worked out from the keys reached).
    """
    walk = _FORWARD if forward else _BACK
    reached = {first}
    instants: set[int] = set()
    runs: set[tuple[int, int]] = set()
    span = _span(engine, first)
    if span is None:
        return reached, instants, runs
    rows = engine.query(
        f"SELECT s.{walk.to}, s.at_us, {walk.run} FROM snapshot_reads s WHERE s.at_us BETWEEN ? AND ? AND "
        f"s.{walk.start} = ?",
        [*span, first],
    )
    met: set[int] = set()  # the instants of the rows that reached the keys of `level`, and others
    level = _followed(rows, reached, met, runs)
    for _ in range(ROUNDS):
        if not level:
            break
        instants |= met
        low, high = min(met) - NEAR_US, max(met) + NEAR_US
        met = set()
        level = _followed(_beyond(engine, walk, level, (low, high), reached, (instants, runs)), reached, met, runs)
    instants |= met
    if level:
        _followed(engine.query(_recursion(walk, "snapshot_reads"), [level]), reached, instants, runs)
    return reached, instants, runs


def _beyond(
    engine: Engine,
    walk: _Walk,
    level: list[int],
    within: tuple[int, int],
    reached: set[int],
    met: tuple[set[int], set[tuple[int, int]]],
) -> list[Row]:
    """Walk from the keys of `level` over the rows `within` a range of instants; return the rows beyond leaving a key.

    The keys the walk reaches go into `reached`, its rows' instants and runs into `met`'s. The rows returned are
    those within `FAR_APART_US` beyond the range, and those of the keys far apart anywhere beyond it.
    """
    low, high = within
    start, to = walk.start, walk.to
    near = "(SELECT * FROM snapshot_reads WHERE at_us BETWEEN ? AND ?)"
    beyond = (  # in the same query: the rows just beyond the range that leave a key reached, the keys far apart
        f"SELECT k, at_us, run_key, NULL, 0 FROM walk UNION ALL SELECT s.{to}, s.at_us, {walk.run}, NULL, 1 FROM "
        f"snapshot_reads s WHERE (s.at_us BETWEEN ? AND ? OR s.at_us BETWEEN ? AND ?) AND s.{start} IN (SELECT k FROM "
        "walk) UNION ALL SELECT snapshot_key, first_at_us, NULL, last_at_us, 2 FROM snapshot_spans WHERE far_apart "
        "AND snapshot_key IN (SELECT k FROM walk)"
    )
    rows = engine.query(
        _recursion(walk, near, beyond),
        [level, low, high, low - FAR_APART_US, low - 1, high + 1, high + FAR_APART_US],
    )
    _followed([row[:3] for row in rows if row[4] == 0], reached, *met)
    found = [row[:3] for row in rows if row[4] == 1]
    far = [row for row in rows if row[4] == 2]
    if far:
        found += engine.query(
            f"SELECT s.{to}, s.at_us, {walk.run} FROM snapshot_reads s JOIN (SELECT unnest(?::BIGINT[]) AS k, "
            "unnest(?::BIGINT[]) AS first_at_us, unnest(?::BIGINT[]) AS last_at_us) AS far ON s."
            f"{start} = far.k AND s.at_us BETWEEN far.first_at_us AND far.last_at_us WHERE s.at_us BETWEEN ? AND ? AND "
            "(s.at_us < ? OR s.at_us > ?)",
            [
                [row[0] for row in far],
                [row[1] for row in far],
                [row[3] for row in far],
                min(row[1] for row in far),
                max(row[3] for row in far),
                low,
                high,
            ],
        )
    return found


def _recursion(walk: _Walk, table: str, then: str = "SELECT k, at_us, run_key FROM walk") -> str:
    """Return the recursive query of the keys reached from a list of keys over `table`, with each row's instant and run.

    `then` is the query over the recursion (`walk`: its keys `k`, instants `at_us` and runs `run_key`) whose rows are
    returned.
    """
    return (
        "WITH RECURSIVE walk (k, at_us, run_key) AS (SELECT UNNEST(?::BIGINT[]), CAST(NULL AS BIGINT), CAST(NULL AS "
        f"BIGINT) UNION SELECT s.{walk.to}, s.at_us, {walk.run} FROM walk w JOIN {table} s ON s.{walk.start} = w.k) "
        f"{then}"
    )


def _followed(rows: Sequence[Row], reached: set[int], instants: set[int], runs: set[tuple[int, int]]) -> list[int]:
    """Add the rows' keys to `reached`, their instants to `instants` and runs to `runs`; return the keys new to reach.

    Each row is a key, the instant of the row that reached it and that row's run (NULL for the keys a walk began at).
    """
    level = []
    for key, at_us, run in rows:
        if at_us is not None:
            instants.add(at_us)
            if run is not None:
                runs.add((run, at_us))
        if key is not None and key not in reached:
            reached.add(key)
            level.append(key)
    return level
