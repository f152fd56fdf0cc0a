"""Bringing the events of an event source (a Marquez server, an events file) into the store, incrementally.

The store keeps, per source, the latest event time read from it (`source_watermarks`), and for a file where its read
stopped (`FilePlace`). A Marquez server is asked only for the events after that watermark, less an overlap; a file is
read from where the last sync stopped, unless it was truncated or replaced since. What is read is copied out before
anything is stored: a source that fails while it is read leaves the store as it was.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import orjson

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import (
    EventSource,
    FileEventSource,
    LineSource,
    ReadReport,
    parse_time,
)
from airflow_lineage_governance.graph.sources import open_event_source
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.errors import StoreBusyError
from airflow_lineage_governance.store.ids import stable_id
from airflow_lineage_governance.store.ingest import BATCH, EPOCH, IngestReport, dumps_event, ingest, micros
from airflow_lineage_governance.store.lineage_store import LineageStore

OVERLAP = timedelta(hours=1)
"""How far before a Marquez source's watermark the next sync asks from."""
WAIT_SECONDS = 30.0
"""How long a sync waits for a DuckDB store another process has open."""
CHUNK = 1 << 20
"""How many bytes of an events file are copied at a time."""

T = TypeVar("T")


@dataclass
class SyncReport:
    """What one sync read from its source and added to the store."""

    source: str
    store: str = ""
    asked_after: str | None = None  # the time a Marquez source was asked for events after (None: the beginning)
    read_from_byte: int | None = None  # where in a file the sync started reading (0: the beginning; None: Marquez)
    read_to_byte: int | None = None  # where it stopped: after the file's last whole line
    watermark: str | None = None  # the latest event time the store has read from the source, after the sync
    read: int = 0
    added: int = 0
    duplicates: int = 0
    malformed: int = 0  # left out: not JSON, truncated, of the wrong shape or of an unknown event type
    ingest: IngestReport = field(default_factory=IngestReport)

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as plain data, with the ingest's own counts beside."""
        return {
            "source": self.source,
            "store": self.store,
            "asked_after": self.asked_after,
            "read_from_byte": self.read_from_byte,
            "read_to_byte": self.read_to_byte,
            "watermark": self.watermark,
            "read": self.read,
            "added": self.added,
            "duplicates": self.duplicates,
            "malformed": self.malformed,
            "ingest": self.ingest.to_dict(),
        }

    def line(self) -> str:
        """Return the counts as one sentence, as the CLI and the nightly DAG's log show them."""
        since = f" (asked for events after {self.asked_after})" if self.asked_after else ""
        if self.read_from_byte:
            since = f" (read from byte {self.read_from_byte})"
        return (
            f"{self.source}{since}: {self.read} read, {self.added} added, {self.duplicates} already in the store, "
            f"{self.malformed} malformed; watermark {self.watermark or 'none'}"
        )


def source_key(spec: str | Path) -> str:
    """Return the name a source's watermark is kept under: a Marquez URL without its trailing `/`, else the file's path.

    A folder names its `events.jsonl`; a relative path is made absolute.
    """
    text = str(spec)
    if text.startswith(("http://", "https://")):
        return text.rstrip("/")
    return str(events_path(text).absolute())


def events_path(spec: str | Path) -> Path:
    """Return the events file `spec` names: the file itself, or the `events.jsonl` of a folder."""
    path = Path(spec)
    return path / "events.jsonl" if path.is_dir() else path


def watermark(engine: Engine, source: str) -> tuple[int, str] | None:
    """Return the latest event time read from `source` (microseconds and as written), or None before its first sync.

    Args:
        engine: The store's engine.
        source: The source's key (`source_key`).

    Returns:
        The watermark, or None.
    """
    rows = engine.query("SELECT watermark_us, watermark_time FROM source_watermarks WHERE source = ?", [source])
    if not rows or rows[0][0] is None:
        return None
    return int(rows[0][0]), str(rows[0][1])


@dataclass(frozen=True)
class FilePlace:
    """Where the last sync of an events file stopped, and what the file was then."""

    byte: int  # after the last whole line read
    line: int  # how many lines come before `byte`
    size: int  # the file's size when it was read
    inode: int
    first_line_sha256: str | None  # of the file's first line with its newline (None while no line was read)


def file_place(engine: Engine, source: str) -> FilePlace | None:
    """Return where the last sync of the file `source` stopped, or None before its first.

    Args:
        engine: The store's engine.
        source: The source's key (`source_key`).

    Returns:
        The place, or None.
    """
    rows = engine.query(
        "SELECT read_to_byte, read_to_line, file_size, file_inode, first_line_sha256 FROM source_watermarks "
        "WHERE source = ?",
        [source],
    )
    if not rows or rows[0][0] is None:
        return None
    byte, line, size, inode, first = rows[0]
    return FilePlace(int(byte), int(line), int(size), int(inode), first)


def first_line_sha256(handle: BinaryIO, limit: int) -> str | None:
    """Return the SHA-256 of the file's first line with its newline, read from `handle` (at most `limit` bytes).

    None when the file is empty.
    """
    handle.seek(0)
    digest, read = hashlib.sha256(), 0
    while read < limit:
        chunk = handle.read(min(CHUNK, limit - read))
        if not chunk:
            break
        end = chunk.find(b"\n")
        digest.update(chunk if end < 0 else chunk[: end + 1])
        read += len(chunk)
        if end >= 0:
            break
    return digest.hexdigest() if read else None


def resume_at(handle: BinaryIO, place: FilePlace | None) -> FilePlace | None:
    """Return `place` when the open file is the one it was read in, only appended to since; else None (read it all).

    A file of another inode was replaced, a file smaller than it was was truncated, and a file whose first line
    differs was rewritten: each is read again from its start (ingest keeps each event once).
    """
    if place is None or place.byte == 0:
        return None
    found = os.fstat(handle.fileno())
    if found.st_ino != place.inode or found.st_size < place.size:
        return None
    return place if first_line_sha256(handle, place.byte) == place.first_line_sha256 else None


def copy_new_lines(path: Path, place: FilePlace | None, segment: Path) -> tuple[FilePlace, FilePlace | None]:
    """Copy the whole lines of the events file after `place` into `segment`; return the place after them and before.

    The place before is None when the file is read from its start. A last line without its newline is left for the
    next sync (the writer has not finished it), unless it is whole JSON.

    Raises:
        EventSourceError: The file cannot be opened.
    """
    try:
        handle = path.open("rb")
    except OSError as error:
        raise EventSourceError(f"{path}: cannot be read ({error.strerror})") from None
    with handle, segment.open("w+b") as out:
        start = resume_at(handle, place)
        byte, line = (start.byte, start.line) if start else (0, 0)
        handle.seek(byte)
        at, whole, lines = byte, byte, line
        while chunk := handle.read(CHUNK):
            out.write(chunk)
            last = chunk.rfind(b"\n")
            if last >= 0:
                whole, lines = at + last + 1, lines + chunk.count(b"\n")
            at += len(chunk)
        if at > whole:  # a last line without its newline
            out.seek(whole - byte)
            tail = out.read()
            try:
                orjson.loads(tail)
                whole, lines = at, lines + 1
            except orjson.JSONDecodeError:
                pass  # the writer is still writing it
        out.truncate(whole - byte)
        first = start.first_line_sha256 if start else first_line_sha256(handle, whole)
        inode = os.fstat(handle.fileno()).st_ino
    return FilePlace(whole, lines, at, inode, first), start


def open_waiting(location: str, *, create: bool = False, wait_seconds: float = WAIT_SECONDS) -> LineageStore:
    """Open the store for writing, waiting up to `wait_seconds` for a DuckDB file another process has open.

    Args:
        location: A DuckDB file or a `postgresql://` URL.
        create: Create the store when there is none.
        wait_seconds: How long to wait for the file.

    Returns:
        The open store.

    Raises:
        StoreBusyError: The file is still open elsewhere after `wait_seconds`.
        StoreError: The store cannot be opened.
    """
    deadline = time.monotonic() + wait_seconds
    pause = 0.02
    while True:
        try:
            return LineageStore.open(location, create=create)
        except StoreBusyError:
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause * random.uniform(0.5, 1.5))
        pause = min(pause * 2, 1.0)


def _with(location: str, create: bool, wait_seconds: float, work: Callable[[LineageStore], T]) -> T:
    with open_waiting(location, create=create, wait_seconds=wait_seconds) as store:
        return work(store)


def sync(
    location: str,
    spec: str | Path,
    *,
    create: bool = False,
    overlap: timedelta = OVERLAP,
    batch_size: int = BATCH,
    wait_seconds: float = WAIT_SECONDS,
    **source_options: Any,
) -> SyncReport:
    """Add the events of the source `spec` names that the store lacks, and move the source's watermark.

    A Marquez source is asked only for its events after the watermark less `overlap`; a file is read from where the
    last sync stopped (from its start when it was truncated or replaced since), its whole lines only (ingest keeps each
    event once). What is read goes into a temporary file before the store is written, so a source that fails leaves the
    store as it was; a DuckDB store is held open only while it is read and written, not while the source is.

    Args:
        location: The store: a DuckDB file or a `postgresql://` URL.
        spec: The event source: a Marquez URL, a JSON Lines file, or a folder holding `events.jsonl`.
        create: Create the store when there is none.
        overlap: How far before the watermark a Marquez source is asked from.
        batch_size: How many events each transaction holds.
        wait_seconds: How long to wait for a DuckDB store another process has open.
        **source_options: Options of the Marquez source (`timeout`, `attempts`, ...).

    Returns:
        What was read, added, already there and left out, and the watermark after.

    Raises:
        EventSourceError: The source cannot be read (nothing was stored).
        StoreError: The store cannot be opened or written.
    """
    key = source_key(spec)
    marquez = key.startswith(("http://", "https://"))
    known, known_place = _with(
        location,
        create,
        wait_seconds,
        lambda store: store.answer(
            "read a watermark", lambda: (watermark(store.engine, key), file_place(store.engine, key))
        ),
    )
    report = SyncReport(source=key)
    if marquez and known is not None:
        after = EPOCH + timedelta(microseconds=known[0]) - overlap
        report.asked_after = after.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        source_options = {**source_options, "after": report.asked_after}
    read = ReadReport(source=key)
    with tempfile.TemporaryDirectory(prefix="lineage-sync-") as folder:
        spool = Path(folder) / "events.jsonl"
        place: FilePlace | None = None
        if marquez:
            source: EventSource = open_event_source(key, **source_options)
        else:
            source, place = _file_source(events_path(spec), known_place, Path(folder), report)
        latest = _spool(source, spool, read)
        ingested = IngestReport(source=key)

        def store_them(store: LineageStore) -> str:
            report.store = store.engine.description
            store.answer(
                "stored events",
                lambda: ingest(store.engine, FileEventSource(spool), batch_size=batch_size, report=ingested),
            )
            return store.answer("moved a watermark", lambda: _move(store.engine, key, latest, place))

        report.watermark = _with(location, create, wait_seconds, store_them) or None
    ingested.malformed += read.malformed
    ingested.truncated += read.truncated
    ingested.read += read.malformed + read.truncated
    ingested.problems[:0] = read.problems[:10]
    report.ingest = ingested
    report.read, report.added, report.duplicates = ingested.read, ingested.stored, ingested.duplicates
    report.malformed = ingested.malformed + ingested.truncated + ingested.wrong_shape + ingested.unknown_type
    return report


def _file_source(
    path: Path, known: FilePlace | None, folder: Path, report: SyncReport
) -> tuple[EventSource, FilePlace | None]:
    """Return the lines of the events file after `known` (copied into `folder`) and where the read stops.

    A file that is not there or is a folder is handed on whole (its reader says so); its place is then None.
    """
    if not path.is_file():
        return FileEventSource(path), None
    segment = folder / "new-lines.jsonl"
    place, start = copy_new_lines(path, known, segment)
    report.read_from_byte, report.read_to_byte = (start.byte if start else 0), place.byte
    return FileEventSource(segment, (start.line if start else 0) + 1, str(path)), place


def _spool(source: EventSource, spool: Path, read: ReadReport) -> tuple[int, str] | None:
    """Write every event of the source into `spool`, one line each; return the latest event time read."""
    latest: tuple[int, str] | None = None
    with spool.open("wb") as handle:
        for raw, line in _lines(source, read):
            handle.write(line.rstrip(b"\r\n") + b"\n" if line is not None else dumps_event(raw) + b"\n")
            text = raw.get("eventTime") if type(raw) is dict else None
            at = parse_time(text) if type(text) is str else None
            if at is not None and (latest is None or micros(at) > latest[0]):
                latest = (micros(at), str(text))
    return latest


def _lines(source: EventSource, read: ReadReport) -> Iterator[tuple[Any, bytes | None]]:
    if isinstance(source, LineSource):
        yield from source.parsed_lines(read)
    else:
        for raw in source.raw_events(read):
            yield raw, None


def _move(engine: Engine, source: str, latest: tuple[int, str] | None, place: FilePlace | None) -> str:
    """Record the sync of `source`: its watermark moved to `latest` when later, a file's place to `place` (when read).

    Returns the watermark as written.
    """
    with engine.transaction():
        engine.lock([stable_id("watermark", source)])
        known = watermark(engine, source)
        kept = latest if known is None or (latest is not None and latest[0] > known[0]) else known
        where = place or file_place(engine, source)
        engine.execute("DELETE FROM source_watermarks WHERE source = ?", [source])
        engine.execute(
            "INSERT INTO source_watermarks (source, watermark_us, watermark_time, synced_at_us, read_to_byte, "
            "read_to_line, file_size, file_inode, first_line_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                source,
                kept[0] if kept else None,
                kept[1] if kept else None,
                micros(datetime.now(UTC)),
                *((where.byte, where.line, where.size, where.inode, where.first_line_sha256) if where else [None] * 5),
            ],
        )
    return kept[1] if kept else ""
