"""The lineage history between nightly runs.

A folder holding every event read so far (`events.jsonl`, JSON Lines as the OpenLineage file transport writes them,
readable by DuckDB's `read_json`) and the watermark (`watermark.json`: the latest event time read). A nightly run reads
the store, then from the Marquez server only the events after the watermark (less an overlap, for events that arrive
late), and appends the new ones.

Why a folder of JSON Lines and not an Iceberg table in the catalog: the events are kept as the backend sent
them (nothing to map, no schema to evolve when a producer adds a facet), the store is read with the same reader
as any events file, appending needs no catalog commit (a governance run never writes into the
catalog it governs), and DuckDB still reads it as data (`SELECT ... FROM read_json('events.jsonl')`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import EventSource, FileEventSource, ReadReport, parse_time

OVERLAP = timedelta(hours=1)
"""How far before the watermark the next read starts: events that arrived late, dated before it, are read
again (and kept once: the store remembers the events of that hour)."""


def _key(raw: Any) -> tuple[str, str, str] | None:
    try:
        return (str(raw["run"]["runId"]), str(raw["eventType"]), str(raw["eventTime"]))
    except (KeyError, TypeError):
        return None


@dataclass
class HistoryStore:
    """The store in `folder` (created on the first save)."""

    folder: Path
    watermark: datetime | None = None
    recent: set[tuple[str, str, str]] = field(default_factory=set)  # keys of stored events in the overlap
    new: list[Any] = field(default_factory=list)  # events read past the watermark, not stored yet

    @property
    def events_path(self) -> Path:
        """Return the store's events file."""
        return self.folder / "events.jsonl"

    @classmethod
    def open(cls, folder: str | Path) -> HistoryStore:
        """Return the store in `folder` with its watermark (None when nothing was stored).

        Raises EventSourceError for a watermark file that cannot be read.
        """
        store = cls(Path(folder))
        marker = store.folder / "watermark.json"
        if marker.exists():
            try:
                store.watermark = parse_time(json.loads(marker.read_text())["watermark"])
            except (OSError, ValueError, KeyError, TypeError):
                raise EventSourceError(
                    f"{marker}: not a watermark written by the governance; remove it to read "
                    "the backend's whole history again"
                ) from None
        return store

    def since(self) -> str | None:
        """Return the ISO 8601 time the next backend read starts after (the watermark less the overlap)."""
        if self.watermark is None:
            return None
        return (self.watermark - OVERLAP).isoformat().replace("+00:00", "Z")

    def source(self, backend: EventSource) -> EventSource:
        """Return the source of the whole history.

        The stored events, then the backend's (read after `since`), the backend's new events remembered for `save`.
        """
        return _Chained(self, backend)

    def save(self) -> int:
        """Append the new events to the store and move the watermark to the latest event time read.

        Returns how many events were appended.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        latest = self.watermark
        with self.events_path.open("ab") as handle:
            for raw in self.new:
                handle.write(orjson.dumps(raw) + b"\n")
                at = parse_time(str(raw.get("eventTime"))) if isinstance(raw, dict) else None
                if at is not None and (latest is None or at > latest):
                    latest = at
        if latest is not None:
            marker = self.folder / "watermark.json"
            temporary = marker.with_suffix(".tmp")
            temporary.write_text(json.dumps({"watermark": latest.isoformat()}))
            os.replace(temporary, marker)
        appended, self.new = len(self.new), []
        return appended


class _Chained:
    def __init__(self, store: HistoryStore, backend: EventSource) -> None:
        self.store, self.backend = store, backend
        self.description = (
            f"{backend.description} (after {store.since() or 'the beginning'}; earlier events from {store.events_path})"
        )

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        for raw, _ in self.parsed_lines(report):
            yield raw

    def parsed_lines(self, report: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
        store = self.store
        start = store.since()
        since = parse_time(start) if start is not None else None
        for raw, line in FileEventSource(store.events_path).parsed_lines(report):
            if since is not None and isinstance(raw, dict):
                at = parse_time(str(raw.get("eventTime")))
                if at is not None and at >= since:
                    key = _key(raw)
                    if key is not None:
                        store.recent.add(key)
            yield raw, line
        for raw in self.backend.raw_events(report):
            key = _key(raw)
            if key is None or key not in store.recent:
                store.new.append(raw)
            yield raw, None
