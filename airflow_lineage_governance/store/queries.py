"""The questions asked of the store, answered in the database.

Which edges held at a time (`edges_as_of`), and what a change to a column reaches downstream (`impact`, a recursive
query).

A time is an instant in microseconds since the epoch, or None for now (each job's latest COMPLETE). As the
in-memory history does, a job's run at a time is its latest COMPLETE at or before it, and an edge holds when
that run stated it; an edge into a table (the rows it shapes) reaches each column the table's writer's run at
that time names for it (the first writing job by name), else every column ever named for the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.errors import ColumnNotInStoreError
from airflow_lineage_governance.store.ingest import column_id

NOW = 2**63 - 1
"""The instant that stands for now: only the intervals still open hold at it."""


@dataclass(frozen=True)
class StoredEdge:
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
    """Returns the CTEs of the edges and writers holding at `at`, and their parameters."""
    sql = (
        "holding AS (SELECT job_id, source_column_id, target_id, into_table, type, subtype, masking FROM "
        "column_edges WHERE valid_from_us <= ? AND (valid_until_us IS NULL OR valid_until_us > ?))"
    )
    return sql, [at, at]


def edges_as_of(engine: Engine, at: int | None = None) -> list[StoredEdge]:
    """Return every edge that held at `at` (None: now), with the run that stated it.

    Args:
        engine: The store's engine.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        The edges, sorted by source, target, type, subtype and job.
    """
    instant = NOW if at is None else at
    holding, params = _holding(instant)
    text = engine.text_order
    rows = engine.query(
        f"WITH {holding} SELECT sd.name, sc.name, td.name, tc.name, h.into_table, h.type, h.subtype, h.masking, "
        "j.namespace, j.name, c.run_id, c.event_time FROM holding h "
        "JOIN dataset_columns sc ON sc.column_id = h.source_column_id "
        "JOIN datasets sd ON sd.dataset_id = sc.dataset_id "
        "LEFT JOIN dataset_columns tc ON NOT h.into_table AND tc.column_id = h.target_id "
        "JOIN datasets td ON td.dataset_id = CASE WHEN h.into_table THEN h.target_id ELSE tc.dataset_id END "
        "JOIN jobs j ON j.job_id = h.job_id "
        "JOIN completes c ON c.job_id = h.job_id AND c.at_us <= ? "
        "AND (c.valid_until_us IS NULL OR c.valid_until_us > ?) "
        f"ORDER BY sd.name{text}, sc.name{text}, td.name{text}, tc.name{text}, h.type{text}, h.subtype{text}, "
        f"j.name{text}",
        [*params, instant, instant],
    )
    tables: dict[str, TableRef] = {}
    columns: dict[tuple[str, str], ColumnRef] = {}

    def table_of(name: str) -> TableRef:
        table = tables.get(name)
        if table is None:
            table = tables[name] = TableRef.parse(name)
        return table

    def column_of(table_name: str, name: str) -> ColumnRef:
        column = columns.get((table_name, name))
        if column is None:
            column = columns[table_name, name] = ColumnRef(table_of(table_name), name)
        return column

    found = []
    for source_table, source, target_table, target, into_table, kind, subtype, masking, space, job, run, time in rows:
        found.append(
            StoredEdge(
                column_of(source_table, source),
                table_of(target_table) if into_table else column_of(target_table, target),
                kind,
                subtype,
                bool(masking),
                space,
                job,
                run,
                time,
            )
        )
    return found


def knows(engine: Engine, column: ColumnRef) -> bool:
    """Return True when some event in the store names the column."""
    return bool(
        engine.query("SELECT 1 FROM dataset_columns WHERE column_id = ?", [column_id(column.table, column.field)])
    )


def impact(engine: Engine, column: ColumnRef, at: int | None = None) -> StoreImpact:
    """Return what a change to the column reaches at `at` (None: now), walked in the database.

    Args:
        engine: The store's engine.
        column: The column changed.
        at: The instant, microseconds since the epoch (UTC); None for each job's latest COMPLETE.

    Returns:
        The columns reached, the columns whose values can change and the tables whose rows can change.

    Raises:
        ColumnNotInStoreError: No event in the store names the column.
    """
    if not knows(engine, column):
        raise ColumnNotInStoreError(
            f"{column}: no event in the lineage store names this column; check the name, "
            "or that the jobs reading it sent their events"
        )
    instant = NOW if at is None else at
    start = column_id(column.table, column.field)
    text = engine.text_order
    held = "e.valid_from_us <= ? AND (e.valid_until_us IS NULL OR e.valid_until_us > ?)"
    rows = engine.query(
        "WITH RECURSIVE writer AS MATERIALIZED (SELECT dataset_id, shape_id FROM (SELECT so.dataset_id, c.shape_id, "
        f"ROW_NUMBER() OVER (PARTITION BY so.dataset_id ORDER BY j.name{text}, j.namespace{text}) AS place FROM "
        "completes c JOIN shape_outputs so ON so.shape_id = c.shape_id JOIN jobs j ON j.job_id = c.job_id WHERE "
        "c.at_us <= ? AND (c.valid_until_us IS NULL OR c.valid_until_us > ?)) AS w WHERE place = 1), "
        "table_columns AS MATERIALIZED (SELECT w.dataset_id, sc.column_id FROM writer w JOIN shape_columns sc ON "
        "sc.shape_id = w.shape_id AND sc.dataset_id = w.dataset_id UNION ALL SELECT dc.dataset_id, dc.column_id "
        "FROM dataset_columns dc WHERE NOT EXISTS (SELECT 1 FROM writer w WHERE w.dataset_id = dc.dataset_id)), "
        # the nodes a change reaches: columns, and tables (their rows) expanded to their columns
        "walk (node_id, is_table, first) AS (SELECT CAST(? AS BIGINT), FALSE, TRUE UNION "
        "SELECT CASE WHEN w.is_table THEN tc.column_id ELSE e.target_id END, NOT w.is_table AND e.into_table, FALSE "
        f"FROM walk w LEFT JOIN column_edges e ON NOT w.is_table AND e.source_column_id = w.node_id AND {held} "
        "LEFT JOIN table_columns tc ON w.is_table AND tc.dataset_id = w.node_id "
        "WHERE e.target_id IS NOT NULL OR tc.column_id IS NOT NULL), "
        "through_values (column_id) AS (SELECT e.target_id FROM column_edges e WHERE e.source_column_id = ? AND "
        f"NOT e.into_table AND e.type = 'DIRECT' AND {held} UNION SELECT e.target_id FROM through_values v "
        "JOIN column_edges e ON e.source_column_id = v.column_id AND NOT e.into_table AND e.type = 'DIRECT' AND "
        f"{held}), "
        "answer AS (SELECT CASE WHEN is_table THEN 'rows' ELSE 'column' END AS part, node_id FROM walk WHERE "
        "NOT first UNION ALL SELECT 'value', column_id FROM through_values) "
        "SELECT a.part, d.name, dc.name FROM answer a LEFT JOIN dataset_columns dc ON a.part <> 'rows' AND "
        "dc.column_id = a.node_id JOIN datasets d ON d.dataset_id = CASE WHEN a.part = 'rows' THEN a.node_id ELSE "
        "dc.dataset_id END",
        [instant, instant, start, instant, instant, start, instant, instant, instant, instant],
    )
    answer = StoreImpact(column, at_us=at)
    for part, table_name, column_name in rows:
        table = TableRef.parse(table_name)
        if part == "rows":
            answer.rows.append(table)
        elif part == "value":
            answer.values.append(ColumnRef(table, column_name))
        else:
            answer.columns_reached.append(ColumnRef(table, column_name))
    for found in (answer.columns_reached, answer.values, answer.rows):
        found.sort(key=str)
    return answer
