"""The questions asked of the store, answered in the database.

Which edges held at a time (`edges_as_of`), and what a change to a column reaches downstream (`impact`, walked one
level at a time).

A time is an instant in microseconds since the epoch, or None for now (each job's latest COMPLETE). A job's
run at a time is its latest COMPLETE at or before it, and an edge holds when
that run stated it; an edge into a table (the rows it shapes) reaches each column the table's writer's run at
that time names for it (the first writing job by name), else every column ever named for the table.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import product, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast
from weakref import WeakKeyDictionary

from airflow_lineage_governance.graph.events import paused_collection
from airflow_lineage_governance.kinds import EdgeType, Subtype
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine, Row, by_key
from airflow_lineage_governance.store.errors import ColumnNotInStoreError, StoreError
from airflow_lineage_governance.store.ingest import column_id, dataset_id
from airflow_lineage_governance.store.node_refs import Nodes, node_places, places_table

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from airflow_lineage_governance.store.duckdb_engine import DuckDBEngine

T = TypeVar("T")

NOW = 2**63 - 1
"""The instant that stands for now: only the intervals still open hold at it."""


class StoredEdge(NamedTuple):
    """An edge that held at a time: its ends, type, subtype and masking, its job, and the run that stated it."""

    source: ColumnRef
    target: ColumnRef | TableRef
    type: str
    subtype: str
    masking: bool
    job_namespace: str
    job: str
    run_id: str
    event_time: str


@dataclass
class StoreImpact:
    """What a change to one column reaches at a time.

    Every column (through any edge; the column itself only on a cycle), the columns whose values can change (DIRECT
    column edges only) and the tables whose rows can change (an edge into the table), each sorted by name.
    """

    column: ColumnRef
    columns_reached: list[ColumnRef] = field(default_factory=list)
    values: list[ColumnRef] = field(default_factory=list)
    rows: list[TableRef] = field(default_factory=list)
    at_us: int | None = None

    @property
    def reaches_itself(self) -> bool:
        """Return True when a cycle leads back to the column."""
        return self.column in self.columns_reached

    def to_dict(self) -> dict[str, object]:
        """Return the answer as plain data (every ref as its dotted name)."""
        return {
            "column": str(self.column),
            "columns_reached": [str(c) for c in self.columns_reached],
            "values": [str(c) for c in self.values],
            "rows": [str(t) for t in self.rows],
            "reaches_itself": self.reaches_itself,
            "at_us": self.at_us,
        }


def _holding(at: int) -> tuple[str, list[int]]:
    """Return the CTE of the edges holding at `at`, and its parameters."""
    sql = (
        "holding AS (SELECT job_id, source_column_id, target_id, into_table, type, subtype, masking FROM "
        "column_edges WHERE valid_from_us <= ? AND (valid_until_us IS NULL OR valid_until_us > ?))"
    )
    return sql, [at, at]


def edges_as_of(engine: Engine, at: int | None = None, into: TableRef | None = None) -> list[StoredEdge]:
    """Return every edge that held at `at` (None: now), or every one into the table `into`, with the run that stated it.

    Every edge is read in its order as the places of its ends, kind and job, named from the refs the engine keeps
    (`node_places`); the edges into one table are looked up by key.

    Args:
        engine: The store's engine.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.
        into: A table: only the edges into it (its rows, or one of its columns); None for every edge.

    Returns:
        The edges, sorted by source, target, type, subtype and job.
    """
    instant = NOW if at is None else at
    if into is not None:
        return _edges_into(engine, instant, into)
    with paused_collection():  # about 90,000 edges at 1,000,000 events: the collector would rescan them as they grow
        return _every_edge(engine, instant)


def _every_edge(engine: Engine, instant: int) -> list[StoredEdge]:
    """Return every edge holding at the instant, sorted (`edges_as_of`).

    Each edge is placed by four numbers: its ends' places among the store's nodes (`node_places`), its kind's among
    the kinds of edge (`_kinds`) and its job's among the jobs by name, whose runs are read first; the places sort as
    the names do, and index the refs, kinds and runs kept. DuckDB joins the places in its query and sorts
    (`_placed_in_the_database`); PostgreSQL hands over ids, which Python places and sorts in arrays
    (`_placed_in_arrays`). Read again when an edge names a node, a kind or a job the lists lack (the store gained it
    between the queries, or its kind is not one OpenLineage names).
    """
    holding, params = _holding(instant)
    placed = _placed_in_arrays if engine.dialect == "postgres" else _placed_in_the_database
    for attempt in range(ATTEMPTS):
        kinds = _kinds(engine, again=attempt > 0)
        nodes = node_places(engine, again=attempt > 0)
        jobs = _jobs(engine, again=attempt > 0)
        runs = _runs(engine, instant, jobs)  # PostgreSQL reads them while it reads the edges
        kinds_listed = [*([kind[part] for kind in kinds] for part in range(3)), list(range(len(kinds)))]
        places = placed(engine, holding, [*params, *kinds_listed], nodes, jobs.ids)
        held = runs()
        if places is not None and held is not None:
            return _edges_at(*places, nodes.refs, kinds, held)
    raise StoreError(f"the lineage store gained columns or edges each of the {ATTEMPTS} times it was read; ask again")


def _edges_at(
    ends: npt.NDArray[np.int64],
    kind_jobs: npt.NDArray[np.int64],
    refs: list[ColumnRef | TableRef],
    kinds: list[Row],
    runs: list[tuple[str, str, str, str] | None],
) -> list[StoredEdge]:
    """Return the edges placed by their ends' places and their kind's and job's, two to a number (`PLACE_BITS`).

    Each field is taken for every edge at once (`_taken`), then the fields are zipped into edges. An edge of a job
    with no run at the time is left out.
    """
    import numpy as np  # the places come as arrays: every edge as of a time is the one question that reads them

    if not len(ends):
        return []
    low = (1 << PLACE_BITS) - 1
    job_places = kind_jobs & low
    if None in runs:
        held = np.array([run is not None for run in runs], dtype=bool)[job_places]
        ends, kind_jobs, job_places = ends[held], kind_jobs[held], job_places[held]
    kind_places, job_listed = (kind_jobs >> PLACE_BITS).tolist(), job_places.tolist()
    fields = [
        _taken((ends >> PLACE_BITS).tolist(), refs),
        _taken((ends & low).tolist(), refs),
        *(_taken(kind_places, part) for part in zip(*kinds, strict=True)),
        *(_taken(job_listed, part) for part in zip(*(run or (None,) * 4 for run in runs), strict=True)),
    ]
    return list(map(tuple.__new__, repeat(StoredEdge), zip(*fields, strict=True)))


def _taken(places: list[int], values: Sequence[T]) -> tuple[T, ...]:
    """Return the value at each place, in order (`itemgetter`, which returns a lone value for one place)."""
    if len(places) == 1:
        return (values[places[0]],)
    return cast("tuple[T, ...]", itemgetter(*places)(values)) if places else ()


KINDS = (
    "kinds AS (SELECT unnest(CAST(? AS TEXT[])) AS type, unnest(CAST(? AS TEXT[])) AS subtype, unnest(CAST(? AS "
    "BOOLEAN[])) AS masking, unnest(CAST(? AS BIGINT[])) AS kind)"
)
"""The kinds of edge handed to a query as arrays of their types, subtypes, masking and places."""


def _placed_in_the_database(
    engine: Engine, holding: str, params: list[Any], nodes: Nodes, jobs: list[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Return each edge's places, two to a number (`PLACE_BITS`), joined and sorted by the database (DuckDB).

    The nodes' places are a temporary table (`places_table`), the jobs' ids are handed to the query in their order
    (`unnest … WITH ORDINALITY`). None when an edge's end, kind or job is not among them (its place is NULL).
    """
    places = places_table(cast("DuckDBEngine", engine), nodes)
    sql = (
        f"WITH {holding}, {KINDS}, job_places AS (SELECT job_id, place - 1 AS place FROM unnest(CAST(? AS BIGINT[])) "
        f"WITH ORDINALITY AS j(job_id, place)) SELECT COALESCE(s.place * {1 << PLACE_BITS} + t.place, -1) AS ends, "
        f"COALESCE(k.kind * {1 << PLACE_BITS} + j.place, -1) AS kind_job FROM holding h "
        "LEFT JOIN kinds k ON k.type = h.type AND k.subtype = h.subtype AND k.masking = h.masking "
        f"LEFT JOIN {places} s ON s.node = h.source_column_id "
        f"LEFT JOIN {places} t ON t.node = CASE WHEN h.into_table THEN -h.target_id ELSE h.target_id END "
        "LEFT JOIN job_places j ON j.job_id = h.job_id "
        "ORDER BY ends, kind_job"
    )
    ends, kind_jobs = engine.integer_columns(sql, [*params, jobs], 2)
    if len(ends) and (ends[0] < 0 or kind_jobs.min() < 0):  # sorted by `ends`: a NULL end's -1 comes first
        return None
    return ends, kind_jobs


def _placed_in_arrays(
    engine: Engine, holding: str, params: list[Any], nodes: Nodes, jobs: list[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Return each edge's places, two to a number (`PLACE_BITS`), worked out and sorted in arrays (PostgreSQL).

    The database hands over each edge as four numbers, as arrays (`Engine.integer_columns`): its source's id, its
    target's (a table's negated), its kind's place (-1: not among the kinds) and its job's id. Each id is looked up
    among the nodes' and the jobs' ids, sorted once (`_node_ids`). None when an edge's end, kind or job is not among
    them.
    """
    sql = (
        f"WITH {holding}, {KINDS} SELECT h.source_column_id AS source, CASE WHEN h.into_table THEN -h.target_id ELSE "
        "h.target_id END AS target, COALESCE(k.kind, -1) AS kind, h.job_id AS job FROM holding h LEFT JOIN kinds k "
        "ON k.type = h.type AND k.subtype = h.subtype AND k.masking = h.masking"
    )
    sources, targets, kind_places, job_ids = engine.integer_columns(sql, params, 4)
    if not len(sources):
        return sources, sources
    node_ids = _node_ids(engine, nodes)
    source_places, target_places = _places(node_ids, sources), _places(node_ids, targets)
    job_places = _places(_sorted_ids(jobs), job_ids)
    if source_places is None or target_places is None or job_places is None or (kind_places < 0).any():
        return None
    ends = (source_places << PLACE_BITS) | target_places
    kind_jobs = (kind_places << PLACE_BITS) | job_places
    columns = [source_places, target_places, kind_places, job_places]
    order = _sorting_order(columns, [len(node_ids.ids), len(node_ids.ids), int(kind_places.max()) + 1, len(jobs)])
    return ends[order], kind_jobs[order]


def _sorting_order(columns: list[npt.NDArray[np.int64]], counts: list[int]) -> npt.NDArray[np.int64]:
    """Return the order that sorts the rows by their columns, the first first; each column's places are below its count.

    The places are made one number a row when they fit in `ONE_NUMBER_BITS`, sorted as numbers (for 92,000 rows about
    1 ms, where numpy's sort by keys, `lexsort`, took 8); else sorted by keys.
    """
    import numpy as np

    widths = [max(count - 1, 1).bit_length() for count in counts]
    if sum(widths) > ONE_NUMBER_BITS:
        return np.lexsort(columns[::-1])
    key = columns[0].copy()
    for column, width in zip(columns[1:], widths[1:], strict=True):
        key <<= width
        key |= column
    order: npt.NDArray[np.int64] = key.argsort()
    return order


ONE_NUMBER_BITS = 63
"""The most bits a row's places may take together to be sorted as one number (`_sorting_order`)."""


class SortedIds(NamedTuple):
    """Ids sorted (`ids`), and the place of each in the list they were sorted from (`places`)."""

    ids: npt.NDArray[np.int64]
    places: npt.NDArray[np.int64]


_NODE_IDS: WeakKeyDictionary[Engine, tuple[Nodes, SortedIds]] = WeakKeyDictionary()


def _node_ids(engine: Engine, nodes: Nodes) -> SortedIds:
    """Return the ids of the nodes kept, sorted (`_sorted_ids`): worked out again only when the nodes are read again."""
    kept = _NODE_IDS.get(engine)
    if kept is None or kept[0] is not nodes:
        kept = _NODE_IDS[engine] = (nodes, _sorted_ids(nodes.ids))
    return kept[1]


def _sorted_ids(ids: list[int]) -> SortedIds:
    """Return the ids sorted, with the place of each in `ids`."""
    import numpy as np

    listed = np.array(ids, dtype=np.int64)
    places = np.argsort(listed, kind="stable")
    return SortedIds(listed[places], places)


def _places(sorted_ids: SortedIds, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
    """Return the place of each of `ids` in the list `sorted_ids` was sorted from; None if one is not in it.

    The ids are sorted first and searched for in that order: each search starts where the one before ended, reading
    memory in order (for 92,000 ids among 60,000, 4.4 ms against 9.8 searched in their own order).
    """
    import numpy as np

    if not len(sorted_ids.ids):
        return None
    order = ids.argsort()
    wanted = ids[order]
    found = sorted_ids.ids.searchsorted(wanted).clip(0, len(sorted_ids.ids) - 1)
    if (sorted_ids.ids[found] != wanted).any():
        return None
    places: npt.NDArray[np.int64] = np.empty_like(found)
    places[order] = sorted_ids.places[found]
    return places


def holding_join(engine: Engine, columns: str) -> str:
    """Return the join of each job (`j`) to its COMPLETE (`c`) that holds at an instant, given twice as parameters.

    A COMPLETE holds from its instant until the job's next (`valid_until_us`). On PostgreSQL only one of the job's
    COMPLETEs at its latest instant up to the time can hold: found by one descent of `completes_by_job` (those at
    that instant, `WITH TIES`), not a scan of every COMPLETE, whose count the planner cannot guess.

    Args:
        engine: The store's engine.
        columns: The columns of `c` the query reads (qualified by `c.`).

    Returns:
        A `JOIN` clause, with two `?` (the instant, twice).
    """
    if engine.dialect == "postgres":
        return (
            f"JOIN LATERAL (SELECT {columns}, c.valid_until_us FROM completes c WHERE c.job_id = j.job_id AND c.at_us "
            "<= ? ORDER BY c.at_us DESC FETCH FIRST 1 ROWS WITH TIES) AS c ON c.valid_until_us IS NULL OR "
            "c.valid_until_us > ?"
        )
    return (
        "JOIN completes c ON c.job_id = j.job_id AND c.at_us <= ? AND (c.valid_until_us IS NULL OR c.valid_until_us > "
        "?)"
    )


def _runs(engine: Engine, instant: int, jobs: Jobs) -> Callable[[], list[tuple[str, str, str, str] | None] | None]:
    """Start reading each job's run at the instant; return a function that waits for them.

    On DuckDB the COMPLETEs holding at the instant are read by one scan; on PostgreSQL each job's by one descent of
    `completes_by_job` (`holding_join`), on the engine's second connection, where the runs are placed too
    (`Engine.start_query`).

    Args:
        engine: The store's engine.
        instant: The instant.
        jobs: The store's jobs by name (`_jobs`).

    Returns:
        A function returning each job's run (namespace, name, run id, event time; None: no run), in the jobs' order;
        None when a COMPLETE names a job they lack (the store gained it since they were read).
    """
    if engine.dialect == "duckdb":
        sql = (
            "SELECT job_id, run_id, event_time FROM completes WHERE at_us <= ? AND (valid_until_us IS NULL OR "
            "valid_until_us > ?)"
        )
    else:
        sql = f"SELECT j.job_id, c.run_id, c.event_time FROM jobs j {holding_join(engine, 'c.run_id, c.event_time')}"
    return engine.start_query(sql, [instant, instant], partial(_placed_runs, jobs))


def _placed_runs(jobs: Jobs, rows: list[Row]) -> list[tuple[str, str, str, str] | None] | None:
    """Return each job's run (namespace, name, run id, event time; None: no run) in the jobs' order.

    The rows are a job's id, a run id and an event time each; None when one names a job the jobs lack.
    """
    held: list[tuple[str, str, str, str] | None] = [None] * len(jobs.ids)
    for job_id, run_id, event_time in rows:
        place = jobs.places.get(job_id)
        if place is None:
            return None
        held[place] = (*jobs.names[place], run_id, event_time)  # of two holding at once, the one read last
    return held


class Jobs(NamedTuple):
    """The store's jobs by name then namespace: each one's id and (namespace, name), and each id's place."""

    ids: list[int]
    names: list[tuple[str, str]]
    places: dict[int, int]


_JOBS: WeakKeyDictionary[Engine, Jobs] = WeakKeyDictionary()


def _jobs(engine: Engine, *, again: bool = False) -> Jobs:
    """Return the store's jobs by name then namespace, read once per engine, or `again` when it has more than kept."""
    kept = _JOBS.get(engine)
    if kept is None or again:
        text = engine.text_order
        rows = engine.query(f"SELECT job_id, namespace, name FROM jobs ORDER BY name{text}, namespace{text}")
        kept = _JOBS[engine] = Jobs(
            [row[0] for row in rows],
            [(row[1], row[2]) for row in rows],
            {row[0]: place for place, row in enumerate(rows)},
        )
    return kept


PLACE_BITS = 32
"""Two places are kept as one number: the first shifted left by this many bits, plus the second (places are far below
2^31)."""

ATTEMPTS = 3
"""How many times every edge as of a time is read before giving up, should the store change between the queries."""

OPENLINEAGE_KINDS: list[Row] = sorted(product([t.value for t in EdgeType], [s.value for s in Subtype], [False, True]))
"""Every kind of edge OpenLineage names (type, subtype, masking), sorted: the kinds assumed before the store is read."""

_KINDS: WeakKeyDictionary[Engine, list[Row]] = WeakKeyDictionary()


def _kinds(engine: Engine, *, again: bool = False) -> list[Row]:
    """Return the kinds of edge (type, subtype, masking) an edge of the store may have, sorted.

    OpenLineage's own (`OPENLINEAGE_KINDS`) until an edge of another kind is met; then, `again`, those and every kind
    the store's edges have, read once per engine.
    """
    if again:
        distinct = engine.query("SELECT DISTINCT type, subtype, masking FROM column_edges")
        _KINDS[engine] = sorted({*OPENLINEAGE_KINDS, *distinct})
    return _KINDS.get(engine, OPENLINEAGE_KINDS)


def _edges_into(engine: Engine, instant: int, into: TableRef) -> list[StoredEdge]:
    """Return the edges holding at the time into the table (its rows, or one of its columns), looked up by key.

    Only a job whose run then wrote the table (`table_writers`) states an edge into it: its edges are read by job.
    """
    table = dataset_id(into)
    jobs = sorted(
        {
            job
            for job, since, until in engine.query(
                "SELECT job_id, valid_from_us, valid_until_us FROM table_writers WHERE dataset_id = ?", [table]
            )
            if _holds(since, until, instant)
        }
    )
    columns = {
        column for (column,) in engine.query("SELECT column_id FROM dataset_columns WHERE dataset_id = ?", [table])
    }
    edges = [
        row
        for row in by_key(
            engine,
            "SELECT source_column_id, target_id, into_table, type, subtype, masking, job_id, valid_from_us, "
            "valid_until_us FROM column_edges WHERE job_id",
            jobs,
        )
        if _holds(row[7], row[8], instant) and (row[1] == table if row[2] else row[1] in columns)
    ]
    runs = {  # the COMPLETE holding then, not every one of the job's: DuckDB fetched each from its own part of the file
        job: (run_id, event_time)
        for job, run_id, event_time in by_key(
            engine,
            "SELECT job_id, run_id, event_time FROM completes WHERE at_us <= ? AND (valid_until_us IS NULL OR "
            "valid_until_us > ?) AND job_id",
            jobs,
            [instant, instant],
        )
    }
    names = {
        job: (namespace, name)
        for job, namespace, name in by_key(engine, "SELECT job_id, namespace, name FROM jobs WHERE job_id", jobs)
    }
    named = by_key(
        engine,
        "SELECT column_id, dataset_id, name FROM dataset_columns WHERE column_id",
        sorted({row[0] for row in edges} | {row[1] for row in edges if not row[2]}),
    )
    tables: dict[int, str] = dict(
        by_key(
            engine, "SELECT dataset_id, name FROM datasets WHERE dataset_id", sorted({t for _, t, _ in named} | {table})
        )
    )
    refs = {key: TableRef.parse(name) for key, name in tables.items()}
    texts = {column: (tables[key], name) for column, key, name in named}
    refs_of = {column: ColumnRef(refs[key], name) for column, key, name in named}
    found = []
    for source, target, into_table, kind, subtype, masking, job, _, _ in edges:
        if job not in runs or source not in refs_of or (not into_table and target not in refs_of):
            continue
        target_text = (tables[table], None) if into_table else texts[target]
        order = (
            *texts[source],
            target_text[0],
            target_text[1] is None,
            target_text[1] or "",
            kind,
            subtype,
            names[job][1],
        )
        edge = StoredEdge(
            refs_of[source],
            refs[table] if into_table else refs_of[target],
            kind,
            subtype,
            bool(masking),
            *names[job],
            *runs[job],
        )
        found.append((order, edge))
    return [edge for _, edge in sorted(found, key=lambda pair: pair[0])]


def knows(engine: Engine, column: ColumnRef) -> bool:
    """Return True when some event in the store names the column."""
    return bool(
        engine.query("SELECT 1 FROM dataset_columns WHERE column_id = ?", [column_id(column.table, column.field)])
    )


def impact(engine: Engine, column: ColumnRef, at: int | None = None) -> StoreImpact:
    """Return what a change to the column reaches at `at` (None: now), walked one level at a time.

    Each level reads the edges holding at the time that leave the columns just reached, and the columns of the tables
    just reached (`table_columns`), a few keys one look-up each; what was reached is named at the end. A walk that
    reaches more than `WIDE` columns (per engine) goes on in one recursive query, or on level by level when that
    query needs more memory than the database may take (a DuckDB reader's `store_memory_limit`), even once the
    memory the database kept between queries is given back (`Engine.release_memory`).

    Args:
        engine: The store's engine.
        column: The column changed.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        The columns reached, the columns whose values can change and the tables whose rows can change.

    Raises:
        ColumnNotInStoreError: No event in the store names the column.
    """
    with paused_collection():  # a wide answer makes hundreds of thousands of refs: the collector would rescan them
        return _impact(engine, column, at)


def _impact(engine: Engine, column: ColumnRef, at: int | None) -> StoreImpact:
    instant = NOW if at is None else at
    start = column_id(column.table, column.field)
    leaving: dict[int, list[tuple[int, bool, bool]]] = {start: []}  # per column walked: its edges' targets, kinds
    reached: set[int] = set()
    tables: set[int] = set()
    columns: list[int] = [start]
    written: list[int] = []
    wide = WIDE[engine.dialect]
    released = False
    while columns or written:
        if len(reached) > wide:  # a wide reach: one recursive query walks it in the database
            try:
                return _walk_in_database(engine, column, at, start, instant)
            except engine.errors as error:
                if not engine.out_of_memory(error):
                    raise
                if not released and engine.release_memory():  # what the database kept may be what was missing
                    released = True
                    continue
                wide = sys.maxsize  # the graph at the time needs more memory than the store may take: by level
        found: list[int] = []
        for source, target, into_table, kind in _leaving(engine, columns, instant):
            leaving[source].append((target, bool(into_table), kind == "DIRECT"))
            if into_table:
                if target not in tables:
                    tables.add(target)
                    written.append(target)
            elif target not in reached:
                reached.add(target)
                found.append(target)
        for named in table_columns(engine, written, instant).values():
            for target in named:
                if target not in reached:
                    reached.add(target)
                    found.append(target)
        written = []
        columns = [c for c in found if c not in leaving]
        for source in columns:
            leaving[source] = []
    return _answer(engine, column, at, start, reached, _through_values(leaving, start), tables)


def _answer(
    engine: Engine, column: ColumnRef, at: int | None, start: int, reached: set[int], values: set[int], tables: set[int]
) -> StoreImpact:
    answer = _named(engine, StoreImpact(column, at_us=at), start, reached, values, tables)
    if answer is None:
        raise _unknown(column)
    return answer


def _unknown(column: ColumnRef) -> ColumnNotInStoreError:
    return ColumnNotInStoreError(
        f"{column}: no event in the lineage store names this column; check the name, "
        "or that the jobs reading it sent their events"
    )


WIDE = {"duckdb": 50, "postgres": 3000}
"""Per engine, a walk that has reached more columns than this goes on in one recursive query. On DuckDB each level
would read the edges of hundreds of columns by a query of its own; on PostgreSQL a level's look-ups cost little and
the recursive query works out the whole graph at the time first, so a walk goes on by level further."""


def _walk_in_database(engine: Engine, column: ColumnRef, at: int | None, start: int, instant: int) -> StoreImpact:
    """Return what a change to the column reaches, walked by one recursive query, named and sorted in the database.

    The graph at the time is worked out first, once: each edge holding then (its target a column, or a table as its
    id negated) and each table's columns then (from the table, as its id negated, to each column). The walk joins the
    nodes just reached to it, each node with whether every edge on the way to it was a DIRECT column edge (the
    values). On PostgreSQL the graph is kept as each node's targets in an array, which the walk's join hashes
    once (`_hash_joined`). On DuckDB the nodes reached are kept in a temporary table (`REACHED`) and named by a
    second query, so that the walk's memory is given back before the naming takes its own.
    """
    text = engine.text_order
    held = "valid_from_us <= ? AND (valid_until_us IS NULL OR valid_until_us > ?)"
    edges = (
        "SELECT source_column_id AS source, CASE WHEN into_table THEN -target_id ELSE target_id END AS target, NOT "
        f"into_table AND type = 'DIRECT' AS direct FROM column_edges WHERE {held} UNION ALL SELECT -w.dataset_id, "
        "sc.column_id, FALSE FROM writer w JOIN shape_columns sc ON sc.shape_id = w.shape_id AND sc.dataset_id = "
        "w.dataset_id UNION ALL SELECT -dc.dataset_id, dc.column_id, FALSE FROM dataset_columns dc WHERE NOT EXISTS "
        "(SELECT 1 FROM writer w WHERE w.dataset_id = dc.dataset_id)"
    )
    if engine.dialect == "postgres":
        graph = (
            # HAVING, always true, has the planner guess fewer rows for the graph than for the nodes a step reaches
            "SELECT source, array_agg(target) AS targets, array_agg(direct) AS directs FROM "
            f"({edges}) AS e GROUP BY source HAVING COUNT(*) > 0"
        )
        walk = (
            "SELECT t.target, t.direct FROM graph g CROSS JOIN LATERAL unnest(g.targets, g.directs) AS t (target, "
            "direct) WHERE g.source = ? UNION SELECT t.target, w.direct AND t.direct FROM walk w JOIN graph g ON "
            "g.source = w.node CROSS JOIN LATERAL unnest(g.targets, g.directs) AS t (target, direct)"
        )
    else:
        graph = edges
        walk = (
            "SELECT target, direct FROM graph WHERE source = ? UNION SELECT g.target, w.direct AND g.direct FROM "
            "walk w JOIN graph g ON g.source = w.node"
        )
    walked = (
        "WITH RECURSIVE writer AS MATERIALIZED (SELECT dataset_id, shape_id FROM (SELECT f.dataset_id, f.shape_id, "
        f"ROW_NUMBER() OVER (PARTITION BY f.dataset_id ORDER BY j.name{text}, j.namespace{text}) AS place FROM "
        f"table_writers f JOIN jobs j ON j.job_id = f.job_id WHERE f.{held}) AS w WHERE place = 1), "
        f"graph AS MATERIALIZED ({graph}), walk (node, direct) AS ({walk})"
    )
    grouped = "SELECT node, bool_or(direct) AS direct FROM walk GROUP BY node"
    params = [instant, instant, instant, instant, start]
    if engine.dialect == "postgres":
        rows = _hash_joined(engine, f"{walked}, reached AS ({grouped}) {_naming('reached', text)}", params)
    else:  # the walk's memory is given back before the naming takes its own: a reader's limit holds one at a time
        engine.execute(f"CREATE OR REPLACE TEMP TABLE {REACHED} AS {walked} {grouped}", params)
        try:
            rows = engine.query(_naming(REACHED, text))
        finally:
            engine.execute(f"DROP TABLE IF EXISTS {REACHED}")
    if not knows(engine, column):
        raise _unknown(column)
    answer = StoreImpact(column, at_us=at)
    reached, values, rows_reached = answer.columns_reached, answer.values, answer.rows
    tables: dict[str, TableRef] = {}
    new = tuple.__new__
    for is_table, direct, table_name, name in rows:  # the columns, then the tables, each in the order of its text
        table = tables.get(table_name) or tables.setdefault(table_name, TableRef.parse(table_name))
        if is_table:
            rows_reached.append(table)
            continue
        ref = new(ColumnRef, (table, name))
        reached.append(ref)
        if direct:
            values.append(ref)
    return answer


REACHED = "temp.impact_reached"
"""On DuckDB, the table in the connection's own temporary catalog that a wide walk leaves what it reached in."""


def _naming(reached: str, text: str) -> str:
    """Return the query naming the nodes reached (a node, whether its values can change), columns then tables."""
    return (
        f"SELECT r.node < 0, r.direct, d.name, dc.name FROM {reached} r LEFT JOIN dataset_columns dc ON r.node >= 0 "
        "AND dc.column_id = r.node JOIN datasets d ON d.dataset_id = CASE WHEN r.node < 0 THEN -r.node ELSE "
        "dc.dataset_id END ORDER BY r.node < 0, CASE WHEN r.node < 0 THEN d.name ELSE d.name || '.' || dc.name "
        f"END{text}"
    )


def _hash_joined(engine: Engine, sql: str, params: list[Any]) -> list[Row]:
    """Return the rows of a query on PostgreSQL, planned without merge joins.

    The planner, which has no statistics of a query's intermediate rows, may sort both sides of a join it guessed
    large. In an impact walk it joined the nodes just reached to the graph's targets unnested and sorted, all of them
    read again at each of the walk's steps; a hash join of the graph (guessed the smaller side: `HAVING` in the
    query) hashes it once for the whole walk, and each step looks its nodes up in it.
    """
    with engine.transaction():
        engine.execute("SET LOCAL enable_mergejoin = off")
        return engine.query(sql, params)


def _holds(since: int, until: int | None, instant: int) -> bool:
    return since <= instant and (until is None or until > instant)


def _leaving(engine: Engine, columns: list[int], instant: int) -> list[Row]:
    """Return the edges holding at the time that leave the columns: source, target, into a table, type."""
    return [
        (source, target, into_table, kind)
        for source, target, into_table, kind, since, until in by_key(
            engine,
            "SELECT source_column_id, target_id, into_table, type, valid_from_us, valid_until_us FROM column_edges "
            "WHERE source_column_id",
            columns,
        )
        if _holds(since, until, instant)
    ]


def table_columns(engine: Engine, tables: list[int], instant: int) -> dict[int, list[int]]:
    """Return the columns of each table as its writer's run at the time names them, else every column named for it.

    The writer is the first job by name (then namespace) whose run at the time wrote the table (`table_writers`).

    Args:
        engine: The store's engine.
        tables: The tables' ids.
        instant: The time, microseconds since the epoch (`NOW` for now).

    Returns:
        Each table's column ids (a table no event named is left out).
    """
    candidates: dict[int, list[tuple[int, int]]] = {}  # per table, each job whose run then wrote it, and its shape
    for table, job_id, shape, since, until in by_key(
        engine,
        "SELECT dataset_id, job_id, shape_id, valid_from_us, valid_until_us FROM table_writers WHERE dataset_id",
        tables,
    ):
        if _holds(since, until, instant):
            candidates.setdefault(table, []).append((job_id, shape))
    shared = sorted({job for found in candidates.values() if len(found) > 1 for job, _ in found})
    names = {
        job: (name, namespace)
        for job, namespace, name in by_key(engine, "SELECT job_id, namespace, name FROM jobs WHERE job_id", shared)
    }
    writers = {table: min(found, key=lambda c: names.get(c[0], ("", "")))[1] for table, found in candidates.items()}
    found_columns: dict[int, list[int]] = {table: [] for table in writers}
    for shape, table, column in by_key(
        engine,
        "SELECT shape_id, dataset_id, column_id FROM shape_columns WHERE shape_id",
        sorted(set(writers.values())),
    ):
        if writers.get(table) == shape:
            found_columns[table].append(column)
    unwritten = [table for table in tables if table not in writers]
    for table, column in by_key(
        engine, "SELECT dataset_id, column_id FROM dataset_columns WHERE dataset_id", unwritten
    ):
        found_columns.setdefault(table, []).append(column)
    return found_columns


def _through_values(leaving: dict[int, list[tuple[int, bool, bool]]], start: int) -> set[int]:
    """Return the columns reached from `start` through DIRECT column edges only."""
    values: set[int] = set()
    stack = [start]
    while stack:
        for target, into_table, direct in leaving.get(stack.pop(), ()):
            if direct and not into_table and target not in values:
                values.add(target)
                stack.append(target)
    return values


def _named(
    engine: Engine, answer: StoreImpact, start: int, reached: set[int], values: set[int], tables: set[int]
) -> StoreImpact | None:
    """Fill the answer with the refs of the columns and tables reached, each list sorted by name.

    Returns None when no event names the column the walk started from.
    """
    ids = sorted(reached | {start})
    named = by_key(engine, "SELECT column_id, dataset_id, name FROM dataset_columns WHERE column_id", ids)
    table_ids = sorted(tables | {table for _, table, _ in named})
    table_names: dict[int, str] = dict(
        by_key(engine, "SELECT dataset_id, name FROM datasets WHERE dataset_id", table_ids)
    )
    refs = {table: TableRef.parse(name) for table, name in table_names.items()}
    # each ref with its text (a dataset's name is its TableRef's text), sorted by that text as `str` would print it
    columns = {
        column: (f"{table_names[table]}.{name}", ColumnRef(refs[table], name))
        for column, table, name in named
        if table in refs
    }
    if start not in columns:
        return None
    answer.columns_reached = [ref for _, ref in sorted(columns[c] for c in reached if c in columns)]
    answer.values = [ref for _, ref in sorted(columns[c] for c in values if c in columns)]
    answer.rows = [refs[table] for _, table in sorted((table_names[t], t) for t in tables if t in refs)]
    return answer
