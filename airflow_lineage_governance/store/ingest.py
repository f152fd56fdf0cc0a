"""Incremental, idempotent ingest of OpenLineage run events into the store.

Each event is kept once under its key: run id, event type and event time as an instant (microseconds, UTC; so
`…46.54148Z` and `…46.541480+00:00` are one event), the key `graph/events.py` counts duplicates by. The first
delivery of a key is kept; a later one is counted as a duplicate whatever its content (a backend may rewrite an
event's time text or facets). An events file's lines are read by the parts the store keeps (`event_parts.py`), other
sources' events by `graph/events.py`, and a COMPLETE's lineage by `graph/build.py`, as for the lineage graph, once
per lineage read. Each batch's rows are worked out in a thread beside the one storing the
batch before (`read_ahead`), and each batch is one transaction: it adds its events, the runs' final states, the
COMPLETEs' lineage, and re-derives the validity intervals of the jobs it touched.
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.build import event_graph
from airflow_lineage_governance.graph.events import (
    COMPLETE,
    EVENT_TYPES,
    EventSource,
    LineSource,
    RawLineSource,
    ReadReport,
    RunEvent,
    paused_collection,
    to_run_event,
)
from airflow_lineage_governance.graph.records import sql_hash
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.bodies import blocks
from airflow_lineage_governance.store.engine import Engine, Row
from airflow_lineage_governance.store.event_parts import EventParts, parts_of, read_line
from airflow_lineage_governance.store.ids import SNAPSHOT_KEY, run_key, stable_id
from airflow_lineage_governance.store.migrations import store_version
from airflow_lineage_governance.store.read_ahead import read_ahead
from airflow_lineage_governance.store.schema import (
    COMPLETES_IN_EVENTS_FROM,
    EACH_RUN,
    FAR_APART_US,
    READ_RUNS_FROM,
    SCHEMA_VERSION,
    SNAPSHOT_PAIRS,
    STRETCHES,
    final_states,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
BATCH = 20_000
"""How many good events a batch (one transaction) holds unless told: each batch pays for about 25 statements,
whatever its size (`docs/store.md`, "How a batch is ingested")."""
FIRST = -(2**63)  # before every instant
statement_hash = lru_cache(maxsize=1 << 16)(sql_hash)  # a job's runs repeat its statement night after night
ATTEMPTS = 5
HASHED_UNTIL = 13
"""The schema version from which an event's SHA-256 (`events.content_sha256`) is no longer written."""
RUN_KEYED_FROM = 16
"""The schema version from which `run_datasets` names a run by its key (`ids.run_key`), `events` and `completes` keep
it beside the run id, and the events' primary key holds it."""

STATES_VIEWED_FROM = 17
"""The schema version from which `runs` is a view of the events (each run's final state, worked out when read), no
longer rows each batch replaces."""


def micros(at: datetime) -> int:
    """Return the instant as whole microseconds since the epoch (UTC)."""
    return (at - EPOCH) // MICROSECOND


@dataclass
class IngestReport:
    """What an ingest read and kept."""

    source: str = ""
    read: int = 0
    stored: int = 0
    duplicates: int = 0
    completes: int = 0
    wrong_shape: int = 0
    unknown_type: int = 0
    malformed: int = 0
    truncated: int = 0
    batches: int = 0
    retries: int = 0
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as plain data (the first problems as examples)."""
        data = asdict(self)
        data["problems"] = self.problems[:10]
        return data


@dataclass(frozen=True, slots=True)
class Received:
    """One good event of a batch: its run event, its instant, its JSON bytes and, for a COMPLETE, its parts."""

    event: RunEvent
    at_us: int
    data: bytes
    parts: EventParts | None = None


def job_id(event: RunEvent) -> int:
    """Return the id of the event's job (its namespace and name)."""
    return _job_id(event.job_namespace, event.job_name)


@lru_cache(maxsize=1 << 16)  # each job's runs send event after event
def _job_id(namespace: str, name: str) -> int:
    return stable_id("job", namespace, name)


def dataset_id(table: TableRef) -> int:
    """Return the id of a dataset, by its name (`namespace.table`)."""
    return stable_id("dataset", str(table))


def column_id(table: TableRef, name: str) -> int:
    """Return the id of a dataset's column."""
    return stable_id("column", str(table), name)


def ingest(
    engine: Engine, source: EventSource, *, batch_size: int = BATCH, report: IngestReport | None = None
) -> IngestReport:
    """Add every event of `source` not in the store yet, one transaction per batch.

    Args:
        engine: The store's engine (its schema current: `LineageStore.open` checks it).
        source: The events (a JSON Lines file, Marquez, or any `EventSource`).
        batch_size: How many good events each transaction holds.
        report: A report to add the counts to.

    Returns:
        What was read, stored and left out. An event left out (not JSON, no run id, an unknown type) is counted,
        never raised.
    """
    report = report or IngestReport(source=source.description)
    read = ReadReport(source=source.description)
    with paused_collection():  # a batch of parsed events is alive at once: the collector would rescan it over and over
        _ingest(engine, source, batch_size, report, read)
    report.malformed, report.truncated = read.malformed, read.truncated
    report.read += read.malformed + read.truncated
    report.problems.extend(read.problems[:10])
    return report


def _ingest(engine: Engine, source: EventSource, batch_size: int, report: IngestReport, read: ReadReport) -> None:
    tables = engine.tables()
    found = store_version(engine)
    version = SCHEMA_VERSION if found is None else found[0]  # an older store's rows are written as it keeps them
    in_events = engine.dialect == "postgres" and version >= COMPLETES_IN_EVENTS_FROM
    batches = prepared_batches(source, batch_size, report, read, tables, version=version, completes_in_events=in_events)
    for prepared in read_ahead(batches):
        store_batch(engine, prepared, report)


def prepared_batches(
    source: EventSource,
    batch_size: int,
    report: IngestReport,
    read: ReadReport,
    tables: set[str],
    *,
    version: int = SCHEMA_VERSION,
    completes_in_events: bool = False,
) -> Iterator[PreparedBatch]:
    """Yield each batch of `batch_size` good events of the source, its rows worked out (`prepare_batch`).

    Args:
        source: The events.
        batch_size: How many good events a batch holds.
        report: The ingest's report, counting the events read and those left out.
        read: The source's report, counting its lines that are not JSON.
        tables: The store's tables (`Engine.tables`).
        version: The store's schema version.
        completes_in_events: Whether a COMPLETE's `completes` columns go into its `events` row (PostgreSQL, schema
            version 18 on: `schema.COMPLETES_IN_EVENTS_FROM`).

    Returns:
        The batches, in the source's order.
    """
    batch: list[Received] = []
    known: dict[bytes, KnownLineage] = {}
    offered: Offered = {}
    for received in _received(source, report, read):
        batch.append(received)
        if len(batch) >= batch_size:
            yield prepare_batch(batch, tables, known, offered, version=version, completes_in_events=completes_in_events)
            batch = []
    if batch:
        yield prepare_batch(batch, tables, known, offered, version=version, completes_in_events=completes_in_events)


def _received(source: EventSource, report: IngestReport, read: ReadReport) -> Iterator[Received]:
    """Yield each good event of the source; count those left out.

    The lines of a file are read by the parts the store keeps (`event_parts.read_line`), a line it hands back parsed
    whole, as the events of any other source.
    """
    if not isinstance(source, RawLineSource):
        for raw, line in _with_lines(source, read):
            received = _checked(raw, line, report)
            if received is not None:
                yield received
        return
    for number, line in source.lines(read):
        quick = read_line(line)
        if quick is not None:
            report.read += 1
            event, parts = quick
            yield Received(event, micros(event.at), line.rstrip(b"\r\n"), parts)
            continue
        try:
            raw = orjson.loads(line)
        except (orjson.JSONDecodeError, UnicodeDecodeError):
            source.not_json(read, number, line)
            continue
        received = _checked(raw, line, report)
        if received is not None:
            yield received


def _checked(raw: Any, line: bytes | None, report: IngestReport) -> Received | None:
    """Return the good event of a parsed JSON value (its line, if any), else None, counting why it was left out."""
    report.read += 1
    event = to_run_event(raw)
    if event is None:
        report.wrong_shape += 1
        _note(report, "an event without a run id, job name, event type or ISO 8601 event time")
        return None
    if event.event_type not in EVENT_TYPES:
        report.unknown_type += 1
        _note(report, "an event of an unknown event type")
        return None
    data = line.rstrip(b"\r\n") if line is not None else dumps_event(raw)
    if b"\\u0000" in data and holds_nul(raw):
        report.wrong_shape += 1
        _note(report, "an event holding a NUL character (\\u0000), which no name in the store can hold")
        return None
    return Received(event, micros(event.at), data, parts_of(raw) if event.event_type == COMPLETE else None)


def holds_nul(value: Any) -> bool:
    """Return whether a string in the JSON value, or a key of one of its objects, holds a NUL character.

    PostgreSQL's text cannot hold one; an event holding one is left out on both engines, so both answer the same.
    """
    waiting = [value]
    while waiting:
        item = waiting.pop()
        if type(item) is str:
            if "\x00" in item:
                return True
        elif type(item) is dict:
            waiting.extend(item.keys())
            waiting.extend(item.values())
        elif type(item) is list:
            waiting.extend(item)
    return False


def _note(report: IngestReport, problem: str) -> None:
    if len(report.problems) < 50:
        report.problems.append(problem)


def _with_lines(source: EventSource, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
    if isinstance(source, LineSource):
        yield from source.parsed_lines(report)
    else:
        for raw in source.raw_events(report):
            yield raw, None


def dumps_event(raw: Any) -> bytes:
    """Return an event's JSON bytes (orjson's, else the standard library's for JSON nested past orjson's limit)."""
    try:
        return orjson.dumps(raw)
    except (orjson.JSONEncodeError, TypeError):  # nested past orjson's 255 levels
        return json.dumps(raw, separators=(",", ":"), default=str).encode()


Offered = dict[str, set[int]]
"""The ids of the rows a table keeps once and for all (jobs, datasets, columns, shapes) that an ingest's batches
offered so far, by table: a later batch leaves them out (each batch is stored before the next, or the ingest stops)."""


Key = tuple[str, str, int]
"""An event's key in the store: run id, event type and instant (microseconds)."""


@dataclass(frozen=True, slots=True)
class CompleteRows:
    """The rows one COMPLETE adds besides its event: its lineage's (one per lineage key), its run and its snapshots."""

    lineage: KnownLineage
    complete: Row  # its completes row
    run_datasets: tuple[Row, ...]  # the snapshot of each table it read and wrote, sorted


@dataclass(frozen=True, slots=True)
class LineageRows:
    """The rows of the lineage a batch's COMPLETEs state that earlier batches did not offer, sorted by key."""

    datasets: list[Row]
    columns: list[Row]  # dataset_columns rows
    shapes: list[Row]
    shape_columns: list[Row]
    shape_outputs: list[Row]
    shape_edges: list[Row]


@dataclass(frozen=True, slots=True)
class PreparedBatch:
    """A batch's rows, worked out before the store is asked anything: what `store_batch` writes of it."""

    received: int  # its events, a key repeated within it counted each time
    keys: list[Key]  # its distinct keys, sorted
    events: list[Row]  # the events row of each key, in the keys' order
    jobs: list[Row]  # those earlier batches did not offer
    blocked: bool  # whether the events' JSON goes into blocks (schema version 3 on), else into each row
    hashed: bool  # whether each events row holds its JSON's SHA-256 (before schema version 13)
    run_keyed: bool  # whether a run's key is in `events`, `completes` and `run_datasets` (schema version 16 on)
    run_keys: dict[str, int]  # the key of each run of the batch's events, by run id (empty before version 16)
    reads: bool  # whether the store keeps each snapshot read into each written (`snapshot_reads`, version 7 on, DuckDB)
    spanned: bool  # whether the store keeps the span of each snapshot key (`snapshot_spans`, schema version 15 on)
    read_runs: bool  # whether each `snapshot_reads` row keeps its run's key (schema version 20 on)
    states_kept: bool  # whether each run's final state is kept in rows of `runs` (before schema version 17)
    completes_in_events: bool  # whether a COMPLETE's shape and SQL hash are in its events row (PostgreSQL, version 18)
    block_rows: list[Row]  # event_blocks rows
    places: list[tuple[int, int]]  # each key's block and line in it
    completes: dict[Key, CompleteRows]
    lineage: LineageRows  # of every COMPLETE of the batch: one stored before names rows the store holds already


def prepare_batch(
    batch: Sequence[Received],
    tables: set[str],
    known: dict[bytes, KnownLineage],
    offered: Offered,
    *,
    version: int = SCHEMA_VERSION,
    completes_in_events: bool = False,
) -> PreparedBatch:
    """Work out the rows of a batch of events (each key once, the first received kept) without the store.

    Args:
        batch: The batch's good events, in the order received.
        tables: The store's tables (`Engine.tables`): the rows of a table an older schema lacks are left out, and an
            older store keeps each event's JSON in its row (before `event_blocks`, schema version 3).
        known: The lineages read so far, by `lineage_key` (kept across the batches of one ingest).
        offered: The ids earlier batches of the ingest offered (`Offered`); the batch's are added.
        version: The store's schema version: before 13 each event's SHA-256 is kept (`content_sha256`), from 16 on
            each run's key (`RUN_KEYED_FROM`), before 17 each run's final state in rows (`STATES_VIEWED_FROM`).
        completes_in_events: Whether a COMPLETE's shape and SQL hash go into its events row, not a `completes` row of
            its own (PostgreSQL, schema version 18 on).

    Returns:
        The batch's rows, ready for `store_batch`.
    """
    blocked, reads = "event_blocks" in tables, "snapshot_reads" in tables
    hashed, run_keyed = version < HASHED_UNTIL, version >= RUN_KEYED_FROM
    unique: dict[Key, Received] = {}
    for received in batch:
        unique.setdefault((received.event.run_id, received.event.event_type, received.at_us), received)
    now = time.time_ns() // 1000
    keys = sorted(unique)
    run_keys = {run: run_key(run) for run in {key[0] for key in keys}} if run_keyed else {}
    jobs: dict[int, Row] = {}
    for received in unique.values():
        job = job_id(received.event)
        jobs.setdefault(job, (job, received.event.job_namespace, received.event.job_name))
    block_rows, places = blocks([unique[key].data for key in keys]) if blocked else ([], [])
    completes = {
        key: complete_rows(unique[key], known, run_keys.get(key[0])) for key in keys if unique[key].parts is not None
    }
    rows = []
    for index, key in enumerate(keys):
        received = unique[key]
        event = received.event
        row = (
            event.run_id,
            event.event_type,
            received.at_us,
            event.event_time,
            job_id(event),
            *((hashlib.sha256(received.data).hexdigest(),) if hashed else ()),
            now,
            event.dag_run_id,
            event.try_number,
            *(places[index] if blocked else (zlib.compress(received.data, 6),)),
        )
        if run_keyed:
            row = (*row, run_keys[event.run_id])
        if completes_in_events:  # the shape and SQL hash of a COMPLETE's `completes` row (`COMPLETES`' 5th and 6th)
            complete = completes[key].complete if key in completes else None
            row = (*row, *(complete[4:6] if complete else (None, None)))
        rows.append(row)
    return PreparedBatch(
        len(batch),
        keys,
        rows,
        _new(jobs, "jobs", offered),
        blocked,
        hashed,
        run_keyed,
        run_keys,
        reads,
        "snapshot_spans" in tables,
        reads and version >= READ_RUNS_FROM,
        version < STATES_VIEWED_FROM,
        completes_in_events,
        block_rows,
        places,
        completes,
        lineage_rows(list(completes.values()), offered),
    )


def store_batch(engine: Engine, prepared: PreparedBatch, report: IngestReport) -> None:
    """Store one prepared batch in one transaction, tried again after a deadlock or serialization failure.

    Args:
        engine: The store's engine.
        prepared: The batch's rows (`prepare_batch`).
        report: The report to count into.
    """
    for attempt in range(ATTEMPTS):
        try:
            with engine.transaction():
                stored, completes = _store(engine, prepared)
            break
        except Exception as error:
            if attempt + 1 == ATTEMPTS or not engine.transient(error):
                raise
            report.retries += 1
    report.batches += 1
    report.stored += stored
    report.completes += completes
    report.duplicates += prepared.received - stored


def _store(engine: Engine, prepared: PreparedBatch) -> tuple[int, int]:
    keys = prepared.keys
    engine.insert("jobs", ("job_id", "namespace", "name"), prepared.jobs)
    blocked = prepared.blocked
    added = engine.insert(
        "events",
        (
            "run_id",
            "event_type",
            "at_us",
            "event_time",
            "job_id",
            *(("content_sha256",) if prepared.hashed else ()),
            "ingested_at_us",
            "dag_run_id",
            "try_number",
            *(("block_id", "block_line") if blocked else ("body",)),
            *(("run_key",) if prepared.run_keyed else ()),
            *(("shape_id", "sql_hash") if prepared.completes_in_events else ()),
        ),
        prepared.events,
        returning=("run_id", "event_type", "at_us"),
    )
    new: list[Key] = sorted((run, kind, at) for run, kind, at in added)
    if not new:  # the tables, columns and shapes noted as offered must be stored, or a later batch would leave them out
        _named(engine, prepared.lineage)
        return 0, 0
    line = {key: index for index, key in enumerate(keys)}
    if blocked:  # the blocks holding an event added (a block of events all stored before is left out)
        used = {prepared.places[line[key]][0] for key in new} if len(new) < len(keys) else None
        engine.insert(
            "event_blocks",
            ("block_id", "body"),
            [row for row in prepared.block_rows if used is None or row[0] in used],
        )
    engine.lock(sorted({prepared.events[line[key]][4] for key in new}))
    if prepared.states_kept:
        _final_states(engine, [key[0] for key in new], prepared.run_keys)
    completes = [prepared.completes[key] for key in new if key in prepared.completes]
    _lineage(engine, prepared, completes)
    earliest: dict[int, int] = {}
    for rows in completes:
        job, at_us = rows.complete[3], rows.complete[1]
        earliest[job] = min(earliest.get(job, at_us), at_us)
    _intervals(engine, earliest)
    return len(new), len(completes)


def _final_states(engine: Engine, new_runs: list[str], run_keys: dict[str, int]) -> None:
    """Re-derive the rows of `runs` of the runs of the events just added (a store before schema version 17).

    Each run's final state (`schema.final_states`), once per event's run id. Only a run with events stored before has
    a state to replace. With the runs' keys (`run_keys`, schema version 16 on) PostgreSQL finds the runs' events by
    their keys (the events' primary key), then their ids; DuckDB, whose scan reads no index of two columns, by their
    ids alone.
    """
    added: dict[str, int] = {}
    for run in new_runs:
        added[run] = added.get(run, 0) + 1
    runs = sorted(added)
    keys = run_keys if engine.dialect == "postgres" else {}
    of_runs, params = _of_runs(runs, keys)
    held = engine.query(f"SELECT run_id, COUNT(*) FROM events WHERE {of_runs} GROUP BY run_id", params)
    before = sorted(run for run, count in held if count > added[run])
    if before:
        of_before, before_params = _of_runs(before, keys)
        engine.execute(
            f"DELETE FROM runs WHERE job_id IN (SELECT job_id FROM events WHERE {of_before}) AND run_id IN (SELECT "
            "unnest(CAST(? AS TEXT[])))",
            [*before_params, before],
        )
    engine.execute(
        "INSERT INTO runs (run_id, job_id, state, state_terminal, state_at_us, state_rank, state_time, dag_run_id, "
        f"try_number) {final_states(engine.text_order, of_runs)}",
        params,
    )


def _of_runs(runs: list[str], run_keys: dict[str, int]) -> tuple[str, list[Any]]:
    """Return the condition that an `events` row is of one of the runs, and its parameters (key then id, or id alone).

    The runs are found by key, then id, when `run_keys` holds their keys; by id alone when it is empty.
    """
    named = "run_id IN (SELECT unnest(CAST(? AS TEXT[])))"
    if not run_keys:
        return named, [runs]
    return f"run_key IN (SELECT unnest(CAST(? AS BIGINT[]))) AND {named}", [sorted({run_keys[r] for r in runs}), runs]


@dataclass(frozen=True, slots=True)
class ShapeRows:
    """The rows one lineage shape adds: its id, the tables and columns it names, its edges and tables written."""

    shape_id: int
    wrong_parts: int
    datasets: tuple[tuple[int, str], ...]  # (id, name) of each table it names
    columns: tuple[Row, ...]  # dataset_columns rows
    shape_columns: tuple[Row, ...]
    shape_outputs: tuple[Row, ...]
    shape_edges: tuple[Row, ...]


def shape_rows(event: RunEvent) -> ShapeRows:
    """Return the rows of the lineage a COMPLETE (holding its `raw` JSON) states, read by `graph/build.py`."""
    graph = event_graph(event)
    edges = sorted(
        (str(e.source.table), e.source.field, *_target(e.target), str(e.type), str(e.subtype), e.masking)
        for e in graph.edges()
    )
    named = {str(t): list(names) for t, names in graph.table_columns.items()}
    outputs = sorted(str(t) for t in graph.outputs)
    shape = stable_id("shape", orjson.dumps([edges, sorted(named.items()), outputs, graph.wrong_parts]).decode())
    columns, shape_columns = [], []
    for table, names in graph.table_columns.items():
        table_id = dataset_id(table)
        for position, name in enumerate(names):
            column = column_id(table, name)
            columns.append((column, table_id, name))
            shape_columns.append((shape, column, table_id, position))
    shape_edges = []
    for edge in graph.edges():
        source, into = column_id(edge.source.table, edge.source.field), edge.target
        target = dataset_id(into) if isinstance(into, TableRef) else column_id(into.table, into.field)
        shape_edges.append(
            (shape, source, target, isinstance(into, TableRef), str(edge.type), str(edge.subtype), edge.masking)
        )
    return ShapeRows(
        shape,
        graph.wrong_parts,
        tuple((dataset_id(t), str(t)) for t in graph.table_columns),
        tuple(columns),
        tuple(shape_columns),
        tuple((shape, dataset_id(t)) for t in graph.outputs),
        tuple(shape_edges),
    )


def _new(rows: dict[int, Row], table: str, offered: Offered) -> list[Row]:
    """Return the rows, by id, whose id was not offered yet, noting their ids as offered for the table."""
    done = offered.setdefault(table, set())
    fresh = [rows[key] for key in sorted(rows) if key not in done]
    done.update(row[0] for row in fresh)
    return fresh


@dataclass(frozen=True, slots=True)
class KnownLineage:
    """What every COMPLETE of one lineage key adds alike: its shape, its tables' rows, where its snapshots go.

    A lineage key (`event_parts.lineage_key`) holds each dataset's name and namespace, inputs before outputs: the
    COMPLETEs of one key name the same tables in the same order, and differ only in their snapshots.
    """

    shape: ShapeRows
    shape_datasets: tuple[Row, ...]  # datasets rows of the tables its shape names, with the event's namespaces
    version_datasets: tuple[Row, ...]  # datasets rows of the tables it read and wrote
    places: tuple[tuple[str, int, int], ...]  # each run_datasets row's role, table id and dataset's place, sorted


def known_lineage(parts: EventParts, shape: ShapeRows) -> KnownLineage:
    """Return what every COMPLETE of the parts' lineage key adds alike, its shape `shape`.

    Args:
        parts: A COMPLETE's parts (`event_parts`).
        shape: The shape of its lineage (`shape_rows`).

    Returns:
        Its tables' rows, and for each table it read or wrote (the first dataset naming it as an input, or as an
        output) the place of that dataset among the parts' datasets, sorted by role, then table id.
    """
    spaces: dict[str, str] = {}  # the namespace of each dataset named, the first given
    for _, name, namespace, _ in parts.datasets:
        if namespace is not None:
            spaces.setdefault(name, namespace)
    places: dict[tuple[str, int], int] = {}
    versions: dict[int, Row] = {}
    for place, (role, name, _, _) in enumerate(parts.datasets):
        table_id = named_dataset_id(name)
        if table_id is None:
            continue
        places.setdefault((role, table_id), place)
        versions.setdefault(table_id, (table_id, name, spaces.get(name, "")))
    return KnownLineage(
        shape,
        tuple((table_id, name, spaces.get(name, "")) for table_id, name in shape.datasets),
        tuple(versions.values()),
        tuple((role, table_id, place) for (role, table_id), place in sorted(places.items())),
    )


def complete_rows(received: Received, known: dict[bytes, KnownLineage], run: int | None) -> CompleteRows:
    """Return the rows a COMPLETE (holding its `parts`) adds, its lineage taken from `known` when read before.

    `known` keeps the lineages read so far by lineage key (most runs of a job state the lineage of its run before); a
    lineage not read yet is read from the event's JSON, parsed whole (`shape_rows`). With its run's key `run`
    (`ids.run_key`, schema version 16 on) its run is named by the key in its `run_datasets` rows, and the key ends its
    `completes` row; with None, by its run id.
    """
    event, parts = received.event, received.parts
    assert parts is not None
    key = parts.lineage_key
    lineage = known.get(key) if key is not None else None
    if lineage is None:
        lineage = known_lineage(parts, shape_rows(event if event.raw is not None else _whole(received)))
        if key is not None:
            if len(known) > 100_000:
                known.clear()
            known[key] = lineage
    query = parts.query
    named_as = event.run_id if run is None else run
    at_us = received.at_us
    complete = (
        event.run_id,
        at_us,
        event.event_time,
        job_id(event),
        lineage.shape.shape_id,
        statement_hash(query) if query is not None else None,
        event.try_number,
        event.dag_run_id,
        *(() if run is None else (run,)),
    )
    datasets = parts.datasets
    return CompleteRows(
        lineage,
        complete,
        tuple([(named_as, at_us, role, table_id, datasets[place][3]) for role, table_id, place in lineage.places]),
    )


def _whole(received: Received) -> RunEvent:
    """Return the run event of a line read by its parts (`event_parts.read_line`), parsed whole with its `raw` JSON."""
    event = to_run_event(orjson.loads(received.data))
    assert event is not None  # the line read by its parts reads the same whole
    return event


def lineage_rows(completes: Sequence[CompleteRows], offered: Offered) -> LineageRows:
    """Return the lineage rows of the COMPLETEs (in their keys' order) `offered` does not hold; note them there.

    A dataset's namespace is the first COMPLETE's naming it.
    """
    datasets: dict[int, Row] = {}
    columns: dict[int, Row] = {}
    shapes: dict[int, ShapeRows] = {}
    lineages = {id(rows.lineage): rows.lineage for rows in completes}  # by identity (a key's COMPLETEs share one),
    for lineage in lineages.values():  # in the order their first COMPLETEs come
        if lineage.shape.shape_id not in shapes:
            shapes[lineage.shape.shape_id] = lineage.shape
            for dataset in lineage.shape_datasets:
                datasets.setdefault(dataset[0], dataset)
            for column in lineage.shape.columns:
                columns.setdefault(column[0], column)
        for dataset in lineage.version_datasets:
            datasets.setdefault(dataset[0], dataset)
    ordered = [shapes[row[0]] for row in _new({key: (key,) for key in shapes}, "shapes", offered)]
    return LineageRows(
        _new(datasets, "datasets", offered),
        _new(columns, "dataset_columns", offered),
        [(r.shape_id, r.wrong_parts) for r in ordered],
        sorted(row for r in ordered for row in r.shape_columns),
        sorted(row for r in ordered for row in r.shape_outputs),
        sorted({row[:3] + row[4:6]: row for r in ordered for row in r.shape_edges}.values()),
    )


def _lineage(engine: Engine, prepared: PreparedBatch, completes: Sequence[CompleteRows]) -> None:
    """Add the batch's lineage rows and those of the COMPLETEs just stored, in their keys' order (run id, instant)."""
    _named(engine, prepared.lineage)
    run = "run_key" if prepared.run_keyed else "run_id"
    if not prepared.completes_in_events:
        engine.insert(
            "completes",
            (*COMPLETES, *((run,) if prepared.run_keyed else ())),
            [rows.complete for rows in completes],
        )
    datasets = [row for rows in completes for row in rows.run_datasets]
    columns = (run, *RUN_DATASETS)
    if not prepared.reads:
        engine.insert("run_datasets", columns, datasets)
    elif datasets:
        kind = "BIGINT" if prepared.run_keyed else "TEXT"
        _scratch(engine, "batch_datasets", f"{run} {kind}, at_us BIGINT, role TEXT, dataset_id BIGINT, snapshot TEXT")
        engine.insert("batch_datasets", columns, datasets)
        listed = ", ".join(columns)
        engine.execute(f"INSERT INTO run_datasets ({listed}) SELECT {listed} FROM batch_datasets")
        _snapshot_reads(engine, run, spanned=prepared.spanned, read_runs=prepared.read_runs)


COMPLETES = ("run_id", "at_us", "event_time", "job_id", "shape_id", "sql_hash", "try_number", "dag_run_id")
"""The columns of `completes` an ingest writes, besides the run's key (`run_key`, schema version 16 on)."""
RUN_DATASETS = ("at_us", "role", "dataset_id", "snapshot")
"""The columns of `run_datasets` an ingest writes after the run's (`run_key`, its id before schema version 16)."""


def _named(engine: Engine, lineage: LineageRows) -> None:
    """Add the tables, columns and shapes a batch's COMPLETEs name that earlier batches did not offer."""
    engine.insert("datasets", ("dataset_id", "name", "namespace"), lineage.datasets)
    engine.insert("dataset_columns", ("column_id", "dataset_id", "name"), lineage.columns)
    engine.insert("shapes", ("shape_id", "wrong_parts"), lineage.shapes)
    engine.insert("shape_columns", ("shape_id", "column_id", "dataset_id", "position"), lineage.shape_columns)
    engine.insert("shape_outputs", ("shape_id", "dataset_id"), lineage.shape_outputs)
    engine.insert(
        "shape_edges",
        ("shape_id", "source_column_id", "target_id", "into_table", "type", "subtype", "masking"),
        lineage.shape_edges,
    )


def _snapshot_reads(engine: Engine, run: str, *, spanned: bool, read_runs: bool) -> None:
    """Add the `snapshot_reads` rows of the batch's `run_datasets` rows (`batch_datasets`), and widen their keys' spans.

    A COMPLETE's rows are told apart by the column `run` (`run_key` from schema version 16 on, `run_id` before).
    Each snapshot a COMPLETE read with each snapshot it wrote; one it wrote with none read, or read with none written,
    beside NULL; each by its key (`ids.snapshot_key`, computed by the database; `schema.SNAPSHOT_PAIRS`, as the
    migration to version 7 fills the table). With `spanned` (DuckDB, schema version 15 on), the span of each key the
    rows name takes in their instants: its earliest and latest instant, written or read, far apart when they lie more
    than `FAR_APART_US` apart (`trace._reached_keys` looks up only such keys' rows beyond its range). With
    `read_runs` (schema version 20 on) each row keeps its run's key.
    """
    key = SNAPSHOT_KEY[engine.dialect].format(alias="")
    engine.execute(
        f"INSERT INTO snapshot_reads (written_key, read_key, at_us{', run_key' if read_runs else ''}) "
        + SNAPSHOT_PAIRS.format(
            snapshot_key=key, datasets="batch_datasets", run=run, each_run=EACH_RUN if read_runs else ""
        )
        + " ORDER BY at_us"
    )
    if spanned:  # every snapshot of a COMPLETE is in one of its rows of `snapshot_reads` at least
        engine.execute(
            "INSERT INTO snapshot_spans SELECT k, MIN(at_us), MAX(at_us), MAX(at_us) - MIN(at_us) > ? FROM (SELECT "
            f"{key} AS k, at_us FROM batch_datasets WHERE snapshot IS NOT NULL) AS named GROUP BY k ON CONFLICT "
            "(snapshot_key) DO UPDATE SET first_at_us = LEAST(first_at_us, excluded.first_at_us), last_at_us = "
            "GREATEST(last_at_us, excluded.last_at_us), far_apart = GREATEST(last_at_us, excluded.last_at_us) - "
            "LEAST(first_at_us, excluded.first_at_us) > ?",
            [FAR_APART_US, FAR_APART_US],
        )


def _target(target: ColumnRef | TableRef) -> tuple[str, str, bool]:
    return (str(target), "", True) if isinstance(target, TableRef) else (str(target.table), target.field, False)


@lru_cache(maxsize=1 << 16)  # a history names the same tables in event after event
def named_dataset_id(name: str) -> int | None:
    """Return the id of the dataset a table name (`namespace.table`) names; None when it names no table."""
    try:
        return dataset_id(TableRef.parse(name))
    except InvalidNameError:
        return None


def recent(engine: Engine, bound: str, lowest: int | None = None) -> str:
    """Return the FROM items of each job's COMPLETEs `c` at or after its `bound` instant in `interval_cuts k`.

    On PostgreSQL a lateral subquery, which reads each job's COMPLETEs through the index on job and instant, not a
    join the planner would make by reading every COMPLETE of the store. On DuckDB a join, narrowed to the COMPLETEs
    at or after `lowest` (`lowest_bound`) when given.
    """
    if engine.dialect == "postgres":
        return (
            "interval_cuts k CROSS JOIN LATERAL (SELECT * FROM completes WHERE completes.job_id = k.job_id AND "
            f"completes.at_us >= k.{bound} OFFSET 0) AS c"
        )
    return f"completes c JOIN interval_cuts k ON k.job_id = c.job_id AND c.at_us >= k.{bound}" + _at_least("c", lowest)


def by_index(engine: Engine, sql: str) -> None:
    """Run a statement that updates a few rows of a store table found from a batch's own, by the table's index.

    PostgreSQL, which cannot know how few of the rows a batch's scratch tables name, planned the update of `completes`
    from the COMPLETEs a batch follows as a hash join over every row of `completes`: a scan of the whole table for
    each batch, as long as the store is large (0.7 s a batch at 1,000,000 events, against 0.1 s by index). There
    the statement runs without hash and merge joins (settings of the transaction, restored after it); DuckDB,
    whose scans skip the row groups before the batch's instants (`lowest_bound`), runs it as it is.

    Args:
        engine: The store's engine, within the batch's transaction.
        sql: The statement.
    """
    if engine.dialect != "postgres":
        engine.execute(sql)
        return
    engine.execute("SET LOCAL enable_hashjoin = off")
    engine.execute("SET LOCAL enable_mergejoin = off")
    engine.execute(sql)
    engine.execute("RESET enable_hashjoin")
    engine.execute("RESET enable_mergejoin")


def lowest_bound(engine: Engine, bound: str) -> int | None:
    """Return an instant no COMPLETE of a job in `interval_cuts` at or after its `bound` instant precedes (DuckDB).

    A job with no COMPLETE before the batch's (its `bound` is `FIRST`) has none before its `earliest`. A constant bound
    lets DuckDB's scan of `completes`, whose rows an ingest appends about in time order, skip the row groups wholly
    before it (their instants' range is kept with them); PostgreSQL reads each job's COMPLETEs by its index, None.
    """
    if engine.dialect != "duckdb":
        return None
    found = engine.query(f"SELECT MIN(CASE WHEN {bound} = {FIRST} THEN earliest ELSE {bound} END) FROM interval_cuts")
    return int(found[0][0]) if found and found[0][0] is not None else None


def _at_least(alias: str, lowest: int | None) -> str:
    return "" if lowest is None else f" AND {alias}.at_us >= {int(lowest)}"


def _scratch(engine: Engine, table: str, columns: str) -> None:
    """Make the empty temporary table of one batch, of the columns defined (made anew on DuckDB, emptied on PostgreSQL).

    On DuckDB a table emptied by TRUNCATE and filled again had its planner build its joins' hash tables on the store's
    table and scan the small one, so an UPDATE of `column_edges` met its rows out of order (`docs/store.md`).
    """
    if engine.dialect == "duckdb":
        engine.execute(f"CREATE OR REPLACE TEMPORARY TABLE {table} ({columns})")
    else:
        engine.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {table} ({columns})")
        engine.execute(f"TRUNCATE {table}")


CUT_WINDOWS = tuple(days * 86_400_000_000 for days in (1, 8, 64, 512))
"""How far before a batch's earliest COMPLETE, in microseconds, DuckDB looks for each job's cut, window after window,
before it reads every COMPLETE of the jobs not found (`docs/store.md`, "How a batch is ingested")."""


def _cuts(engine: Engine, lowest: int) -> None:
    """Set each job's `cut` in `interval_cuts`: the instant of its last COMPLETE before its `earliest`, else `FIRST`.

    On DuckDB the look-up reads the COMPLETEs of a window before the batch's earliest instant first (`CUT_WINDOWS`),
    a wider one for the jobs not found in it, and all of them last: a constant bound lets the scan of `completes`,
    whose rows an ingest appends about in time order, skip the row groups wholly before it, where the look-up of all
    of them read each job's whole history batch after batch. The last COMPLETE found in a window is the last before
    `earliest` at all. PostgreSQL finds each by the index on job and instant.

    Args:
        engine: The store's engine, within the batch's transaction, `interval_cuts` filled with `earliest`.
        lowest: The earliest instant of the batch's COMPLETEs (the least `earliest`), from which the windows reach back.
    """
    look_up = (
        "UPDATE interval_cuts SET cut = {value}(SELECT MAX(c.at_us) FROM completes c WHERE c.job_id = "
        "interval_cuts.job_id AND c.at_us < interval_cuts.earliest{bound}){fallback} WHERE cut IS NULL"
    )
    if engine.dialect == "duckdb":
        for window in CUT_WINDOWS:
            engine.execute(look_up.format(value="", bound=_at_least("c", lowest - window), fallback=""))
            if not engine.query("SELECT 1 FROM interval_cuts WHERE cut IS NULL LIMIT 1"):
                return
    engine.execute(look_up.format(value="COALESCE(", bound="", fallback=f", {FIRST})"))


def _intervals(engine: Engine, earliest: dict[int, int]) -> None:
    """Re-derive when each COMPLETE was its job's run, each edge's intervals and the job's writes, for the jobs given.

    The jobs are given with the instant of their earliest COMPLETE just added. A COMPLETE is its job's run until the
    job's next COMPLETE, by instant, then run id, then time as written (`RunEvent.order`); an edge's intervals are the
    stretches of consecutive COMPLETEs of its job that stated it, and a job's writes (`table_writers`) the stretches
    of its consecutive COMPLETEs that stated one shape, per table the shape writes.

    Only what the new COMPLETEs can change is re-derived: from `cut`, the instant of the job's last COMPLETE
    before them, on. The intervals whose last COMPLETE is at or after `cut` are replaced. When one COMPLETE of the job
    is at `cut` (`joined`), the stretches are worked out from it, and a stretch beginning there continues the interval
    that held it (its start kept); else they are worked out from the first COMPLETE of the intervals replaced (`start`),
    which begins a stretch of each of their edges and shapes.

    A joined job whose COMPLETEs from `cut` on all state one shape (`steady`: most runs state the lineage of the run
    before) has one stretch of each edge and of each table written, from the interval that held `cut` to its last
    COMPLETE: its intervals ending at or after `cut` are moved on to that COMPLETE in place, not worked out again.
    """
    if not earliest:
        return
    text = engine.text_order
    order = f"at_us, run_id{text}, event_time{text}"
    jobs = sorted(earliest)
    _scratch(
        engine,
        "interval_cuts",
        "job_id BIGINT PRIMARY KEY, earliest BIGINT, cut BIGINT, start BIGINT, joined BOOLEAN, steady BOOLEAN, "
        "last_at BIGINT, last_run TEXT",
    )
    engine.execute(
        "INSERT INTO interval_cuts (job_id, earliest, steady) SELECT unnest(CAST(? AS BIGINT[])), "
        "unnest(CAST(? AS BIGINT[])), FALSE",
        [jobs, [earliest[job] for job in jobs]],
    )
    _cuts(engine, min(earliest.values()))
    lowest_cut = lowest_bound(engine, "cut")
    if engine.dialect == "postgres":  # a look-up of each job's COMPLETEs at its cut in the index on job and instant
        engine.execute(
            "UPDATE interval_cuts SET joined = (SELECT COUNT(*) FROM completes c WHERE c.job_id = "
            "interval_cuts.job_id AND c.at_us = interval_cuts.cut) = 1"
        )
    else:  # one join: DuckDB worked the count out per job over every COMPLETE (1 s a batch at 10,000,000 events)
        engine.execute(
            "UPDATE interval_cuts SET joined = at_cut.found = 1 FROM (SELECT k.job_id, COUNT(c.job_id) AS found "
            "FROM interval_cuts k LEFT JOIN completes c ON c.job_id = k.job_id AND c.at_us = k.cut"
            f"{_at_least('c', lowest_cut)} GROUP BY k.job_id) AS at_cut WHERE interval_cuts.job_id = at_cut.job_id"
        )
    writers = "table_writers" in engine.tables()  # schema version 5 on
    engine.execute("UPDATE interval_cuts SET start = cut WHERE joined")
    engine.execute(
        "UPDATE interval_cuts SET start = LEAST(cut, COALESCE((SELECT MIN(e.valid_from_us) FROM "
        "column_edges e WHERE e.job_id = interval_cuts.job_id AND e.last_at_us >= interval_cuts.cut), "
        "cut)"
        + (
            ", COALESCE((SELECT MIN(w.valid_from_us) FROM table_writers w WHERE w.job_id = interval_cuts.job_id "
            "AND w.last_at_us >= interval_cuts.cut), cut))"
            if writers
            else ")"
        )
        + " WHERE NOT joined"
    )
    lowest_start = lowest_bound(engine, "start")
    by_index(
        engine,
        "UPDATE completes SET valid_until_us = following.next_at FROM (SELECT c.job_id, c.run_id, c.at_us, "
        f"LEAD(c.at_us) OVER (PARTITION BY c.job_id ORDER BY {order}) AS next_at FROM "
        f"{recent(engine, 'cut', lowest_cut)}) AS following WHERE completes.job_id = following.job_id AND "
        "completes.at_us = following.at_us AND completes.run_id = following.run_id AND "
        f"completes.valid_until_us IS DISTINCT FROM following.next_at{_at_least('completes', lowest_cut)}",
    )
    engine.execute(  # the last COMPLETE is the one no other follows
        "UPDATE interval_cuts SET steady = TRUE, last_at = one.last_at, last_run = one.last_run FROM (SELECT "
        "c.job_id, MAX(CASE WHEN c.valid_until_us IS NULL THEN c.at_us END) AS last_at, MAX(CASE WHEN "
        "c.valid_until_us IS NULL THEN c.run_id END) AS last_run FROM "
        f"{recent(engine, 'cut', lowest_cut)} WHERE k.joined "
        "GROUP BY c.job_id HAVING MIN(c.shape_id) = MAX(c.shape_id) AND "
        "SUM(CASE WHEN c.valid_until_us IS NULL THEN 1 ELSE 0 END) = 1) AS one "
        "WHERE interval_cuts.job_id = one.job_id"
    )
    edge_columns = (
        "job_id, source_column_id, target_id, into_table, type, subtype, masking, valid_from_us, valid_until_us, "
        "first_run_id, last_run_id, last_at_us"
    )
    _scratch(
        engine,
        "edges_rederived",
        "job_id BIGINT, source_column_id BIGINT, target_id BIGINT, into_table BOOLEAN, type TEXT, subtype TEXT, "
        "masking BOOLEAN, valid_from_us BIGINT, valid_until_us BIGINT, first_run_id TEXT, last_run_id TEXT, "
        "last_at_us BIGINT",
    )
    engine.execute(
        f"INSERT INTO edges_rederived ({edge_columns}) "
        "WITH ordered AS (SELECT c.job_id, c.run_id, c.at_us, c.valid_until_us, c.shape_id, ROW_NUMBER() OVER "
        f"(PARTITION BY c.job_id ORDER BY {order}) AS place FROM {recent(engine, 'start', lowest_start)} "
        "WHERE NOT k.steady), "
        "stated AS (SELECT o.job_id, o.place, e.source_column_id, e.target_id, e.into_table, e.type, e.subtype, "
        "e.masking, o.place - ROW_NUMBER() OVER (PARTITION BY o.job_id, e.source_column_id, e.target_id, e.type, "
        "e.subtype, e.masking ORDER BY o.place) AS island FROM ordered o "
        "JOIN shape_edges e ON e.shape_id = o.shape_id), "
        "islands AS (SELECT job_id, source_column_id, target_id, into_table, type, subtype, masking, "
        "MIN(place) AS first_place, MAX(place) AS last_place FROM stated GROUP BY job_id, source_column_id, "
        "target_id, into_table, type, subtype, masking, island) "
        "SELECT i.job_id, i.source_column_id, i.target_id, i.into_table, i.type, i.subtype, i.masking, "
        "COALESCE(p.valid_from_us, f.at_us), l.valid_until_us, COALESCE(p.first_run_id, f.run_id), l.run_id, l.at_us "
        "FROM islands i "
        "JOIN ordered f ON f.job_id = i.job_id AND f.place = i.first_place "
        "JOIN ordered l ON l.job_id = i.job_id AND l.place = i.last_place "
        "JOIN interval_cuts k ON k.job_id = i.job_id "
        # the intervals that held each joined job's cut, found from the few jobs (not a hash of every edge)
        "LEFT JOIN (SELECT e.job_id, e.source_column_id, e.target_id, e.into_table, e.type, e.subtype, e.masking, "
        "e.valid_from_us, e.first_run_id FROM interval_cuts h JOIN column_edges e ON e.job_id = h.job_id AND "
        "e.valid_from_us <= h.cut AND e.last_at_us >= h.cut WHERE h.joined AND NOT h.steady) AS p ON "
        "i.first_place = 1 AND p.job_id = i.job_id AND p.source_column_id = i.source_column_id AND "
        "p.target_id = i.target_id AND p.into_table = i.into_table AND p.type = i.type AND p.subtype = i.subtype AND "
        "p.masking = i.masking "
        "WHERE l.at_us >= k.cut"
    )
    engine.execute(
        "DELETE FROM column_edges WHERE EXISTS (SELECT 1 FROM interval_cuts k WHERE k.job_id = "
        "column_edges.job_id AND column_edges.last_at_us >= k.cut AND NOT k.steady)"
    )
    engine.execute(
        "UPDATE column_edges SET valid_until_us = NULL, last_run_id = k.last_run, last_at_us = k.last_at FROM "
        "interval_cuts k WHERE k.steady AND column_edges.job_id = k.job_id AND column_edges.last_at_us >= k.cut"
    )
    engine.execute(f"INSERT INTO column_edges ({edge_columns}) SELECT {edge_columns} FROM edges_rederived")
    if writers:
        writer_columns = "dataset_id, job_id, shape_id, valid_from_us, valid_until_us, last_at_us"
        _scratch(
            engine,
            "writers_rederived",
            "dataset_id BIGINT, job_id BIGINT, shape_id BIGINT, valid_from_us BIGINT, valid_until_us BIGINT, "
            "last_at_us BIGINT",
        )
        engine.execute(
            f"INSERT INTO writers_rederived ({writer_columns}) SELECT s.dataset_id, s.job_id, s.shape_id, "
            "COALESCE(p.valid_from_us, s.valid_from_us), s.valid_until_us, s.last_at_us FROM ("
            + STRETCHES.format(
                text=text,
                completes=f"{recent(engine, 'start', lowest_start)} WHERE NOT k.steady",
                kept=" JOIN interval_cuts k ON k.job_id = i.job_id WHERE l.at_us >= k.cut",
            )
            + f") AS s ({writer_columns}) JOIN interval_cuts k ON k.job_id = s.job_id "
            "LEFT JOIN (SELECT w.job_id, w.dataset_id, w.shape_id, w.valid_from_us FROM interval_cuts h JOIN "
            "table_writers w ON w.job_id = h.job_id AND w.valid_from_us <= h.cut AND w.last_at_us >= h.cut WHERE "
            "h.joined AND NOT h.steady) AS p ON s.valid_from_us = k.cut AND p.job_id = s.job_id AND "
            "p.dataset_id = s.dataset_id AND p.shape_id = s.shape_id"
        )
        engine.execute(
            "DELETE FROM table_writers WHERE EXISTS (SELECT 1 FROM interval_cuts k WHERE k.job_id = "
            "table_writers.job_id AND table_writers.last_at_us >= k.cut AND NOT k.steady)"
        )
        engine.execute(
            "UPDATE table_writers SET valid_until_us = NULL, last_at_us = k.last_at FROM interval_cuts k WHERE "
            "k.steady AND table_writers.job_id = k.job_id AND table_writers.last_at_us >= k.cut"
        )
        engine.execute(f"INSERT INTO table_writers ({writer_columns}) SELECT {writer_columns} FROM writers_rederived")
