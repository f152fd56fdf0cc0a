"""Reading OpenLineage run events tolerantly, from an events file or a Marquez server.

Nothing a source sends crashes the reader: malformed or truncated lines, events of the wrong shape, unknown
event types, duplicates and events of other namespaces are counted in a ReadReport and left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from airflow_lineage_governance.graph.errors import EventSourceError

TERMINAL = ("COMPLETE", "FAIL", "ABORT")
EVENT_TYPES = ("START", "RUNNING", "OTHER", *TERMINAL)


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
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Returns the counts as plain data (the first problems as examples)."""
        data = asdict(self)
        data["problems"] = self.problems[:10]
        return data

    def note(self, problem: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(problem)


@dataclass(frozen=True)
class RunEvent:
    """The parts of a run event the governance checks use (the raw event is kept for the graph)."""

    event_type: str
    event_time: str
    run_id: str
    job_namespace: str
    job_name: str
    raw: dict = field(repr=False, compare=False)

    @property
    def airflow(self) -> dict:
        """Returns the `airflow` run facet's taskInstance (empty when the event has none)."""
        facet = self.raw.get("run", {}).get("facets", {}).get("airflow") or {}
        return facet.get("taskInstance") or {}


class EventSource(Protocol):
    """Anything that yields raw event dicts (or raw lines) and fills a ReadReport."""

    description: str

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yields every event the source holds, as parsed JSON (anything; checked by the reader)."""
        ...


class FileEventSource:
    """An OpenLineage JSONL file, as the file transport writes it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.description = str(self.path)

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        if not self.path.exists():
            report.note(f"{self.path} does not exist: no event was ever written there")
            return  # no events at all is a finding for the checks, not an error of reading
        if self.path.is_dir():
            raise EventSourceError(f"{self.path}: is a folder, not an events file")
        try:
            handle = self.path.open("rb")
        except OSError as error:
            raise EventSourceError(f"{self.path}: cannot be read ({error.strerror})") from None
        with handle:
            previous: bytes | None = None
            number = 0
            for line in handle:
                if previous is not None:
                    number += 1
                    yield from _parse_line(previous, number, report, last=False)
                previous = line
            if previous is not None:
                number += 1
                yield from _parse_line(previous, number, report, last=not previous.endswith(b"\n"))


def _parse_line(line: bytes, number: int, report: ReadReport, last: bool) -> Iterator[Any]:
    if not line.strip():
        return
    report.lines += 1
    try:
        yield json.loads(line)
    except (ValueError, UnicodeDecodeError):
        if last:
            report.truncated += 1
            report.note(f"line {number}: truncated (the file ends mid-event)")
        else:
            report.malformed += 1
            report.note(f"line {number}: not JSON")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def to_run_event(raw: Any) -> RunEvent | None:
    """Returns the run event `raw` describes, or None when it lacks a run id, job or event time."""
    if not isinstance(raw, dict):
        return None
    run, job = raw.get("run"), raw.get("job")
    if not isinstance(run, dict) or not isinstance(job, dict):
        return None
    run_id, name = _text(run.get("runId")), _text(job.get("name"))
    event_time, event_type = _text(raw.get("eventTime")), _text(raw.get("eventType"))
    namespace = job.get("namespace") if isinstance(job.get("namespace"), str) else ""
    if not (run_id and name and event_time and event_type):
        return None
    return RunEvent(event_type, event_time, run_id, namespace, name, raw)


def read_events(source: EventSource, job_namespace: str | None = None,
                report: ReadReport | None = None) -> tuple[list[RunEvent], ReadReport]:
    """Returns the good, distinct run events of `source` (of `job_namespace` when given) in the order read,
    and the report of what was left out."""
    report = report or ReadReport(source=source.description)
    seen: set[tuple[str, str, str]] = set()
    events: list[RunEvent] = []
    for raw in source.raw_events(report):
        event = to_run_event(raw)
        if event is None:
            report.wrong_shape += 1
            report.note("an event without a run id, job name, event type or event time")
            continue
        if event.event_type not in EVENT_TYPES:
            report.unknown_type += 1
            report.note(f"{event.job_name}: unknown event type {event.event_type!r}")
            continue
        if job_namespace is not None and event.job_namespace != job_namespace:
            report.other_namespace += 1
            continue
        key = (event.run_id, event.event_type, event.event_time)
        if key in seen:
            report.duplicates += 1
            continue
        seen.add(key)
        events.append(event)
    report.events = len(events)
    return events, report


def final_events(events: Iterable[RunEvent], report: ReadReport | None = None) -> dict[str, RunEvent]:
    """Returns, per run id, the event that says how the run ended: the latest terminal event, else the latest
    event of any type. A START that arrives after the run's COMPLETE never hides it (counted as late)."""
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
        if terminal and not known_terminal or event.event_time >= known.event_time:
            final[event.run_id] = event
    return final


def open_event_source(spec: str | Path, **options: Any) -> EventSource:
    """Returns the source `spec` names: an `http(s)://` URL is a Marquez server, anything else a JSONL file."""
    text = str(spec)
    if text.startswith(("http://", "https://")):
        from airflow_lineage_governance.graph.marquez import MarquezEventSource

        return MarquezEventSource(text, **options)
    return FileEventSource(text)
