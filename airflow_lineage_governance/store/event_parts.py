"""The parts of an event the store's ingest reads: its run event and, for a COMPLETE, the datasets it names.

Read from the event's parsed JSON (`parts_of`), or straight from its line (`read_line`), which decodes only those
parts and skips the rest unparsed; a line it cannot read exactly as orjson would (holding a Unicode escape, any part
of an unexpected type, or one orjson refuses) is handed back, for the reader to parse whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from airflow_lineage_governance.graph.events import (
    COMPLETE,
    EVENT_TYPES,
    RunEvent,
    interned_event,
    parse_time,
    sql_query,
)

Dataset = tuple[str, str, str | None, str | None]
"""A dataset an event names: its role (`input` or `output`), its name, its namespace and its snapshot (the `version`
facet's `datasetVersion`); the namespace and the snapshot None when absent or not strings."""


@dataclass(frozen=True, slots=True)
class EventParts:
    """What a COMPLETE states besides its run: its lineage's key, the datasets it names, its SQL."""

    lineage_key: bytes | None  # two COMPLETEs of equal keys state the same lineage; None: nested too deep to write
    datasets: tuple[Dataset, ...]  # each dataset that is an object with a string name: inputs, then outputs
    query: str | None  # the job's `sql` facet's query


def parts_of(raw: dict[str, Any]) -> EventParts:
    """Return the parts of a COMPLETE read from its parsed JSON.

    Args:
        raw: The event's JSON.

    Returns:
        Its lineage key (`lineage_key`), the datasets it names and its SQL.
    """
    return EventParts(lineage_key(raw), tuple(_datasets(raw)), sql_query(raw))


def lineage_key(raw: dict[str, Any]) -> bytes | None:
    """Return the parts of an event its lineage is read from, as JSON.

    Each dataset's name, namespace, schema and column lineage facets, or the dataset itself when it is no object: two
    events with equal keys state the same lineage (their snapshots may differ). None when the parts cannot be written so
    (nested too deep).
    """
    parts: list[Any] = []
    for key in ("inputs", "outputs"):
        datasets = raw.get(key)
        if type(datasets) is not list:
            parts.append({"datasets": datasets})
            continue
        for dataset in datasets:
            facets = dataset.get("facets") if type(dataset) is dict else None
            if type(facets) is dict:
                parts.append(
                    [dataset.get("name"), dataset.get("namespace"), facets.get("schema"), facets.get("columnLineage")]
                )
            elif type(dataset) is dict:
                parts.append([dataset.get("name"), dataset.get("namespace"), facets])
            else:
                parts.append({"dataset": dataset})
        parts.append(None)  # between the inputs and the outputs
    try:
        return orjson.dumps(parts)
    except (orjson.JSONEncodeError, TypeError):
        return None


def _datasets(raw: dict[str, Any]) -> Iterator[Dataset]:
    for key, role in (("inputs", "input"), ("outputs", "output")):
        datasets = raw.get(key)
        for dataset in datasets if type(datasets) is list else ():
            if type(dataset) is not dict or type(dataset.get("name")) is not str:
                continue
            namespace, facets = dataset.get("namespace"), dataset.get("facets")
            found = facets.get("version") if type(facets) is dict else None
            version = found.get("datasetVersion") if type(found) is dict else None
            yield (
                role,
                dataset["name"],
                namespace if type(namespace) is str else None,
                version if type(version) is str else None,
            )


NULL = msgspec.Raw(b"null")


class _Version(msgspec.Struct):
    datasetVersion: str | None = None


class _DatasetFacets(msgspec.Struct):
    version: _Version | None = None
    schema: msgspec.Raw = NULL
    columnLineage: msgspec.Raw = NULL


class _Dataset(msgspec.Struct):
    name: str
    namespace: str | None = None
    facets: _DatasetFacets | None = None


class _DagRun(msgspec.Struct):
    run_id: str | None = None


class _TaskInstance(msgspec.Struct):
    try_number: int | None = None


class _Airflow(msgspec.Struct):
    dagRun: _DagRun | None = None
    taskInstance: _TaskInstance | None = None


class _RunFacets(msgspec.Struct):
    airflow: _Airflow | None = None
    extractionError: dict[str, msgspec.Raw] | None = None


class _Run(msgspec.Struct):
    runId: str
    facets: _RunFacets | None = None


class _Sql(msgspec.Struct):
    query: str | None = None


class _JobFacets(msgspec.Struct):
    sql: _Sql | None = None


class _Job(msgspec.Struct):
    name: str
    namespace: str = ""
    facets: _JobFacets | None = None


class _Event(msgspec.Struct):
    eventType: str
    eventTime: str
    run: _Run
    job: _Job
    inputs: list[_Dataset] | None = None
    outputs: list[_Dataset] | None = None


_DECODER = msgspec.json.Decoder(_Event)
_MARKED = bytes.maketrans(b"123456789E{", b"000000000e[")
"""Every digit read as `0`, `E` as `e`, a `{` as a `[`: what `_checked_whole` looks for, in one pass (signs left out:
`_SIGNS`)."""
_SIGNS = b"+-"
"""The bytes `_checked_whole` leaves out of the line it searches: an exponent's sign, so that one search finds an
exponent with a sign or without (`0e0`)."""
DEEPEST = 1024
"""How deep orjson reads JSON (msgspec reads as deep as Python's recursion limit lets it)."""
INTEGERS = range(-(2**63), 2**64)
"""The integers orjson reads as integers (beyond, as floats)."""


def _checked_whole(line: bytes) -> bool:
    """Return whether orjson might refuse a line `read_line`'s decoding read, which skips some parts unchecked.

    Bytes beyond ASCII (orjson refuses invalid UTF-8), a number with an exponent (a digit, `e` or `E`, maybe a sign,
    a digit) or of 309 digits and more (orjson refuses one past a double's range), or more brackets than orjson reads
    deep. A string that merely looks so (a hexadecimal id with `3e5` or `0e-` in it) is checked too.
    """
    marked = line.translate(_MARKED, _SIGNS)  # signs left out: more lines may merely look so, none is missed
    return not line.isascii() or b"0e0" in marked or b"0" * 309 in marked or marked.count(b"[") > DEEPEST


def read_line(line: bytes) -> tuple[RunEvent, EventParts | None] | None:
    """Return the run event a JSON line holds and, for a COMPLETE, its parts, decoding only those parts.

    A line holding a Unicode escape (a NUL, a lone surrogate, a key spelt with escapes) is left to be parsed whole; a
    line orjson might refuse (`_checked_whole`) is parsed by orjson too, and left when it refuses it.

    Args:
        line: The event's JSON line.

    Returns:
        The event (its `raw` None) and the parts of a COMPLETE (None for another type), exactly as `to_run_event` and
        `parts_of` read the line parsed whole; None when the line is to be parsed whole: not a good event, or one it
        cannot read as orjson would.
    """
    if line.find(b"\\") >= 0 and b"\\u" in line:  # one byte is looked for far faster than two
        return None
    try:
        decoded = _DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    if _checked_whole(line):
        try:
            orjson.loads(line)
        except (orjson.JSONDecodeError, UnicodeDecodeError):
            return None
    run, job, event_type, event_time = decoded.run, decoded.job, decoded.eventType, decoded.eventTime
    if not (run.runId and job.name and event_time and event_type in EVENT_TYPES):
        return None
    at = parse_time(event_time)
    if at is None:
        return None
    dag_run_id, try_number, extraction_failed = None, None, False
    facets = run.facets
    if facets is not None:
        airflow = facets.airflow
        if airflow is not None:
            if airflow.dagRun is not None:
                dag_run_id = airflow.dagRun.run_id
            if airflow.taskInstance is not None:
                try_number = airflow.taskInstance.try_number
                if try_number is not None and try_number not in INTEGERS:
                    return None
        extraction_failed = facets.extractionError is not None
    event = interned_event(
        event_type, event_time, run.runId, job.namespace, job.name, at, dag_run_id, try_number, extraction_failed, None
    )
    if event_type != COMPLETE:
        return event, None
    sql = job.facets.sql if job.facets is not None else None
    return event, EventParts(
        _key(decoded.inputs, decoded.outputs),
        (*_named("input", decoded.inputs), *_named("output", decoded.outputs)),
        sql.query if sql is not None else None,
    )


def _key(inputs: Sequence[_Dataset] | None, outputs: Sequence[_Dataset] | None) -> bytes:
    """Return `lineage_key` of the decoded datasets (the facets as written in the line, not written anew)."""
    parts: list[Any] = []
    for datasets in (inputs, outputs):
        if datasets is None:
            parts.append({"datasets": None})
            continue
        for dataset in datasets:
            facets = dataset.facets
            if facets is None:
                parts.append([dataset.name, dataset.namespace, None])
            else:
                parts.append([dataset.name, dataset.namespace, facets.schema, facets.columnLineage])
        parts.append(None)
    return msgspec.json.encode(parts)


def _named(role: str, datasets: Sequence[_Dataset] | None) -> Iterator[Dataset]:
    for dataset in datasets or ():
        found = dataset.facets.version if dataset.facets is not None else None
        yield role, dataset.name, dataset.namespace, found.datasetVersion if found is not None else None
