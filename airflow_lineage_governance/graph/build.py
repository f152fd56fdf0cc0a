"""The lineage graph, rebuilt from COMPLETE events alone (never from SQL), as a lineage server would.

Nodes are columns (`ColumnRef`) and tables (`TableRef`). An edge runs from a source column to the column it
feeds (column-level: DIRECT, or field-level INDIRECT), or to the table whose every row it shapes (the facet's
`dataset` list: INDIRECT). Each edge carries type, subtype, masking, job, run and event time. The latest
COMPLETE run of each job defines that job's edges: yesterday's edges of a changed job are gone from this graph
(the lineage store keeps every run, and gives the graph as of any time: `store/graph_as_of.py`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.graph.events import COMPLETE, RunEvent
from airflow_lineage_governance.kinds import EdgeSource, EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    import networkx as nx

Node = ColumnRef | TableRef


class Edge(NamedTuple):
    """One lineage edge as an event stated it (a named tuple: a graph holds hundreds of thousands).

    `type` and `subtype` are the event's text: an EdgeType and a Subtype value (StrEnums compare equal to them) or, from
    another producer, a value of its own.
    """

    source: ColumnRef
    target: ColumnRef | TableRef
    type: str
    subtype: str
    masking: bool
    job: str
    run_id: str
    event_time: str
    source_kind: EdgeSource = EdgeSource.OBSERVED  # observed (an event), declared (a person) or designed (the SQL)

    @property
    def into_table(self) -> bool:
        """Return True when the edge shapes every row of its target table."""
        return type(self.target) is TableRef

    def to_dict(self) -> dict[str, object]:
        """Return the edge as the CLI's JSON shows it."""
        return {
            "source": str(self.source),
            "target": str(self.target),
            "type": str(self.type),
            "subtype": str(self.subtype),
            "masking": self.masking,
            "job": self.job,
        }


@dataclass
class LineageGraph:
    """The column graph and what the events said about tables.

    The graph is adjacency lists of edges, each node's edges in a stable order. `to_networkx()` gives the same graph as
    a networkx MultiDiGraph for other analyses. `names` holds the text form of every ref the events named, so ordering
    refs by name costs no formatting.
    """

    table_columns: dict[TableRef, dict[str, ColumnRef]] = field(default_factory=lambda: defaultdict(dict))
    outputs: dict[TableRef, str] = field(default_factory=dict)  # table -> job that writes it
    jobs: dict[str, RunEvent] = field(default_factory=dict)  # job -> its latest COMPLETE event
    wrong_parts: int = 0  # parts of the events (datasets, fields, input fields, transformations) of the wrong
    # JSON shape, left out of the graph
    names: dict[Node, str] = field(default_factory=dict, repr=False)
    declared_outputs: dict[TableRef, str] = field(default_factory=dict)  # table -> a declared or designed writer
    at: Any = field(default=None, repr=False)  # the time it was chosen as of (None: now)
    _tables: dict[str, TableRef | None] = field(default_factory=dict, repr=False)  # dataset name -> its ref
    _columns: dict[str, dict[str, ColumnRef]] = field(default_factory=dict, repr=False)  # dataset name -> columns
    _out: dict[ColumnRef, list[Edge]] = field(default_factory=lambda: defaultdict(list), repr=False)
    _in: dict[Node, list[Edge]] = field(default_factory=lambda: defaultdict(list), repr=False)
    _keys: set[tuple[Node, Node, str, str]] = field(default_factory=set, repr=False)
    _sorted_out: set[Node] = field(default_factory=set, repr=False)  # nodes whose edges are in order already
    _sorted_in: set[Node] = field(default_factory=set, repr=False)

    def table_ref(self, name: str) -> TableRef | None:
        """Return the table a dataset name names (parsed once per name), or None when it names no table."""
        try:
            return self._tables[name]
        except KeyError:
            pass
        try:
            ref = TableRef.parse(name)
        except InvalidNameError:
            self._tables[name] = None
            return None
        self._tables[name] = ref
        self.names[ref] = name
        self._columns[name] = self.table_columns[ref]  # the same dict: columns found by dataset name or by ref
        return ref

    def column_ref(self, table: TableRef, column: str) -> ColumnRef:
        """Return the table's column `column` (one ColumnRef per column), noting the column as the table's."""
        columns = self.table_columns[table]
        ref = columns.get(column)
        if ref is None:
            ref = columns[column] = ColumnRef(table, column)
            self.names[ref] = f"{self.names.get(table) or table}.{column}"
        return ref

    def name_of(self, ref: Node) -> str:
        """Return the text form of the ref (`str(ref)`), from the names the events gave when known."""
        return self.names.get(ref) or str(ref)

    def add_edge(self, edge: Edge) -> None:
        """Add the edge unless an edge of the same source, target, type and subtype is there already."""
        for ref in (edge.source, edge.target):
            if ref not in self.names:
                self.names[ref] = str(ref)
        self._add(edge)

    def _add(self, edge: Edge) -> None:
        key = (edge.source, edge.target, edge.type, edge.subtype)
        if key in self._keys:
            return
        self._keys.add(key)
        self._out[edge.source].append(edge)
        self._in[edge.target].append(edge)
        if self._sorted_out or self._sorted_in:
            self._sorted_out.clear()
            self._sorted_in.clear()

    def edges(self) -> list[Edge]:
        """Return every edge."""
        return [edge for edges in self._out.values() for edge in edges]

    def out_edges(self, node: ColumnRef) -> list[Edge]:
        """Return the edges leaving the column, by target, type, subtype and source (sorted when first asked)."""
        edges = self._out.get(node)
        if edges is None:
            return []
        if node not in self._sorted_out:
            names = self.names
            edges.sort(key=lambda e: (names[e.target], e.type, e.subtype, names[e.source]))
            self._sorted_out.add(node)
        return edges

    def in_edges(self, node: Node) -> list[Edge]:
        """Return the edges entering the column or table, DIRECT first, then by source and subtype.

        Sorted when first asked.
        """
        edges = self._in.get(node)
        if edges is None:
            return []
        if node not in self._sorted_in:
            names = self.names
            edges.sort(key=lambda e: (e.type != EdgeType.DIRECT, names[e.source], e.subtype))
            self._sorted_in.add(node)
        return edges

    def columns_of(self, table: TableRef) -> list[ColumnRef]:
        """Return the table's columns as the events' schemas and lineage named them."""
        return list(self.table_columns.get(table, {}).values())

    def knows(self, column: ColumnRef) -> bool:
        """Return True when some event mentions the column."""
        return column in self._out or column in self._in or column.field in self.table_columns.get(column.table, {})

    def to_networkx(self) -> nx.MultiDiGraph:
        """Return the graph as a networkx MultiDiGraph, each edge's `edge` attribute the Edge."""
        import networkx as nx

        graph = nx.MultiDiGraph()
        graph.add_nodes_from(self.outputs, kind="table")
        for edge in self.edges():
            graph.add_edge(edge.source, edge.target, key=(edge.type, edge.subtype), edge=edge)
        return graph


def latest_completes(events: Iterable[RunEvent]) -> dict[str, RunEvent]:
    """Return the latest COMPLETE event of each job name, whatever order the source sent them in.

    Latest by `RunEvent.order`: the parsed event time, then a stable key. Read events of our job namespaces only: every
    job namespace read is taken as one deployment's (see `read_events`).
    """
    latest: dict[str, RunEvent] = {}
    for event in events:
        if event.event_type != COMPLETE or event.raw is None:
            continue
        known = latest.get(event.job_name)
        if known is None or event.order >= known.order:
            latest[event.job_name] = event
    return latest


def _schema_names(dataset: dict[str, Any]) -> list[str]:
    facets = dataset.get("facets")
    schema = facets.get("schema") if type(facets) is dict else None
    fields = schema.get("fields") if type(schema) is dict else None
    if type(fields) is not list:
        return []
    return [f["name"] for f in fields if type(f) is dict and type(f.get("name")) is str]


UNTYPED = ((EdgeType.DIRECT, "UNKNOWN", False),)  # an input field with no transformations (older producers)


def _transformations(
    lineage: LineageGraph, entry: dict[str, Any]
) -> list[tuple[str, str, bool]] | tuple[tuple[str, str, bool], ...]:
    found = entry.get("transformations")
    if type(found) is not list:
        if found is not None:
            lineage.wrong_parts += 1
        return UNTYPED
    typed = []
    for t in found:
        kind = t.get("type") or EdgeType.DIRECT if type(t) is dict else None
        subtype = t.get("subtype") or "" if type(t) is dict else None
        if type(kind) is str and type(subtype) is str:  # a value of another JSON type is of the wrong shape
            typed.append((kind, subtype, t.get("masking") is True))
        else:
            lineage.wrong_parts += 1
    return typed or UNTYPED


def _datasets(lineage: LineageGraph, event: RunEvent, key: str, namespace: str | None) -> list[dict[str, Any]]:
    assert event.raw is not None
    found = event.raw.get(key)
    if type(found) is not list:
        if found is not None:
            lineage.wrong_parts += 1
        return []
    shaped = [d for d in found if type(d) is dict and type(d.get("name")) is str]
    lineage.wrong_parts += len(found) - len(shaped)
    return [d for d in shaped if namespace is None or d.get("namespace") == namespace]


def add_event(lineage: LineageGraph, event: RunEvent, namespace: str | None) -> None:
    """Add the tables, columns and edges one event states to `lineage`.

    Datasets of other namespaces are left out when `namespace` is given.
    """
    for dataset in _datasets(lineage, event, "inputs", namespace):
        table = lineage.table_ref(dataset["name"])
        if table is not None:
            for name in _schema_names(dataset):
                lineage.column_ref(table, name)
    for dataset in _datasets(lineage, event, "outputs", namespace):
        table = lineage.table_ref(dataset["name"])
        if table is None:
            continue
        lineage.outputs[table] = event.job_name
        facets = dataset.get("facets")
        found = facets.get("columnLineage") if type(facets) is dict else None
        facet: dict[str, Any] = found if type(found) is dict else {}
        fields: dict[str, Any] = facet["fields"] if type(facet.get("fields")) is dict else {}
        known = lineage.table_columns[table]
        for name in (*_schema_names(dataset), *fields):
            if name not in known:
                lineage.column_ref(table, name)
        for column, entry in fields.items():
            target = known[column]
            sources = entry.get("inputFields") if type(entry) is dict else None
            if type(sources) is not list:
                lineage.wrong_parts += 1
                continue
            for source in sources:
                _add_edges(lineage, event, namespace, source, target)
        rows = facet.get("dataset")
        if rows is not None and type(rows) is not list:
            lineage.wrong_parts += 1
        for source in rows if type(rows) is list else ():
            _add_edges(lineage, event, namespace, source, table)


def _add_edges(
    lineage: LineageGraph, event: RunEvent, namespace: str | None, source: Any, target: ColumnRef | TableRef
) -> None:
    if type(source) is not dict:
        lineage.wrong_parts += 1
        return
    name, column = source.get("name"), source.get("field")
    if type(name) is not str or type(column) is not str:
        lineage.wrong_parts += 1
        return
    if namespace is not None and source.get("namespace") != namespace:
        return
    known = lineage._columns.get(name)  # the build's fast path: one lookup per known column
    origin = known.get(column) if known is not None else None
    if origin is None:
        table = lineage.table_ref(name)
        if table is None:
            return
        origin = lineage.column_ref(table, column)
    for kind, subtype, masking in _transformations(lineage, source):
        lineage._add(Edge(origin, target, kind, subtype, masking, event.job_name, event.run_id, event.event_time))


def event_graph(event: RunEvent, namespace: str | None = None) -> LineageGraph:
    """Return the graph one COMPLETE event (holding its `raw` JSON) states.

    Its edges in the event's order, the columns it names per table and the tables it writes, as `build_graph` reads
    every event.
    """
    lineage = LineageGraph()
    add_event(lineage, event, namespace)
    return lineage


def build_graph(events: Iterable[RunEvent], namespace: str | None = None) -> LineageGraph:
    """Return the graph of the latest COMPLETE event of every job.

    Datasets of other namespaces are left out when `namespace` is given, and so are datasets whose name names no table
    (no namespace part).
    """
    lineage = LineageGraph()
    lineage.jobs = latest_completes(events)
    for event in lineage.jobs.values():
        add_event(lineage, event, namespace)
    return lineage
