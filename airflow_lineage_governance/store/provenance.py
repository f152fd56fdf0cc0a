"""Answer impact (downstream) and provenance (upstream) of a column from the store.

Each reached column comes with its evidence (`graph/answers.py` holds the answers' types).

The walk is breadth first, one level at a time: the edges holding at the time that leave (or enter) every column
of a level are one query, so only the edges the answer reaches are read. Each hop's evidence is the run of its
job as of the time (its try, time, snapshots and SQL hash), read once per job. Lineage that holds at every time
(a person's declarations) is passed in beside the store's, with its record.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import orjson

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.answers import Impact, Provenance
from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import COMPLETE, RunEvent
from airflow_lineage_governance.graph.evidence import Evidence
from airflow_lineage_governance.graph.reach import Paths, ReachedColumns, glances
from airflow_lineage_governance.graph.records import RunRecord, Shape
from airflow_lineage_governance.graph.walk import Walk
from airflow_lineage_governance.kinds import CONFIDENCE_RANK, EdgeSource, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.bodies import event_bodies
from airflow_lineage_governance.store.engine import FEW, Engine
from airflow_lineage_governance.store.ids import run_key
from airflow_lineage_governance.store.ingest import column_id, dataset_id, micros

Version = tuple[TableRef, str | None]

NOW = 2**63 - 1
"""The instant that stands for now: only the intervals still open hold at it."""
BATCH = 500
"""How many columns one query asks the edges of."""

_RUN = "SELECT c.run_id, c.at_us, c.event_time, c.try_number, c.sql_hash, j.namespace, j.name FROM completes c "
_HOLDS = "c.at_us <= ? AND (c.valid_until_us IS NULL OR c.valid_until_us > ?)"
_EDGE = (
    "SELECT h.source_column_id, h.target_id, h.into_table, h.type, h.subtype, h.masking, j.job_id, j.name, "
    "sd.name, sc.name, td.name, tc.name FROM column_edges h JOIN jobs j ON j.job_id = h.job_id "
    "JOIN dataset_columns sc ON sc.column_id = h.source_column_id JOIN datasets sd ON sd.dataset_id = sc.dataset_id "
    "LEFT JOIN dataset_columns tc ON NOT h.into_table AND tc.column_id = h.target_id "
    "JOIN datasets td ON td.dataset_id = CASE WHEN h.into_table THEN h.target_id ELSE tc.dataset_id END "
    "WHERE h.valid_from_us <= ? AND (h.valid_until_us IS NULL OR h.valid_until_us > ?)"
)


@dataclass(frozen=True)
class Static:
    """Lineage that holds at every time, not observed (a person's declaration of a job): its record and edges."""

    record: RunRecord
    edges: Sequence[Edge]


class StoreWalker:
    """Walks the store's lineage as of a time by ref, with the evidence of each hop.

    It is the walker `graph/reach.py` reads evidence from.

    Args:
        engine: The store's engine.
        at: The time answered as of (None: each job's latest COMPLETE).
        active_since: Edges whose run is older than this before `at` (or now) are stale.
        job_namespaces: The job namespaces walked (None: every one).
        static: Lineage that holds at every time, walked beside the store's.
        dataset_namespace: The namespace of the datasets whose snapshots a run's evidence names (None: every one).
    """

    def __init__(
        self,
        engine: Engine,
        at: datetime | None = None,
        active_since: timedelta | None = None,
        job_namespaces: Iterable[str] | None = None,
        static: Sequence[Static] = (),
        dataset_namespace: str | None = None,
    ) -> None:
        self.engine, self.at, self.dataset_namespace = engine, at, dataset_namespace
        self.instant = micros(at) if at is not None else NOW
        self.stale_before = (at or datetime.now(UTC)) - active_since if active_since is not None else None
        self.namespaces = sorted(job_namespaces) if job_namespaces is not None else None
        self.static = list(static)
        self._runs: dict[str, RunRecord | None] = {}
        self._versions: dict[tuple[str, int], tuple[list[Version], list[Version]]] = {}
        self._job_ids: dict[str, int] = {}
        self._columns: dict[TableRef, list[ColumnRef]] = {}
        self._written: dict[TableRef, RunRecord | None] = {}
        self._out: dict[ColumnRef | TableRef, list[Edge]] = defaultdict(list)
        self._in: dict[ColumnRef | TableRef, list[Edge]] = defaultdict(list)
        for block in self.static:
            for edge in block.edges:
                self._out[edge.source].append(edge)
                self._in[edge.target].append(edge)

    def _scope(self) -> tuple[str, list[object]]:
        if self.namespaces is None:
            return "", []
        marks = ", ".join("?" * len(self.namespaces))
        return f" AND j.namespace IN ({marks})", list(self.namespaces)

    def _edges(self, where: str, ids: list[int]) -> list[Edge]:
        found: list[Edge] = []
        scope, scoped = self._scope()
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            rows = self.engine.query(
                f"{_EDGE}{scope} AND {where} IN ({', '.join('?' * len(part))})",
                [self.instant, self.instant, *scoped, *part],
            )
            for _, _, into, kind, subtype, masking, job_id, job, source_table, source, table_name, target in rows:
                self._job_ids.setdefault(job, job_id)
                table = TableRef.parse(table_name)
                found.append(
                    Edge(
                        ColumnRef(TableRef.parse(source_table), source),
                        table if into else ColumnRef(table, target),
                        kind,
                        subtype,
                        bool(masking),
                        job,
                        "",
                        "",
                    )
                )
        return found

    def leaving(self, columns: Sequence[ColumnRef]) -> dict[ColumnRef, list[Edge]]:
        """Return the edges holding at the time that leave each column.

        Args:
            columns: The columns left.

        Returns:
            Each column's edges, by target, type, subtype and job (observed before declared).
        """
        found: dict[ColumnRef, list[Edge]] = defaultdict(list)
        for edge in self._edges("h.source_column_id", [column_id(c.table, c.field) for c in columns]):
            found[edge.source].append(edge)
        for column in columns:
            found[column].extend(self._out.get(column, ()))
            found[column].sort(key=lambda e: (str(e.target), e.type, e.subtype, e.source_kind != "observed", e.job))
        return found

    def entering(self, refs: Sequence[ColumnRef | TableRef]) -> dict[ColumnRef | TableRef, list[Edge]]:
        """Return the edges holding at the time that enter each column or table.

        Args:
            refs: The columns and tables entered.

        Returns:
            Each ref's edges, DIRECT first, then by source and subtype, each (source, target, type, subtype) once.
        """
        columns = [column_id(r.table, r.field) for r in refs if isinstance(r, ColumnRef)]
        tables = [dataset_id(r) for r in refs if isinstance(r, TableRef)]
        every: dict[ColumnRef | TableRef, list[Edge]] = defaultdict(list)
        for edge in self._edges("NOT h.into_table AND h.target_id", columns):
            every[edge.target].append(edge)
        for edge in self._edges("h.into_table AND h.target_id", tables):
            every[edge.target].append(edge)
        found: dict[ColumnRef | TableRef, list[Edge]] = {}
        for ref in refs:
            edges = every.get(ref, []) + list(self._in.get(ref, ()))
            edges.sort(key=lambda e: (e.type != EdgeType.DIRECT, str(e.source), e.subtype, e.source_kind != "observed"))
            kept, seen = [], set()
            for edge in edges:
                if edge[:4] not in seen:
                    seen.add(edge[:4])
                    kept.append(edge)
            found[ref] = kept
        return found

    def columns_in(self, table: TableRef) -> list[ColumnRef]:
        """Return the table's columns as its writer's run at the time names them.

        The writer is the first writing job by name. Without one, every column named for the table is returned
        (by name), then those only declarations name.

        Args:
            table: The table.

        Returns:
            The table's columns.
        """
        known = self._columns.get(table)
        if known is not None:
            return known
        scope, scoped = self._scope()
        writers = self.engine.query(
            "SELECT j.name, j.namespace, w.shape_id FROM table_writers w JOIN jobs j ON j.job_id = w.job_id WHERE "
            f"w.dataset_id = ? AND w.valid_from_us <= ? AND (w.valid_until_us IS NULL OR w.valid_until_us > ?){scope}",
            [dataset_id(table), self.instant, self.instant, *scoped],
        )
        if writers:
            shape = min(writers, key=lambda w: (w[0], w[1]))[2]
            names = [
                name
                for (name,) in self.engine.query(
                    "SELECT dc.name FROM shape_columns sc JOIN dataset_columns dc ON dc.column_id = sc.column_id "
                    "WHERE sc.shape_id = ? AND sc.dataset_id = ? ORDER BY sc.position",
                    [shape, dataset_id(table)],
                )
            ]
        else:
            names = [column.field for column in named_columns(self.engine, table)]
            for block in self.static:
                for column in _static_columns(block, table):
                    if column.field not in names:
                        names.append(column.field)
        found = self._columns[table] = [ColumnRef(table, name) for name in names]
        return found

    def look_up(self, tables: Iterable[TableRef] = (), jobs: Iterable[str] = ()) -> None:
        """Read the columns and last write of many tables, and the runs of many jobs, a few queries for all of them.

        What `columns_in`, `last_write` and `run_of` answer one key at a time, each a pass over its table when DuckDB
        cannot look the key up by index: a walk that reaches thousands of tables asks them all at once, level by
        level. No more than `FEW` keys not yet known are left to those methods.

        Args:
            tables: Tables whose columns and last write are about to be asked for.
            jobs: Jobs whose run at the time is about to be asked for.
        """
        unknown = [t for t in dict.fromkeys(tables) if t not in self._columns]
        if len(unknown) > FEW:
            self._look_up_columns(unknown)
        unwritten = [t for t in dict.fromkeys(tables) if t not in self._written]
        written = self._look_up_last_writes(unwritten) if len(unwritten) > FEW else None
        unrun = [j for j in dict.fromkeys(jobs) if j not in self._runs and j in self._job_ids]
        run = self._look_up_runs(unrun) if len(unrun) > FEW else None
        records = self._records([*(written or {}).values(), *(run or {}).values()])
        if written is not None:
            for table in unwritten:
                row = written.get(table)
                self._written[table] = records[_key(row)] if row is not None else None
        if run is not None:
            for job in unrun:
                row = run.get(job)
                self._runs[job] = records[_key(row)] if row is not None else None

    def _look_up_columns(self, tables: list[TableRef]) -> None:
        scope, scoped = self._scope()
        by_id = {dataset_id(table): table for table in tables}
        ids = list(by_id)
        writer: dict[TableRef, tuple[str, str, int]] = {}
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            for table_id, name, namespace, shape in self.engine.query(
                "SELECT w.dataset_id, j.name, j.namespace, w.shape_id FROM table_writers w JOIN jobs j ON j.job_id = "
                f"w.job_id WHERE w.valid_from_us <= ? AND (w.valid_until_us IS NULL OR w.valid_until_us > ?){scope} "
                f"AND w.dataset_id IN ({', '.join('?' * len(part))})",
                [self.instant, self.instant, *scoped, *part],
            ):
                table = by_id[table_id]
                if table not in writer or (name, namespace) < writer[table][:2]:
                    writer[table] = (name, namespace, shape)
        wanted = {(shape, dataset_id(table)): table for table, (_, _, shape) in writer.items()}
        names: dict[TableRef, list[str]] = {table: [] for table in writer}
        shapes = sorted({shape for shape, _ in wanted})
        for start in range(0, len(shapes), BATCH):
            part = shapes[start : start + BATCH]
            for shape, table_id, name in self.engine.query(
                "SELECT sc.shape_id, sc.dataset_id, dc.name FROM shape_columns sc JOIN dataset_columns dc ON "
                f"dc.column_id = sc.column_id WHERE sc.shape_id IN ({', '.join('?' * len(part))}) "
                "ORDER BY sc.shape_id, sc.dataset_id, sc.position",
                part,
            ):
                owner = wanted.get((shape, table_id))
                if owner is not None:
                    names[owner].append(name)
        for table, found in names.items():
            self._columns[table] = [ColumnRef(table, name) for name in found]

    def _look_up_last_writes(self, tables: list[TableRef]) -> dict[TableRef, Sequence[object]]:
        """Return, by table, the `_RUN` row of its latest writing COMPLETE at the time (a table none wrote left out)."""
        scope, scoped = self._scope()
        latest = self._latest_runs(
            "so.dataset_id",
            "JOIN shape_outputs so ON so.shape_id = c.shape_id ",
            scope,
            scoped,
            map(dataset_id, tables),
        )
        return {table: latest[dataset_id(table)] for table in tables if dataset_id(table) in latest}

    def _look_up_runs(self, jobs: list[str]) -> dict[str, Sequence[object]]:
        """Return, by job, the `_RUN` row of its latest COMPLETE at the time (a job with none left out)."""
        latest = self._latest_runs("c.job_id", "", "", [], (self._job_ids[job] for job in jobs))
        return {job: latest[self._job_ids[job]] for job in jobs if self._job_ids[job] in latest}

    def _latest_runs(
        self, key: str, joins: str, scope: str, scoped: list[object], ids: Iterable[int]
    ) -> dict[int, Sequence[object]]:
        """Return, by each of `ids` (the `key` column's values), the `_RUN` row of its latest COMPLETE at the time."""
        wanted = list(dict.fromkeys(ids))
        latest: dict[int, Sequence[object]] = {}
        for start in range(0, len(wanted), BATCH):
            part = wanted[start : start + BATCH]
            for found, *row in self.engine.query(
                f"SELECT {key}, {_RUN.removeprefix('SELECT ')}{joins}JOIN jobs j ON j.job_id = c.job_id "
                f"WHERE {_HOLDS}{scope} AND {key} IN ({', '.join('?' * len(part))})",
                [self.instant, self.instant, *scoped, *part],
            ):
                if found not in latest or _later(row, latest[found]):
                    latest[found] = row
        return latest

    def knows(self, column: ColumnRef) -> bool:
        """Returns True when an event in the store, or a declaration, names the column."""
        if any(column in _static_columns(block, column.table) for block in self.static):
            return True
        return bool(
            self.engine.query(
                "SELECT 1 FROM dataset_columns WHERE column_id = ?", [column_id(column.table, column.field)]
            )
        )

    def run_of(self, job: str) -> RunRecord | None:
        """Return the record of the job's latest COMPLETE at or before the time, or None."""
        if job in self._runs:
            return self._runs[job]
        job_id = self._job_ids.get(job)
        rows = (
            self.engine.query(
                f"{_RUN}JOIN jobs j ON j.job_id = c.job_id WHERE c.job_id = ? AND {_HOLDS}",
                [job_id, self.instant, self.instant],
            )
            if job_id is not None
            else []
        )
        found = self._runs[job] = self._record(max(rows, key=lambda r: (r[1], r[0]))) if rows else None
        return found

    def _record(self, row: Sequence[object]) -> RunRecord:
        return self._records([row])[_key(row)]

    def _records(self, rows: Iterable[Sequence[object]]) -> dict[tuple[str, int], RunRecord]:
        """Return, by run id and instant, the record of each `_RUN` row, the JSON of all their events read at once."""
        by_key = {_key(row): row for row in rows}
        self._read_versions([key for key in by_key if key not in self._versions])
        return {key: self._built(row) for key, row in by_key.items()}

    def _built(self, row: Sequence[object]) -> RunRecord:
        run_id, at_us, event_time, try_number, sql, namespace, job = row
        assert isinstance(run_id, str) and isinstance(at_us, int)
        inputs, outputs = self._versions[(run_id, at_us)]
        event = RunEvent(
            COMPLETE,
            str(event_time),
            run_id,
            str(namespace),
            str(job),
            datetime.fromtimestamp(at_us // 1_000_000, UTC).replace(microsecond=at_us % 1_000_000),
            try_number=try_number if isinstance(try_number, int) else None,
        )
        return RunRecord(event, Shape([], []), sql if isinstance(sql, str) else None, (*inputs,), (*outputs,))

    def _read_versions(self, keys: Sequence[tuple[str, int]]) -> None:
        """Read the snapshot of each input and output each COMPLETE names, of the dataset namespace kept.

        They are in the event's order (from its JSON as first received), or from the derived rows, by name, when
        its JSON is not kept.
        """
        bodies = event_bodies(self.engine, COMPLETE, keys)
        for run_id, at_us in keys:
            body = bodies.get((run_id, at_us))
            raw = orjson.loads(body) if body is not None else None
            if type(raw) is not dict:
                found: tuple[list[Version], list[Version]] = ([], [])
                for role, name, snapshot in self.engine.query(
                    "SELECT rd.role, d.name, rd.snapshot FROM run_datasets rd JOIN datasets d ON d.dataset_id = "
                    f"rd.dataset_id WHERE rd.run_key = ? AND rd.at_us = ? ORDER BY d.name{self.engine.text_order}",
                    [run_key(run_id), at_us],
                ):
                    found[0 if role == "input" else 1].append((TableRef.parse(name), snapshot))
                self._versions[(run_id, at_us)] = found
                continue
            self._versions[(run_id, at_us)] = (
                _named_versions(raw.get("inputs"), self.dataset_namespace),
                _named_versions(raw.get("outputs"), self.dataset_namespace),
            )

    def record_of(self, edge: Edge) -> RunRecord | None:
        """Return the record that states the edge at the time."""
        if edge.source_kind is not EdgeSource.OBSERVED:
            return next(
                (s.record for s in self.static if s.record.job == edge.job and s.record.source is edge.source_kind),
                None,
            )
        return self.run_of(edge.job)

    def evidence(self, edge: Edge) -> Evidence:
        """Return the edge's evidence at the time: the record that states it and whether it is stale."""
        record = self.record_of(edge)
        stale = (
            record is not None
            and record.source is EdgeSource.OBSERVED
            and self.stale_before is not None
            and record.event.at < self.stale_before
        )
        return Evidence(edge, record, stale)

    def mark(self, edge: Edge) -> int:
        """Return the edge's glance: its confidence's rank twice, plus 1 when it is stale (`reach.mark`)."""
        evidence = self.evidence(edge)
        return CONFIDENCE_RANK[evidence.confidence] * 2 + evidence.stale

    def last_write(self, table: TableRef) -> RunRecord | None:
        """Return the latest observed run at or before the time that wrote the table."""
        if table in self._written:
            return self._written[table]
        scope, scoped = self._scope()
        rows = self.engine.query(
            f"{_RUN}JOIN shape_outputs so ON so.shape_id = c.shape_id JOIN jobs j ON j.job_id = c.job_id "
            f"WHERE so.dataset_id = ? AND {_HOLDS}{scope}",
            [dataset_id(table), self.instant, self.instant, *scoped],
        )
        found = self._written[table] = self._record(max(rows, key=lambda r: (r[1], r[0]))) if rows else None
        return found

    def retired_from(self, column: ColumnRef) -> list[Evidence]:
        """Return the edges leaving the column that only earlier runs of their job stated.

        Edges its run at the time states are not retired. A job with no run yet retired nothing.

        Args:
            column: The column left.

        Returns:
            Each retired edge with the last run that stated it; always stale.
        """
        scope, scoped = self._scope()
        rows = self.engine.query(
            "SELECT h.job_id, j.name, h.type, h.subtype, h.masking, h.into_table, td.name, tc.name, h.last_run_id, "
            "h.last_at_us FROM column_edges h JOIN jobs j ON j.job_id = h.job_id "
            "LEFT JOIN dataset_columns tc ON NOT h.into_table AND tc.column_id = h.target_id "
            "JOIN datasets td ON td.dataset_id = CASE WHEN h.into_table THEN h.target_id ELSE tc.dataset_id END "
            "WHERE h.source_column_id = ? AND h.valid_until_us IS NOT NULL AND h.valid_until_us <= ? "
            "AND EXISTS (SELECT 1 FROM completes c WHERE c.job_id = h.job_id AND c.at_us <= ?) "
            "AND NOT EXISTS (SELECT 1 FROM column_edges o WHERE o.job_id = h.job_id AND o.source_column_id = "
            "h.source_column_id AND o.target_id = h.target_id AND o.type = h.type AND o.subtype = h.subtype AND "
            f"o.valid_from_us <= ? AND (o.valid_until_us IS NULL OR o.valid_until_us > ?)){scope}",
            [column_id(column.table, column.field), self.instant, self.instant, self.instant, self.instant, *scoped],
        )
        latest: dict[tuple[str, str, str, str], tuple[int, Edge, str]] = {}
        for job_id, job, kind, subtype, masking, into, table_name, target_name, run_id, at_us in rows:
            self._job_ids.setdefault(job, job_id)
            table = TableRef.parse(table_name)
            target = table if into else ColumnRef(table, target_name)
            edge = Edge(column, target, kind, subtype, bool(masking), job, run_id, "")
            key = (str(target), kind, subtype, job)
            if key not in latest or (at_us, run_id) > latest[key][0:1] + (latest[key][2],):
                latest[key] = (at_us, edge, run_id)
        wanted = {(run_id, at_us) for at_us, _, run_id in latest.values()}
        runs = sorted({run_key(run_id) for run_id, _ in wanted})
        stated: dict[tuple[str, int], Sequence[object]] = {}
        for start in range(0, len(runs), BATCH):
            part = runs[start : start + BATCH]
            for row in self.engine.query(  # by the runs' keys, each row then kept by its run's id
                f"{_RUN}JOIN jobs j ON j.job_id = c.job_id WHERE c.run_key IN ({', '.join('?' * len(part))})", part
            ):
                if _key(row) in wanted:
                    stated.setdefault(_key(row), row)
        records = self._records(stated.values())
        return [
            Evidence(edge._replace(run_id=""), records.get((run_id, at_us)), True)
            for at_us, edge, run_id in (latest[key] for key in sorted(latest))
        ]

    def table(self, node: ColumnRef) -> TableRef:
        """Return the column's table."""
        return node.table

    def node_of(self, ref: object) -> ColumnRef | None:
        """Return the node of a column: the ref itself."""
        return ref if isinstance(ref, ColumnRef) else None


def _key(row: Sequence[object]) -> tuple[str, int]:
    """Return a `_RUN` row's run id and instant: its COMPLETE's key."""
    run_id, at_us = row[0], row[1]
    assert isinstance(run_id, str) and isinstance(at_us, int)
    return run_id, at_us


def _later(row: Sequence[object], than: Sequence[object]) -> bool:
    """Return whether a `_RUN` row is later than another: by instant, then run id (as `max` picks them)."""
    return (row[1], row[0]) > (than[1], than[0])


def _named_versions(datasets: object, namespace: str | None) -> list[Version]:
    found: list[Version] = []
    for dataset in datasets if type(datasets) is list else ():
        if type(dataset) is not dict:
            continue
        name, facets = dataset.get("name"), dataset.get("facets")
        if type(name) is not str or (namespace is not None and dataset.get("namespace") != namespace):
            continue
        try:
            table = TableRef.parse(name)
        except InvalidNameError:
            continue
        version = facets.get("version") if type(facets) is dict else None
        snapshot = version.get("datasetVersion") if type(version) is dict else None
        found.append((table, snapshot if type(snapshot) is str else None))
    return found


def named_columns(engine: Engine, table: TableRef) -> list[ColumnRef]:
    """Return every column an event in the store names for the table, by name."""
    return [
        ColumnRef(table, name)
        for (name,) in engine.query(
            f"SELECT name FROM dataset_columns WHERE dataset_id = ? ORDER BY name{engine.text_order}",
            [dataset_id(table)],
        )
    ]


def _static_columns(block: Static, table: TableRef) -> list[ColumnRef]:
    found: list[ColumnRef] = []
    for edge in block.edges:
        for ref in (edge.source, edge.target):
            if isinstance(ref, ColumnRef) and ref.table == table and ref not in found:
                found.append(ref)
    return found


def _walk_down(walker: StoreWalker, start: ColumnRef) -> tuple[Walk[ColumnRef], dict[TableRef, None], set[ColumnRef]]:
    parent: dict[ColumnRef, ColumnRef] = {}
    edge_in: dict[ColumnRef, Edge] = {}
    rows: dict[TableRef, None] = {}
    direct: dict[ColumnRef, list[ColumnRef]] = defaultdict(list)
    cycle: tuple[ColumnRef, Edge] | None = None
    level = [start]
    while level:
        out = walker.leaving(level)
        walker.look_up(
            tables=[edge.target for edges in out.values() for edge in edges if isinstance(edge.target, TableRef)]
        )
        following: list[ColumnRef] = []
        for node in level:
            for edge in out.get(node, ()):
                target = edge.target
                if isinstance(target, TableRef):
                    rows[target] = None
                    reached = walker.columns_in(target)
                else:
                    reached = [target]
                    if edge.type == EdgeType.DIRECT:
                        direct[node].append(target)
                for column in reached:
                    if column == start:
                        if cycle is None:
                            cycle = (node, edge)
                    elif column not in parent:
                        parent[column], edge_in[column] = node, edge
                        following.append(column)
        level = following
    if cycle is not None:
        parent[start], edge_in[start] = cycle
    values: set[ColumnRef] = set()
    stack = [start]
    while stack:
        for target in direct.get(stack.pop(), ()):
            if target not in values:
                values.add(target)
                if target != start:
                    stack.append(target)
    return Walk(start, parent, edge_in), rows, values


def _walk_up(walker: StoreWalker, start: ColumnRef) -> Walk[ColumnRef]:
    parent: dict[ColumnRef, ColumnRef] = {}
    edge_in: dict[ColumnRef, Edge] = {}
    cycle: tuple[ColumnRef, Edge] | None = None
    level = [start]
    while level:
        into = walker.entering([ref for node in level for ref in (node, node.table)])
        following: list[ColumnRef] = []
        for node in level:
            for edge in (*into.get(node, ()), *into.get(node.table, ())):
                source = edge.source
                if source == start:
                    if cycle is None:
                        cycle = (node, edge)
                elif source not in parent:
                    parent[source], edge_in[source] = node, edge
                    following.append(source)
        level = following
    if cycle is not None:
        parent[start], edge_in[start] = cycle
    return Walk(start, parent, edge_in)


def _look_up_evidence(walker: StoreWalker, found: Walk[ColumnRef]) -> None:
    """Read at once the runs and last writes the evidence of every column the walk reached will ask for."""
    jobs = [edge.job for edge in found.edge_in.values() if edge.source_kind is EdgeSource.OBSERVED]
    walker.look_up(tables=[column.table for column in found.parent], jobs=jobs)


def _check_known(walker: StoreWalker, column: ColumnRef) -> None:
    if not walker.knows(column):
        raise ColumnNotInLineageError(column, "check the name, or that the jobs reading it sent their events")


def impact(
    walker: StoreWalker,
    column: ColumnRef,
    owners: Mapping[TableRef, str | None] | None = None,
    weight: Callable[[TableRef], float] | None = None,
) -> Impact:
    """Return what a change to the column reaches, with each reached column's path and evidence.

    Args:
        walker: The store as of the time asked.
        column: The column changed.
        owners: Each table's owner.
        weight: Each table's blast-radius weight (None: 1 per column reached).

    Returns:
        The columns whose values can change, the tables whose rows can change, every column reached with its path
        and evidence, the owners of the tables reached, the score, and the column's retired edges.

    Raises:
        ColumnNotInLineageError: Neither an event in the store nor a declaration names the column.
    """
    _check_known(walker, column)
    found, rows, through = _walk_down(walker, column)
    _look_up_evidence(walker, found)
    order = sorted(found.parent, key=str)
    reached = ReachedColumns(walker, found, list(order), glances(walker, found))
    per_table = Counter(c.table for c in order)
    tables = sorted(per_table.keys() | rows.keys(), key=str)
    score = float(len(order)) if weight is None else sum(weight(t) * n for t, n in per_table.items())
    known_owners = owners or {}
    return Impact(
        column,
        sorted(through, key=str),
        sorted(rows, key=str),
        list(order),
        Paths(reached),
        {t: known_owners.get(t) for t in tables},
        score,
        reached,
        walker.retired_from(column),
        column in found.parent,
        walker.at.isoformat() if walker.at is not None else None,
    )


def provenance(walker: StoreWalker, column: ColumnRef) -> Provenance:
    """Return every column the column depends on, with each one's path and evidence.

    Args:
        walker: The store as of the time asked.
        column: The column asked about.

    Returns:
        The sources, each with the path (source first) that reaches it and its evidence.

    Raises:
        ColumnNotInLineageError: Neither an event in the store nor a declaration names the column.
    """
    _check_known(walker, column)
    found = _walk_up(walker, column)
    _look_up_evidence(walker, found)
    columns = sorted(found.parent, key=str)
    reached = ReachedColumns(walker, found, list(columns), glances(walker, found), source_first=True)
    return Provenance(
        column,
        list(columns),
        Paths(reached),
        reached,
        column in found.parent,
        walker.at.isoformat() if walker.at is not None else None,
    )
