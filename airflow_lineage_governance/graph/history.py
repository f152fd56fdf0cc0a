"""Lineage with time.

Every COMPLETE event kept as a run record with its evidence, indexed so that the graph as of any time is a look-up, not
a rescan.

A run record holds what one COMPLETE said: job, run id, try, event time, the snapshot of each input read and of
each output written (the datasets' `version` facets), a hash of its normalised SQL (the `sql` job facet) and its
lineage. Runs of a job that state the same lineage (most nights) share one `Shape`: its edges are built once. The
graph as of T holds each job's latest COMPLETE at or before T (`graph_as_of`); each job's records are kept in time
order, so choosing them is one bisection per job. Edges a person declared for an uninstrumented job, or that the
DAG files' SQL designs, are kept beside the observed ones (`add_static`), with their source.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.build import Edge, LineageGraph, add_event
from airflow_lineage_governance.graph.events import COMPLETE, RunEvent, sql_query
from airflow_lineage_governance.graph.nodes import NodeIndex
from airflow_lineage_governance.graph.records import RunRecord, Shape, Versions, sql_hash
from airflow_lineage_governance.kinds import EdgeSource
from airflow_lineage_governance.refs import ColumnRef, TableRef

Node = ColumnRef | TableRef

INF = float("inf")
_UNKNOWN: Any = object()  # a name not looked up yet


class LineageHistory:
    """Every COMPLETE run of every job, per job in time order, with indexes by snapshot written and read.

    :param namespace: the dataset namespace kept (datasets of others are left out); None keeps every one.
    """

    def __init__(self, namespace: str | None = None) -> None:
        self.namespace = namespace
        self.runs: dict[str, list[RunRecord]] = {}  # job -> its records, by RunEvent.order
        self.times: dict[str, array[float]] = {}  # job -> its records' event times (POSIX seconds), in order
        self.shapes: list[Shape] = []  # every shape, by serial
        self.stretch_from, self.stretch_until = array("d"), array("d")  # by serial: the latest stretch of time its
        # job's latest run had that shape ([from, until); until is inf while it is the latest)
        self.earlier_stretches: dict[int, list[tuple[float, float]]] = {}  # serial -> stretches before the latest
        self.static_sources: dict[int, EdgeSource] = {}  # serial of a declared or designed shape -> its source
        self.static: list[RunRecord] = []  # declared and designed lineage, true at every time
        self.writers: dict[tuple[TableRef, str], RunRecord] = {}  # (table, snapshot) -> the run that wrote it
        self.readers: dict[tuple[TableRef, str], list[RunRecord]] = defaultdict(list)  # -> the runs that read it
        self._tables: dict[str, TableRef | None] = {}
        self._hashes: dict[str, str] = {}
        self._shapes: dict[str, list[Shape]] = {}  # job -> its distinct shapes, newest first
        self.nodes = NodeIndex()  # every shape's edges, from node to node
        self.columns: dict[TableRef, dict[str, ColumnRef]] = defaultdict(dict)  # every column ever named
        self.writers_of: dict[TableRef, set[str]] = defaultdict(set)  # table -> every job that wrote it
        self.events = 0

    def __len__(self) -> int:
        return self.events

    def _table(self, name: str) -> TableRef | None:
        try:
            return self._tables[name]
        except KeyError:
            pass
        try:
            ref: TableRef | None = TableRef.parse(name)
        except InvalidNameError:
            ref = None
        self._tables[name] = ref
        return ref

    def _hash(self, query: str | None) -> str | None:
        if query is None:
            return None
        known = self._hashes.get(query)
        if known is None:
            known = self._hashes[query] = sql_hash(query)
        return known

    def _versions(self, datasets: Any, lineage: list[Any] | None) -> tuple[Versions, list[Any]]:
        """Return the (table, snapshot) of each dataset of our namespace, and the key of each dataset as JSON values.

        The key is the parts a shape is keyed on: its name, namespace and schema as an array (its facets for the schema
        when they are no object), anything else (a dataset that is no object, or the whole value when it is no list) as
        an object {"dataset": it}; so two keys' orjson bytes are equal only when the keys are. Appends each dataset's
        lineage facet to `lineage` when given.
        """
        if type(datasets) is not list:
            return (), [{"dataset": datasets}]
        versions: list[tuple[TableRef, str | None]] = []
        keys: list[Any] = []
        namespace, tables = self.namespace, self._tables
        for dataset in datasets:
            if type(dataset) is not dict:
                keys.append({"dataset": dataset})
                continue
            name, space, facets = dataset.get("name"), dataset.get("namespace"), dataset.get("facets")
            if type(facets) is dict:
                keys.append([name, space, facets.get("schema")])
                if lineage is not None:
                    lineage.append(facets.get("columnLineage"))
                found = facets.get("version")
                version = found.get("datasetVersion") if type(found) is dict else None
            else:
                keys.append([name, space, facets])
                version = None
            if type(name) is not str or (namespace is not None and space != namespace):
                continue
            table = tables.get(name, _UNKNOWN)
            if table is _UNKNOWN:
                table = self._table(name)
            if table is not None:
                versions.append((table, version if type(version) is str else None))
        return tuple(versions), keys

    def _signature(self, raw: dict[str, Any], code: str | None, json_only: bool) -> tuple[Any, Versions, Versions]:
        """Return what a shape is keyed on, and the inputs' and the outputs' (table, snapshot).

        A shape is keyed on the SQL hash, the datasets' names, namespaces and schemas and the outputs' lineage facets.
        For an event parsed from JSON (`json_only`) the key is the orjson bytes of those parts: equal bytes are equal
        parts, and bytes compare at memory speed where a deep comparison walks hundreds of objects; else the parts
        themselves.
        """
        lineage: list[Any] = []
        inputs, keys_in = self._versions(raw.get("inputs"), None)
        outputs, keys_out = self._versions(raw.get("outputs"), lineage)
        if json_only:
            try:
                return orjson.dumps([code, keys_in, keys_out, lineage]), inputs, outputs
            except orjson.JSONEncodeError:  # nested past orjson's 255 levels: compared in full
                pass
        return (code, keys_in, keys_out, lineage), inputs, outputs

    def add(self, event: RunEvent) -> RunRecord | None:
        """Keep a COMPLETE event (one that still holds its `raw` JSON) as a run record and return it.

        Any other event is left out (None). Its lineage is built only when it differs from the job's earlier shapes (the
        SQL hash, the datasets' names and schemas and the lineage facets, compared in full or by their orjson bytes: a
        producer may state other lineage for the same statement, e.g. another deployment's catalog).
        """
        raw = event.raw
        if event.event_type != COMPLETE or raw is None:
            return None
        code = self._hash(sql_query(raw))
        signature, inputs, outputs = self._signature(raw, code, event.from_json)
        job = event.job_name
        shapes = self._shapes.get(job)
        if shapes is None:
            shapes = self._shapes[job] = []
        shape = None
        for known in shapes:
            if known.signature == signature:
                shape = known
                break
        if shape is None:
            shape = self._shape(event, signature)
            shapes.insert(0, shape)
            self._index(shape, job)
        record = RunRecord(event, shape, code, inputs, outputs)
        self._insert(job, record)
        writers, readers = self.writers, self.readers
        for key in outputs:
            if key[1] is not None:
                writers[key] = record  # type: ignore[index]
        for key in inputs:
            if key[1] is not None:
                readers[key].append(record)  # type: ignore[index]
        self.events += 1
        return record

    def _insert(self, job: str, record: RunRecord) -> None:
        event = record.event
        at = event.at.timestamp()
        times = self.times.get(job)
        if times is None:
            self.times[job] = array("d", (at,))
            self.runs[job] = [record]
            self._stretch(record.shape, at)
            return
        records = self.runs[job]
        if at > times[-1] or at == times[-1] and event.order >= records[-1].event.order:
            before = records[-1].shape
            times.append(at)
            records.append(record)
            if before is not record.shape:
                self.stretch_until[before.serial] = at
                self._stretch(record.shape, at)
        else:  # an event older than one read before it: kept in time order all the same
            index = bisect_right(records, event.order, key=_order)
            times.insert(index, at)
            records.insert(index, record)
            self._restretch(job)

    def _stretch(self, shape: Shape, at: float) -> None:
        """Start a stretch of the shape at `at`, open until another shape's run (its earlier one kept)."""
        serial = shape.serial
        if self.stretch_from[serial] != INF:
            self.earlier_stretches.setdefault(serial, []).append(
                (self.stretch_from[serial], self.stretch_until[serial])
            )
        self.stretch_from[serial], self.stretch_until[serial] = at, INF

    def _restretch(self, job: str) -> None:
        for shape in self._shapes.get(job, ()):
            self.stretch_from[shape.serial] = self.stretch_until[shape.serial] = INF
            self.earlier_stretches.pop(shape.serial, None)
        before: Shape | None = None
        for record, at in zip(self.runs[job], self.times[job], strict=True):
            if record.shape is not before:
                if before is not None:
                    self.stretch_until[before.serial] = at
                self._stretch(record.shape, at)
                before = record.shape

    def holds_at(self, serial: int, at: float | None) -> bool:
        """Return whether the observed shape of that serial is its job's run's at `at`.

        `at` is in POSIX seconds (None: the job's latest run's): the latest COMPLETE at or before that time stated it.
        """
        start, until = self.stretch_from[serial], self.stretch_until[serial]
        if at is None:
            return until == INF and start != INF
        if start <= at < until:
            return True
        return any(start <= at < until for start, until in self.earlier_stretches.get(serial, ()))

    def _shape(self, event: RunEvent, signature: Any) -> Shape:
        scratch = LineageGraph()
        added: list[Edge] = []
        scratch._add = added.append  # type: ignore[method-assign,assignment]  # every edge, in the event's order
        add_event(scratch, event, self.namespace)
        columns = {table: list(names) for table, names in scratch.table_columns.items()}
        names = {table: scratch.name_of(table) for table in columns}
        return self._numbered(
            Shape(signature, added, columns, names, list(scratch.outputs), scratch.wrong_parts, job=event.job_name)
        )

    def _numbered(self, shape: Shape) -> Shape:
        shape.serial = len(self.shapes)
        self.shapes.append(shape)
        self.stretch_from.append(INF)
        self.stretch_until.append(INF)
        return shape

    def _index(self, shape: Shape, job: str) -> None:
        self.nodes.add(shape)
        for table, names in shape.columns.items():
            known = self.columns[table]
            for name in names:
                if name not in known:
                    known[name] = ColumnRef(table, name)
        if shape.static is None:
            for table in shape.outputs:
                self.writers_of[table].add(job)

    def name_of(self, ref: Node) -> str:
        """Return the dotted name of the ref (its node's, made once)."""
        node = self.nodes.get(ref)
        return node.name if node is not None else str(ref)

    def add_static(
        self,
        job: str,
        edges: Iterable[Edge],
        source: EdgeSource,
        *,
        owner: str | None = None,
        reason: str | None = None,
        sql: str | None = None,
        columns: dict[TableRef, list[str]] | None = None,
        outputs: Iterable[TableRef] = (),
    ) -> RunRecord:
        """Add lineage that holds at every time and is not observed.

        A person's declaration (`declared`) or the DAG files' design (`designed`) of `job`; returns its record.
        `columns` names the tables' columns (the edges' ends are added), `outputs` the tables the job writes.
        """
        edges = [e._replace(job=job, run_id="", event_time="", source_kind=source) for e in edges]
        known: dict[TableRef, list[str]] = {t: list(c) for t, c in (columns or {}).items()}
        for edge in edges:
            for ref in (edge.source, edge.target):
                if isinstance(ref, ColumnRef):
                    fields = known.setdefault(ref.table, [])
                    if ref.field not in fields:
                        fields.append(ref.field)
                else:
                    known.setdefault(ref, [])
        shape = self._numbered(Shape(None, edges, known, {t: str(t) for t in known}, list(outputs), job=job))
        event = RunEvent(COMPLETE, "", "", "", job)
        record = RunRecord(event, shape, sql_hash(sql) if sql else None, source=source, owner=owner, reason=reason)
        shape.static = record
        self.static_sources[shape.serial] = source
        self.static.append(record)
        self._index(shape, job)
        return record

    def run_at(self, job: str, at: datetime | None) -> RunRecord | None:
        """Return the job's latest COMPLETE at or before `at` (None: the latest of all), or None when it had none."""
        records = self.runs.get(job)
        if not records:
            return None
        if at is None:
            return records[-1]
        index = bisect_right(self.times[job], at.timestamp())
        return records[index - 1] if index else None

    def selected(self, at: datetime | None) -> dict[str, RunRecord]:
        """Returns the latest COMPLETE of each job at or before `at` (None: now), jobs in the order first seen."""
        chosen = {}
        for job in self.runs:
            record = self.run_at(job, at)
            if record is not None:
                chosen[job] = record
        return chosen

    def first_seen(self) -> datetime | None:
        """Return the time of the earliest COMPLETE kept, or None when none is."""
        return min((records[0].event.at for records in self.runs.values()), default=None)


def _order(record: RunRecord) -> tuple[datetime, int, str, str]:
    return record.event.order


def add_events(history: LineageHistory, events: Iterable[RunEvent]) -> LineageHistory:
    """Return the history with every COMPLETE of `events` that still holds its raw JSON added."""
    for event in events:
        history.add(event)
    return history


def _merge(lineage: LineageGraph, record: RunRecord) -> None:
    shape = record.shape
    for table, columns in shape.columns.items():
        ref = lineage.table_ref(shape.names.get(table) or str(table)) or table
        for name in columns:
            lineage.column_ref(ref, name)
    if record.source is EdgeSource.OBSERVED:
        for table in shape.outputs:
            lineage.outputs[table] = record.job
    else:
        for table in shape.outputs:
            lineage.declared_outputs.setdefault(table, record.job)
    event = record.event
    run_id, time = event.run_id, event.event_time
    add = lineage._add
    for edge in shape.edges:
        add(
            Edge(edge.source, edge.target, edge.type, edge.subtype, edge.masking, edge.job, run_id, time, record.source)
        )
    lineage.wrong_parts += shape.wrong_parts


def graph_as_of(
    history: LineageHistory, at: datetime | None = None, *, sources: Iterable[EdgeSource] = (EdgeSource.OBSERVED,)
) -> LineageGraph:
    """Return the lineage graph as of `at` (None: now).

    The edges of each job's latest COMPLETE at or before it, each edge carrying that run's id and time, plus the
    declared and designed lineage when `sources` names them. `graph.runs` holds the run record of each job chosen (its
    evidence), `graph.outputs` only observed writers.
    """
    lineage = LineageGraph()
    lineage.history, lineage.at = history, at
    wanted = set(sources)
    if EdgeSource.OBSERVED in wanted:
        for job, record in history.selected(at).items():
            lineage.jobs[job] = record.event
            lineage.runs[job] = record
            _merge(lineage, record)
    for record in history.static:
        if record.source in wanted:
            lineage.runs.setdefault(record.job, record)
            _merge(lineage, record)
    return lineage
