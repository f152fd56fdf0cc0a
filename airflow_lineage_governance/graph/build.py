"""The lineage graph, rebuilt from COMPLETE events alone (never from SQL), as a lineage server would.

Nodes are columns (`db.table.column`) and tables (`db.table`). An edge runs from a source column to the
column it feeds (column-level: DIRECT, or field-level INDIRECT), or to the table whose every row it shapes
(the facet's `dataset` list: INDIRECT). Each edge carries type, subtype, masking, job, run and event time.
The latest COMPLETE run of each job defines that job's edges: yesterday's edges of a changed job are gone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import networkx as nx

from airflow_lineage_governance.graph.events import RunEvent


class Edge(NamedTuple):
    """One lineage edge as an event stated it (a named tuple: a graph holds hundreds of thousands)."""

    source: str
    target: str
    type: str
    subtype: str
    masking: bool
    job: str
    run_id: str
    event_time: str

    @property
    def into_table(self) -> bool:
        """Returns True when the edge shapes every row of its target table."""
        return self.target.count(".") == 1

    def to_dict(self) -> dict[str, object]:
        """Returns the edge as the CLI's JSON shows it."""
        return {"source": self.source, "target": self.target, "type": self.type, "subtype": self.subtype,
                "masking": self.masking, "job": self.job}


@dataclass
class LineageGraph:
    """The column graph (adjacency lists of edges, each node's edges in a stable order) and what the events
    said about tables. `to_networkx()` gives the same graph as a networkx MultiDiGraph for other analyses."""

    table_columns: dict[str, dict[str, None]] = field(default_factory=lambda: defaultdict(dict))  # ordered sets
    outputs: dict[str, str] = field(default_factory=dict)  # table -> job that writes it
    jobs: dict[str, RunEvent] = field(default_factory=dict)  # job -> its latest COMPLETE event
    _out: dict[str, list[Edge]] = field(default_factory=lambda: defaultdict(list), repr=False)
    _in: dict[str, list[Edge]] = field(default_factory=lambda: defaultdict(list), repr=False)
    _keys: set[tuple[str, str, str, str]] = field(default_factory=set, repr=False)
    _sorted: bool = field(default=False, repr=False)

    def add_edge(self, edge: Edge) -> None:
        """Adds the edge unless an edge of the same source, target, type and subtype is there already."""
        key = (edge.source, edge.target, edge.type, edge.subtype)
        if key in self._keys:
            return
        self._keys.add(key)
        self._out[edge.source].append(edge)
        self._in[edge.target].append(edge)
        self._sorted = False

    def _sort(self) -> None:
        for edges in self._out.values():
            edges.sort(key=lambda e: (e.target, e.type, e.subtype, e.source))
        for edges in self._in.values():
            edges.sort(key=lambda e: (e.type != "DIRECT", e.source, e.subtype))
        self._sorted = True

    def edges(self) -> list[Edge]:
        """Returns every edge."""
        return [edge for edges in self._out.values() for edge in edges]

    def out_edges(self, node: str) -> list[Edge]:
        """Returns the edges leaving `node`, in a stable order."""
        if not self._sorted:
            self._sort()
        return self._out.get(node, [])

    def in_edges(self, node: str) -> list[Edge]:
        """Returns the edges entering `node`, in a stable order."""
        if not self._sorted:
            self._sort()
        return self._in.get(node, [])

    def columns_of(self, table: str) -> list[str]:
        """Returns the table's columns (`db.table.column`) as the events' schemas and lineage named them."""
        return [f"{table}.{c}" for c in self.table_columns.get(table, {})]

    def knows(self, column: str) -> bool:
        """Returns True when some event mentions the column."""
        table, name = column.rsplit(".", 1) if "." in column else ("", column)
        return column in self._out or column in self._in or name in self.table_columns.get(table, {})

    def to_networkx(self) -> nx.MultiDiGraph:
        """Returns the graph as a networkx MultiDiGraph, each edge's `edge` attribute the Edge."""
        graph = nx.MultiDiGraph()
        graph.add_nodes_from(self.outputs, kind="table")
        for edge in self.edges():
            graph.add_edge(edge.source, edge.target, key=(edge.type, edge.subtype), edge=edge)
        return graph


def latest_completes(events: Iterable[RunEvent]) -> dict[str, RunEvent]:
    """Returns the latest COMPLETE event of each job (by event time; the later read wins a tie)."""
    latest: dict[str, RunEvent] = {}
    for event in events:
        if event.event_type != "COMPLETE" or event.raw is None:
            continue
        known = latest.get(event.job_name)
        if known is None or event.event_time >= known.event_time:
            latest[event.job_name] = event
    return latest


def _note_columns(lineage: LineageGraph, table: str, names: Iterable[str]) -> None:
    lineage.table_columns[table].update(dict.fromkeys(names))


def _schema_names(dataset: dict) -> list[str]:
    fields = ((dataset.get("facets") or {}).get("schema") or {}).get("fields") or []
    return [f["name"] for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)]


UNTYPED = (("DIRECT", "UNKNOWN", False),)  # an input field with no transformations (older producers)


def _transformations(entry: dict) -> list[tuple[str, str, bool]] | tuple[tuple[str, str, bool], ...]:
    found = entry.get("transformations")
    if type(found) is not list:
        return UNTYPED
    typed = [(t.get("type") or "DIRECT", t.get("subtype") or "", bool(t.get("masking")))
             for t in found if type(t) is dict]
    return typed or UNTYPED


def _add_event(lineage: LineageGraph, event: RunEvent, namespace: str | None) -> None:
    def ours(dataset: dict) -> bool:
        return isinstance(dataset, dict) and isinstance(dataset.get("name"), str) and (
            namespace is None or dataset.get("namespace") == namespace)

    for dataset in event.raw.get("inputs") or []:
        if ours(dataset):
            _note_columns(lineage, dataset["name"], _schema_names(dataset))
    for dataset in event.raw.get("outputs") or []:
        if not ours(dataset):
            continue
        table = dataset["name"]
        lineage.outputs[table] = event.job_name
        facet = (dataset.get("facets") or {}).get("columnLineage") or {}
        fields = facet.get("fields") if isinstance(facet.get("fields"), dict) else {}
        _note_columns(lineage, table, [*_schema_names(dataset), *fields])
        for column, entry in fields.items():
            target = f"{table}.{column}"
            for source in (entry or {}).get("inputFields") or []:
                _add_edges(lineage, event, namespace, source, target)
        for source in facet.get("dataset") or []:
            _add_edges(lineage, event, namespace, source, table)


def _add_edges(lineage: LineageGraph, event: RunEvent, namespace: str | None, source: dict, target: str) -> None:
    if type(source) is not dict:
        return
    name, column = source.get("name"), source.get("field")
    if type(name) is not str or type(column) is not str:
        return
    if namespace is not None and source.get("namespace") != namespace:
        return
    origin = f"{name}.{column}"
    lineage.table_columns[name][column] = None
    for kind, subtype, masking in _transformations(source):
        lineage.add_edge(Edge(origin, target, kind, subtype, masking, event.job_name, event.run_id, event.event_time))


def build_graph(events: Iterable[RunEvent], namespace: str | None = None) -> LineageGraph:
    """Returns the graph of the latest COMPLETE event of every job; datasets of other namespaces are left out
    when `namespace` is given."""
    lineage = LineageGraph()
    lineage.jobs = latest_completes(events)
    for event in lineage.jobs.values():
        _add_event(lineage, event, namespace)
    return lineage
