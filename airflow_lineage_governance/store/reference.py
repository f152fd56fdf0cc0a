"""A small reference model of the store's answers, on networkx, that the tests hold both engines to.

The distinct events, each job's COMPLETEs in time order, the graph as of a time, impact as graph reachability, and
tracing by snapshot as reachability over snapshots. It keeps everything in memory and is written for plainness, not
speed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import networkx as nx

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.build import LineageGraph, add_event, event_graph
from airflow_lineage_governance.graph.events import COMPLETE, EVENT_TYPES, RunEvent, final_events, to_run_event
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

Snapshot = tuple[TableRef, str]
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
        """Return each run's final state (`final_events`)."""
        return {run: event.event_type for run, event in final_events(self.events).items()}

    def chosen(self, at: datetime | None) -> dict[tuple[str, str], RunEvent]:
        """Return each job's latest COMPLETE at or before `at` (None: its latest)."""
        chosen = {}
        for job, events in self.runs.items():
            before = [e for e in events if at is None or e.at <= at]
            if before:
                chosen[job] = before[-1]
        return chosen

    def edges_as_of(self, at: datetime | None) -> set[Edge]:
        """Return the edges of each job's run as of `at`."""
        return {
            (e.source, e.target, str(e.type), str(e.subtype), job[1])
            for job, event in self.chosen(at).items()
            for e in event_graph(event).edges()
        }

    def lineage_graph(self, at: datetime | None) -> LineageGraph:
        """Return the lineage graph as of `at`, as `build_graph` reads events: each job's run then.

        The jobs are added in the order of their first COMPLETE (a table two jobs write is the later one's output).
        """
        chosen = self.chosen(at)
        first = {job: events[0].order for job, events in self.runs.items()}
        lineage = LineageGraph()
        for job in sorted(chosen, key=lambda j: (first[j], j[1])):
            lineage.jobs[job[1]] = chosen[job]
            add_event(lineage, chosen[job], None)
        return lineage

    def stale_jobs(self, at: datetime, before: datetime) -> list[str]:
        """Return, sorted, the jobs whose run as of `at` is older than `before`."""
        return sorted({job for (_, job), event in self.chosen(at).items() if event.at < before})

    def graph_as_of(self, at: datetime | None) -> nx.MultiDiGraph:
        """Return the column graph as of `at`.

        Every edge of each job's run then, an edge into a table drawn to each column the table's writer's run names for
        it (the first writing job by name), else to every column ever named for it; a column edge keyed by its type, an
        edge into a table by `ROWS` and each column it reaches so by `ROW`.
        """
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
        """Return the columns reached from the column as of `at`, those reached through DIRECT edges, and tables.

        The column itself is reached only on a cycle; the second are the columns reached through DIRECT column edges
        only, and the tables are those whose rows it shapes, directly or through the columns reached.
        """
        lineage = self.graph_as_of(at)
        if column not in lineage:
            return set(), set(), set()
        columns = nx.MultiDiGraph([(u, v, k) for u, v, k in lineage.edges(keys=True) if k != "ROWS"])
        direct = nx.DiGraph([(u, v) for u, v, k in lineage.edges(keys=True) if k == EdgeType.DIRECT])
        reached = _reached(columns, column)
        values = _reached(direct, column)
        rows = {
            t
            for source in reached | {column}
            if source in lineage
            for _, t, k in lineage.out_edges(source, keys=True)
            if k == "ROWS"
        }
        return reached, values, rows

    def upstream(self, column: ColumnRef, at: datetime | None) -> set[ColumnRef]:
        """Return the columns the column depends on as of `at` (itself only on a cycle).

        Through the column edges into it, and the edges into its table (they shape every row), recursively.
        """
        lineage = nx.DiGraph()
        for source, target, *_ in self.edges_as_of(at):
            lineage.add_edge(source, target)
        for node in [*lineage.nodes, column]:
            if isinstance(node, ColumnRef):
                lineage.add_edge(node.table, node)
        found = {c for c in nx.ancestors(lineage, column) if isinstance(c, ColumnRef)}
        if any(column in nx.ancestors(lineage, s) or s == column for s in lineage.predecessors(column)):
            found.add(column)
        return found

    def written_tables(self, at: datetime | None) -> dict[TableRef, str]:
        """Return each table the jobs' runs as of `at` wrote, with the first such job by name."""
        found: dict[TableRef, str] = {}
        for (_, job), event in self.chosen(at).items():
            for table in event_graph(event).outputs:
                found[table] = min(found.get(table, job), job)
        return found

    def observed(self, at: datetime | None) -> dict[str, tuple[set[Any], set[tuple[TableRef, TableRef]], str]]:
        """Return, by job name, the column edges, the dataset edges and the run id of each job's run as of `at`.

        Column edges are (source, target, type, subtype); dataset edges go from each table read to each written (the
        tables the lineage wrote when the event named no output).
        """
        found = {}
        for (_, job), event in self.chosen(at).items():
            graph = event_graph(event)
            inputs = [t for t, _ in versions(event.raw, "inputs")]
            outputs = [t for t, _ in versions(event.raw, "outputs")] or list(graph.outputs)
            found[job] = (
                {(e.source, e.target, str(e.type), str(e.subtype)) for e in graph.edges()},
                {(i, o) for i in inputs for o in outputs},
                event.run_id,
            )
        return found

    def writers(self) -> dict[Snapshot, RunEvent]:
        """Return the run that wrote each snapshot: the latest COMPLETE (in time order) naming it as an output."""
        found: dict[Snapshot, RunEvent] = {}
        for events in self.runs.values():
            for event in events:
                for table, snapshot in versions(event.raw, "outputs"):
                    if snapshot is not None and (
                        (table, snapshot) not in found or found[(table, snapshot)].order < event.order
                    ):
                        found[(table, snapshot)] = event
        return found

    def traced_back(self, table: TableRef, snapshot: str) -> set[tuple[TableRef, str, str | None]]:
        """Return every snapshot a trace back from the snapshot meets, with the run id of its writer (None: a source).

        The snapshots reachable from it, each to the snapshots its writer read.
        """
        writers = self.writers()
        graph = nx.DiGraph()
        graph.add_node((table, snapshot))
        for key, event in writers.items():
            graph.add_node(key)
            graph.add_edges_from((key, read) for read in versions(event.raw, "inputs") if read[1] is not None)
        met = {(table, snapshot)} | nx.descendants(graph, (table, snapshot))
        return {(t, s, writers[(t, s)].run_id if (t, s) in writers else None) for t, s in met}

    def traced_forward(
        self, table: TableRef, snapshot: str
    ) -> list[tuple[str, tuple[TableRef, str | None], TableRef, str | None]]:
        """Return, sorted, each (run id, snapshot read, table written, snapshot written) of a trace forward.

        Every COMPLETE that read a snapshot reachable from the snapshot (itself included) through runs that read one
        snapshot and wrote another, once per snapshot read, with each of its outputs.
        """
        completes = [e for events in self.runs.values() for e in events]
        graph = nx.DiGraph()
        graph.add_node((table, snapshot))
        for event in completes:
            for read in versions(event.raw, "inputs"):
                for wrote in versions(event.raw, "outputs"):
                    if read[1] is not None and wrote[1] is not None:
                        graph.add_edge(read, wrote)
        met = {(table, snapshot)} | nx.descendants(graph, (table, snapshot))
        return sorted(
            (
                (e.run_id, read, t, s)
                for e in completes
                for read in versions(e.raw, "inputs")
                if read in met
                for t, s in versions(e.raw, "outputs")
            ),
            key=str,
        )


def versions(raw: Any, key: str) -> list[tuple[TableRef, str | None]]:
    """Return the (table, snapshot of its version facet) of each dataset of the event's `inputs` or `outputs`.

    The first named per table.
    """
    found: dict[TableRef, str | None] = {}
    for dataset in raw.get(key) or () if isinstance(raw, dict) else ():
        if isinstance(dataset, dict) and isinstance(dataset.get("name"), str):
            try:
                table = TableRef.parse(dataset["name"])
            except InvalidNameError:
                continue
            version = ((dataset.get("facets") or {}).get("version") or {}).get("datasetVersion")
            found.setdefault(table, version if isinstance(version, str) else None)
    return list(found.items())


def _reached(graph: nx.DiGraph | nx.MultiDiGraph, start: ColumnRef) -> set[ColumnRef]:
    if start not in graph:
        return set()
    found = set(nx.descendants(graph, start))
    if any(start == s or start in nx.descendants(graph, s) for s in graph.successors(start)):
        found.add(start)
    return found
