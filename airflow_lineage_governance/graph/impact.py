"""Impact (downstream) and provenance (upstream) of a column: walks of the lineage graph, INDIRECT included.

An INDIRECT edge into a table means every row of it can change, so the walk goes on from all its columns. The
walk takes a LineageGraph or the history as of a time (graph/asof.py); with history, each reached column gets
the evidence of every hop of its path, the last run that wrote it, a confidence (`observed` only when every hop
is) and whether a hop is stale; edges of the asked column that only superseded runs stated are listed, stale. A
column on a cycle (a job that reads its own output) reaches itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from airflow_lineage_governance.graph.answers import Impact as Impact
from airflow_lineage_governance.graph.answers import Provenance as Provenance
from airflow_lineage_governance.graph.answers import column_asked as column_asked
from airflow_lineage_governance.graph.asof import AsOf, view_of
from airflow_lineage_governance.graph.build import LineageGraph
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.graph.events import paused_collection
from airflow_lineage_governance.graph.history_walk import walker_of
from airflow_lineage_governance.graph.reach import Paths, ReachedColumns, glances
from airflow_lineage_governance.refs import ColumnRef, TableRef


def _check_known(lineage: LineageGraph | AsOf, column: ColumnRef) -> None:
    if not lineage.knows(column):
        raise ColumnNotInLineageError(column, "check the name, or that the jobs reading it sent their events")


def downstream(
    lineage: LineageGraph | AsOf,
    column: ColumnRef,
    owners: Mapping[TableRef, str | None] | None = None,
    weight: Callable[[TableRef], float] | None = None,
) -> Impact:
    """Return what a change to the column can reach, the owners reached and the blast-radius score.

    The columns whose values can change (DIRECT paths), the tables whose rows can change (any INDIRECT edge into a
    table), every column reached in all with the path that reaches it first, the owners of the tables reached, and the
    blast-radius score (the sum of `weight(table)` over columns reached); with history (an AsOf view, or a graph from
    graph_as_of), each column's evidence and the column's retired edges. The column itself is reached when a cycle leads
    back to it. Raises ColumnNotInLineageError when no event mentions the column.
    """
    _check_known(lineage, column)
    with paused_collection():
        return _downstream(lineage, column, owners, weight)


def _downstream(
    lineage: LineageGraph | AsOf,
    column: ColumnRef,
    owners: Mapping[TableRef, str | None] | None,
    weight: Callable[[TableRef], float] | None,
) -> Impact:
    walker: Any = walker_of(lineage)
    rows: dict[Any, None] = {}
    start = walker.start(column)
    found = walker.walk_every(start, rows)
    order, ref, refs = walker.ordered(found.parent), walker.ref, walker.refs
    columns = refs(order)
    reached = ReachedColumns(walker, found, columns, glances(walker, found))
    values = refs(walker.ordered(walker.through_values(start)))
    per_table = walker.tables_of(order)
    tables = refs(walker.ordered(per_table.keys() | rows.keys()))
    score = float(len(order)) if weight is None else sum(weight(ref(t)) * n for t, n in per_table.items())
    known_owners = owners or {}
    view = view_of(lineage)
    return Impact(
        column,
        values,
        refs(walker.ordered(rows)),
        columns,
        Paths(reached),
        {t: known_owners.get(t) for t in tables},
        score,
        reached,
        view.retired_from(column) if view is not None else [],
        start in found.parent,
        _as_of(view),
    )


def _as_of(view: AsOf | None) -> str | None:
    return view.at.isoformat() if view is not None and view.at is not None else None


def upstream(lineage: LineageGraph | AsOf, column: ColumnRef) -> Provenance:
    """Return every column the column depends on, each with the path (source first) that reaches it.

    Through its own edges and the edges that shape its table's rows; with history, each with its evidence (the last
    write named is the source column's table's). Raises ColumnNotInLineageError.
    """
    _check_known(lineage, column)
    with paused_collection():
        walker: Any = walker_of(lineage)
        start = walker.start(column)
        found = walker.walk_up(start)
        columns = walker.refs(walker.ordered(found.parent))
        reached = ReachedColumns(walker, found, columns, glances(walker, found), source_first=True)
        view = view_of(lineage)
        return Provenance(column, columns, Paths(reached), reached, start in found.parent, _as_of(view))
