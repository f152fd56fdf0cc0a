"""A small reference model of the store's answers, on networkx, that the tests hold both engines to: the distinct
events, each job's COMPLETEs in time order, the graph as of a time, and impact as graph reachability. It keeps
everything in memory and is written for plainness, not speed."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import networkx as nx

from airflow_lineage_governance.graph.build import event_graph
from airflow_lineage_governance.graph.events import COMPLETE, EVENT_TYPES, RunEvent, final_events, to_run_event
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

Edge = tuple[ColumnRef, ColumnRef | TableRef, str, str, str]
"""An edge as the reference keeps it: source, target, type, subtype and job name."""


class ReferenceHistory:
    """The history of a list of raw events, as received (duplicates and late events included)."""

    def __init__(self, raws: Iterable[Any]) -> None:
        seen: set[tuple[str, str, datetime]] = set()
        self.events: list[RunEvent] = []
        for raw in raws:
            event = to_run_event(raw)
            if event is None or event.event_type not in EVENT_TYPES:
                continue
            key = (event.run_id, event.event_type, event.at)
            if key not in seen:
                seen.add(key)
                self.events.append(event)
        completes = [e for e in self.events if e.event_type == COMPLETE and e.raw is not None]
        self.runs: dict[tuple[str, str], list[RunEvent]] = {}
        for event in sorted(completes, key=lambda e: e.order):
            self.runs.setdefault((event.job_namespace, event.job_name), []).append(event)

    def final_states(self) -> dict[str, str]:
        """Returns each run's final state (`final_events`)."""
        return {run: event.event_type for run, event in final_events(self.events).items()}

    def chosen(self, at: datetime | None) -> dict[tuple[str, str], RunEvent]:
        """Returns each job's latest COMPLETE at or before `at` (None: its latest)."""
        chosen = {}
        for job, events in self.runs.items():
            before = [e for e in events if at is None or e.at <= at]
            if before:
                chosen[job] = before[-1]
        return chosen

    def edges_as_of(self, at: datetime | None) -> set[Edge]:
        """Returns the edges of each job's run as of `at`."""
        return {(e.source, e.target, str(e.type), str(e.subtype), job[1])
                for job, event in self.chosen(at).items() for e in event_graph(event).edges()}

    def graph_as_of(self, at: datetime | None) -> nx.MultiDiGraph:
        """Returns the column graph as of `at`: every edge of each job's run then, an edge into a table drawn to each
        column the table's writer's run names for it (the first writing job by name), else to every column ever
        named for it; a column edge keyed by its type, an edge into a table by `ROWS` and each column it reaches so
        by `ROW`."""
        ever: dict[TableRef, list[str]] = {}
        for events in self.runs.values():
            for event in events:
                for table, names in event_graph(event).table_columns.items():
                    known = ever.setdefault(table, [])
                    known.extend(n for n in names if n not in known)
        chosen = sorted(self.chosen(at).items(), key=lambda item: (item[0][1], item[0][0]))
        graphs = [(job, event_graph(event)) for job, event in chosen]
        written: dict[TableRef, list[str]] = {}
        for _, graph in graphs:
            for table in graph.outputs:
                written.setdefault(table, list(graph.table_columns.get(table, {})))
        lineage = nx.MultiDiGraph()
        for _, graph in graphs:
            for edge in graph.edges():
                target = edge.target
                if isinstance(target, TableRef):
                    lineage.add_edge(edge.source, target, key="ROWS")
                    for name in written.get(target, ever.get(target, [])):
                        lineage.add_edge(edge.source, ColumnRef(target, name), key="ROW")
                else:
                    lineage.add_edge(edge.source, target, key=str(edge.type))
        return lineage

    def impact(self, column: ColumnRef, at: datetime | None) -> tuple[set[ColumnRef], set[ColumnRef], set[TableRef]]:
        """Returns the columns reached from the column as of `at` (itself only on a cycle), those reached through
        DIRECT column edges only, and the tables whose rows it shapes, directly or through the columns reached."""
        lineage = self.graph_as_of(at)
        if column not in lineage:
            return set(), set(), set()
        columns = nx.MultiDiGraph([(u, v, k) for u, v, k in lineage.edges(keys=True) if k != "ROWS"])
        direct = nx.DiGraph([(u, v) for u, v, k in lineage.edges(keys=True) if k == EdgeType.DIRECT])
        reached = _reached(columns, column)
        values = _reached(direct, column)
        rows = {t for source in reached | {column} if source in lineage
                for _, t, k in lineage.out_edges(source, keys=True) if k == "ROWS"}
        return reached, values, rows


def _reached(graph: nx.DiGraph | nx.MultiDiGraph, start: ColumnRef) -> set[ColumnRef]:
    if start not in graph:
        return set()
    found = set(nx.descendants(graph, start))
    if any(start == s or start in nx.descendants(graph, s) for s in graph.successors(start)):
        found.add(start)
    return found
