"""Reading OpenLineage run events tolerantly, from an events file or a Marquez server.

Nothing a source sends crashes the reader: malformed or truncated lines, events of the wrong shape, unknown
event types, duplicates and events of other namespaces are counted in a ReadReport and left out.
"""

from __future__ import annotations

import gc
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from sys import intern
from typing import Any, Protocol, runtime_checkable

import orjson

from airflow_lineage_governance.graph.errors import EventSourceError

COMPLETE = "COMPLETE"
FAIL = "FAIL"
TERMINAL = (COMPLETE, FAIL, "ABORT")
EVENT_TYPES = ("START", "RUNNING", "OTHER", *TERMINAL)
_KNOWN_TYPES = {kind: kind for kind in EVENT_TYPES}  # each type -> one string of it, shared by every event
READ_BUFFER = 1 << 20
"""The bytes an events file is read by at once (1 MiB: lines from the default 8 KiB buffer took twice as long)."""
TYPE_RANK = {"START": 0, "RUNNING": 1, "OTHER": 1, "ABORT": 2, "FAIL": 3, COMPLETE: 4}
"""How an event type ranks when two events of a run or job have the same time: COMPLETE beats START."""


@dataclass
class ReadReport:
    """What reading a source found besides good events."""

    source: str = ""
    lines: int = 0
    events: int = 0
    malformed: int = 0
    truncated: int = 0
    wrong_shape: int = 0
    unknown_type: int = 0
    duplicates: int = 0
    other_namespace: int = 0
    late: int = 0
    wrong_parts: int = 0  # parts of a kept event (datasets, fields, transformations) of the wrong shape, left out
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as plain data (the first problems as examples)."""
        data = asdict(self)
        data["problems"] = self.problems[:10]
        return data

    def note(self, problem: str) -> None:
        """Keep `problem` as an example (the first 50 only)."""
        if len(self.problems) < 50:
            self.problems.append(problem)


@dataclass(slots=True)
class RunEvent:
    """The parts of a run event the checks use.

    The whole event (`raw`) is kept only while it is the latest COMPLETE of its job, the one the graph is built from;
    holding every parsed event costs 4x the parse.
    """

    event_type: str
    event_time: str
    run_id: str
    job_namespace: str
    job_name: str
    at: datetime = field(default=datetime.min.replace(tzinfo=UTC), compare=False)  # event_time, parsed (aware)
    dag_run_id: str | None = None
    try_number: int | None = None
    extraction_failed: bool = False  # the run facets hold an `extractionError`: its lineage could not be read
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def order(self) -> tuple[datetime, int, str, str]:
        """Return the key that orders events in time.

        The parsed event time (so `…46.54148Z` and `…46.541480+00:00` are the same instant), then the type (COMPLETE
        beats START at the same instant), then the run id and the time as written (a stable key, whatever order the
        source sent them in).
        """
        return (self.at, TYPE_RANK.get(self.event_type, 1), self.run_id, self.event_time)


def parse_time(text: str) -> datetime | None:
    """Return the event time as an aware datetime, or None when the text is no ISO 8601 time.

    A time with no offset is read as UTC, as the producers of this project never write one.
    """
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


class EventSource(Protocol):
    """Anything that yields raw event dicts (or raw lines) and fills a ReadReport."""

    description: str

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yield every event the source holds, as parsed JSON (anything; checked by the reader)."""
        ...


@runtime_checkable
class LineSource(Protocol):
    """A source that reads JSON lines and can hand each line with its parsed JSON.

    The reader then keeps the line of an event it may need whole later, not its parsed JSON (one object, not hundreds,
    to free).
    """

    def parsed_lines(self, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
        """Yield every event the source holds as parsed JSON, with the line it was parsed from.

        The line is None for an event that came from no line.
        """
        ...


@runtime_checkable
class RawLineSource(Protocol):
    """A source of JSON lines that hands each line unparsed, for a reader that parses only the parts it needs."""

    def lines(self, report: ReadReport) -> Iterator[tuple[int, bytes]]:
        """Yield each line that is not blank, with its number (counted in `report.lines`)."""
        ...

    def not_json(self, report: ReadReport, number: int, line: bytes) -> None:
        """Count a line of `lines` that is not JSON, as `parsed_lines` counts it."""
        ...


class FileEventSource:
    """An OpenLineage JSONL file, as the file transport writes it.

    `first_line` is the number the file's first line has in the problems noted, and `description` the name they give
    it (a part of a longer file copied out numbers its lines as that file does, and is named as that file).
    """

    def __init__(self, path: str | Path, first_line: int = 1, description: str | None = None) -> None:
        self.path = Path(path)
        self.description = description or str(self.path)
        self.first_line = first_line

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yields each line's parsed JSON; counts lines that are not JSON.

        Raises EventSourceError for a folder, a file that cannot be opened or one that holds a JSON array (not JSON
        Lines); a missing file yields nothing.
        """
        for raw, _ in self.parsed_lines(report):
            yield raw

    def parsed_lines(self, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
        """Yield each line's parsed JSON with the line, as `raw_events` reads them (and raises as it does)."""
        for number, line in self.lines(report):
            try:
                yield orjson.loads(line), line
            except (orjson.JSONDecodeError, UnicodeDecodeError):
                self.not_json(report, number, line)

    def lines(self, report: ReadReport) -> Iterator[tuple[int, bytes]]:
        """Yield each line that is not blank, unparsed, with its number; count it in `report.lines`.

        Raises EventSourceError as `raw_events` does; a missing file yields nothing.
        """
        if not self.path.exists():
            report.note(f"{self.description} does not exist: no event was ever written there")
            return  # no events at all is a finding for the checks, not an error of reading
        if self.path.is_dir():
            raise EventSourceError(f"{self.description}: is a folder, not an events file")
        try:
            handle = self.path.open("rb", buffering=READ_BUFFER)
        except OSError as error:
            raise EventSourceError(f"{self.description}: cannot be read ({error.strerror})") from None
        with handle:
            first = True
            for number, line in enumerate(handle, start=self.first_line):
                if line.isspace() or not line:  # as `not line.strip()`, without copying the line
                    continue
                if first and line.lstrip().startswith(b"["):
                    raise EventSourceError(
                        f"{self.description}: is a JSON array, not JSON Lines; write one event per "
                        "line, as the OpenLineage file transport does"
                    )
                first = False
                report.lines += 1
                yield number, line

    def not_json(self, report: ReadReport, number: int, line: bytes) -> None:
        """Count a line of `lines` that is not JSON: truncated when it is the last and lacks its newline."""
        if line.endswith(b"\n"):
            report.malformed += 1
            report.note(f"line {number}: not JSON")
        else:  # only the last line can lack its newline: the writer stopped mid-event
            report.truncated += 1
            report.note(f"line {number}: truncated (the file ends mid-event)")


def sql_query(raw: dict[str, Any]) -> str | None:
    """Return the SQL text of a raw event's job `sql` facet, None when it has none (or it is not a string)."""
    job = raw.get("job")
    facets = job.get("facets") if type(job) is dict else None
    sql = facets.get("sql") if type(facets) is dict else None
    query = sql.get("query") if type(sql) is dict else None
    return query if type(query) is str else None


def to_run_event(raw: Any) -> RunEvent | None:
    """Return the run event `raw` describes, or None when it lacks a run id, job name, type or event time.

    (Written for speed: it runs once per event read, and a night's history can be 100,000 events.)
    """
    try:
        run, job = raw["run"], raw["job"]
        run_id, name, event_time, event_type = run["runId"], job["name"], raw["eventTime"], raw["eventType"]
    except (KeyError, TypeError, IndexError):
        return None
    if not (
        type(run_id) is str
        and type(name) is str
        and type(event_time) is str
        and type(event_type) is str
        and run_id
        and name
        and event_time
        and event_type
        and type(job) is dict
        and type(run) is dict
    ):
        return None
    at = parse_time(event_time)
    if at is None:
        return None
    namespace = job.get("namespace", "")
    dag_run_id: str | None = None
    try_number: int | None = None
    extraction_failed = False
    facets = run.get("facets")
    if type(facets) is dict:
        airflow = facets.get("airflow")
        if type(airflow) is dict:
            dag_run, task = airflow.get("dagRun"), airflow.get("taskInstance")
            if type(dag_run) is dict and type(dag_run.get("run_id")) is str:
                dag_run_id = dag_run["run_id"]
            if type(task) is dict and type(task.get("try_number")) is int:
                try_number = task["try_number"]
        extraction_failed = type(facets.get("extractionError")) is dict
    return interned_event(
        event_type,
        event_time,
        run_id,
        namespace if type(namespace) is str else "",
        name,
        at,
        dag_run_id,
        try_number,
        extraction_failed,
        raw,
    )


def interned_event(
    event_type: str,
    event_time: str,
    run_id: str,
    namespace: str,
    name: str,
    at: datetime,
    dag_run_id: str | None,
    try_number: int | None,
    extraction_failed: bool,
    raw: dict[str, Any] | None,
) -> RunEvent:
    """Return the run event of these parts, the strings many events repeat (type, job, DAG run) kept once."""
    return RunEvent(
        _KNOWN_TYPES.get(event_type, event_type),
        event_time,
        run_id,
        intern(namespace),
        intern(name),
        at,
        None if dag_run_id is None else intern(dag_run_id),
        try_number,
        extraction_failed,
        raw,
    )


def namespaces_of(job_namespaces: str | Iterable[str] | None) -> frozenset[str] | None:
    """Return the job namespaces to keep as a set (one name, or several), or None to keep every namespace."""
    if job_namespaces is None:
        return None
    return frozenset((job_namespaces,) if isinstance(job_namespaces, str) else job_namespaces)


def read_events(
    source: EventSource,
    job_namespace: str | Iterable[str] | None = None,
    report: ReadReport | None = None,
) -> tuple[list[RunEvent], ReadReport]:
    """Return the good, distinct run events of `source` in the order read, and the report of what was left out.

    With `job_namespace` (one namespace or several), events of other job namespaces are counted in the report
    (`other_namespace`) and left out: a same-named job of another deployment never replaces ours.
    """
    report = report or ReadReport(source=source.description)
    with paused_collection():
        return _read(source, namespaces_of(job_namespace), report)


@contextmanager
def paused_collection() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block.

    Parsed events are kept, and the collector would rescan all of them again and again as they grow (8x the parse time
    at 100,000 events); parsed JSON holds no cycles, so reference counting frees it all the same. Wrap a whole pass
    (read, graph, checks) in it. On leaving, what the block kept is moved to the oldest generation (where two
    collections it survives would move it) without a scan: else the first collection after would scan all of it
    (0.1x-0.2x the parse), the next ones again (`gc.freeze` then `gc.unfreeze`).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _read(
    source: EventSource,
    namespaces: Collection[str] | None,
    report: ReadReport,
) -> tuple[list[RunEvent], ReadReport]:
    events: list[RunEvent] = []
    latest: dict[tuple[str, str], int] = {}  # job -> index of its latest COMPLETE, the only events that keep `raw`
    lines: dict[int, bytes] = {}  # index of a latest COMPLETE -> its line, parsed again once all are read
    for event, line in _distinct(source, namespaces, report):
        if event.event_type == COMPLETE:
            job = (event.job_namespace, event.job_name)
            known = latest.get(job)
            if known is None or _not_before(event, events[known]):
                if known is not None:
                    events[known].raw = None
                    lines.pop(known, None)
                latest[job] = len(events)
                if line is not None:
                    event.raw = None
                    lines[len(events)] = line
            else:
                event.raw = None
        else:
            event.raw = None
        events.append(event)
    for index, line in lines.items():
        events[index].raw = orjson.loads(line)
    report.events = len(events)
    return events, report


def _distinct(
    source: EventSource, namespaces: Collection[str] | None, report: ReadReport
) -> Iterator[tuple[RunEvent, bytes | None]]:
    """Yield each good, distinct event of the job namespaces (holding its `raw` JSON) with its line, as read.

    What is left out is counted in `report`.
    """
    seen: dict[str, RunEvent | list[RunEvent] | set[tuple[str, datetime]]] = {}  # run id -> its events so far
    known_types = _KNOWN_TYPES
    for raw, line in _with_lines(source, report):
        event = to_run_event(raw)
        if event is None:
            report.wrong_shape += 1
            report.note("an event without a run id, job name, event type or ISO 8601 event time")
            continue
        if event.event_type not in known_types:
            report.unknown_type += 1
            report.note(f"{event.job_name}: unknown event type {event.event_type!r}")
            continue
        if namespaces is not None and event.job_namespace not in namespaces:
            report.other_namespace += 1
            continue
        prior = seen.get(event.run_id)
        if prior is None:
            seen[event.run_id] = event
        elif _seen(event, prior, seen):
            report.duplicates += 1
            continue
        yield event, line


class DistinctEventSource:
    """The good, distinct events of a source's job namespaces, as `read_events` keeps them.

    Read once (by the store's ingest, say), it counts in its `report` what `read_events` counts: lines that are not
    JSON, events of the wrong shape or an unknown type, duplicates, events of other job namespaces, and the events
    kept.
    """

    def __init__(
        self, source: EventSource, job_namespace: str | Iterable[str] | None = None, report: ReadReport | None = None
    ) -> None:
        self.source = source
        self.description = source.description
        self.namespaces = namespaces_of(job_namespace)
        self.report = report or ReadReport(source=source.description)

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yield each kept event's parsed JSON (what is left out is counted in `self.report`, not `report`)."""
        for raw, _ in self.parsed_lines(report):
            yield raw

    def parsed_lines(self, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
        """Yield each kept event's parsed JSON with its line (None when it came from no line)."""
        for event, line in _distinct(self.source, self.namespaces, self.report):
            self.report.events += 1
            raw, event.raw = event.raw, None  # the event is kept to find duplicates: its JSON is not
            yield raw, line


def _seen(
    event: RunEvent,
    prior: RunEvent | list[RunEvent] | set[tuple[str, datetime]],
    seen: dict[str, RunEvent | list[RunEvent] | set[tuple[str, datetime]]],
) -> bool:
    """Return whether an event of the same run, type and instant was read before; else note the event in `seen`.

    The instant however the source wrote the time; `prior` is the run's one event, its few events or the keys of its
    many. Most runs have one to three events: they are compared, not hashed.
    """
    kind, at = event.event_type, event.at
    if type(prior) is RunEvent:
        if prior.event_type == kind and prior.at == at:
            return True
        seen[event.run_id] = [prior, event]
    elif type(prior) is list:
        if any(known.event_type == kind and known.at == at for known in prior):
            return True
        prior.append(event)
        if len(prior) > 8:
            seen[event.run_id] = {(known.event_type, known.at) for known in prior}
    else:
        assert type(prior) is set
        if (kind, at) in prior:
            return True
        prior.add((kind, at))
    return False


def _not_before(event: RunEvent, other: RunEvent) -> bool:
    """Return `event.order >= other.order`, comparing the times alone when they differ (most events)."""
    if event.at != other.at:
        return event.at > other.at
    return event.order >= other.order


def _with_lines(source: EventSource, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
    """Yield each event of the source with its line when the source reads lines, else with None."""
    if isinstance(source, LineSource):
        yield from source.parsed_lines(report)
    else:
        for raw in source.raw_events(report):
            yield raw, None


def final_events(events: Iterable[RunEvent], report: ReadReport | None = None) -> dict[str, RunEvent]:
    """Return, per run id, the event that says how the run ended.

    The latest terminal event, else the latest event of any type (by `RunEvent.order`: parsed time, then type, then a
    stable key). A START that arrives after the run's COMPLETE never hides it (counted as late).
    """
    final: dict[str, RunEvent] = {}
    for event in events:
        known = final.get(event.run_id)
        if known is None:
            final[event.run_id] = event
            continue
        known_terminal, terminal = known.event_type in TERMINAL, event.event_type in TERMINAL
        if known_terminal and not terminal:
            if report is not None:
                report.late += 1
            continue
        if terminal and not known_terminal or event.order >= known.order:
            final[event.run_id] = event
    return final
