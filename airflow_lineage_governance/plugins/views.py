"""What the UI pages show, as plain data, and the pictures of them.

The data is read from an OpenLineage event, an impact answer, or a governance run (the store's, or a report file's).
No Airflow here: the app feeds these functions what it read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.graph.answers import Impact
from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.kinds import EdgeType, FindingKind, Severity
from airflow_lineage_governance.plugins.svg import Box, Link, draw
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.store.governance_runs import GovernanceRun

Leaving = Callable[[Sequence[ColumnRef]], Mapping[ColumnRef, Sequence[Edge]]]
"""Returns the edges that leave each of some columns."""
EVERY_ROW = "(every row)"
MAX_PICTURED = 400
"""The most columns an impact picture draws; the tables list every column all the same."""


@dataclass(frozen=True)
class DependencyView:
    """One input of an output column (or of every row): the source column and how it flows."""

    source: str
    type: str
    subtype: str
    masking: bool = False
    description: str = ""

    def line(self) -> str:
        """Return `crm.learners.email (DIRECT IDENTITY)`, `, masked` added when masked."""
        return f"{self.source} ({self.type} {self.subtype}{', masked' if self.masking else ''})"


@dataclass
class OutputLineage:
    """The lineage one output dataset of an event states."""

    table: str
    columns: list[tuple[str, list[DependencyView]]] = field(default_factory=list)
    rows: list[DependencyView] = field(default_factory=list)
    snapshot: str | None = None
    row_count: int | None = None

    @property
    def edge_count(self) -> int:
        """Returns the number of edges: one per input field and transformation, of columns and rows."""
        return sum(len(deps) for _, deps in self.columns) + len(self.rows)


@dataclass
class TaskLineage:
    """What a task's COMPLETE event says: its outputs' lineage and the snapshots it read."""

    outputs: list[OutputLineage] = field(default_factory=list)
    reads: list[tuple[str, str | None]] = field(default_factory=list)
    event_time: str = ""


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _text(value: Any) -> str:
    return value if type(value) is str else ""


def _dependencies(entry: Any) -> list[DependencyView]:
    found = []
    entry = _dict(entry)
    source = f"{_text(entry.get('name'))}.{_text(entry.get('field'))}"
    for t in _list(entry.get("transformations")) or [{}]:
        t = _dict(t)
        found.append(
            DependencyView(
                source,
                _text(t.get("type")) or EdgeType.DIRECT,
                _text(t.get("subtype")) or "UNKNOWN",
                t.get("masking") is True,
                _text(t.get("description")),
            )
        )
    return found


def _version(dataset: dict[str, Any]) -> str | None:
    version = _dict(_dict(dataset.get("facets")).get("version")).get("datasetVersion")
    return str(version) if type(version) in (str, int) else None


def task_lineage(event: Mapping[str, Any]) -> TaskLineage:
    """Returns the lineage a run event states; parts of the wrong JSON shape are left out, never raised."""
    found = TaskLineage(event_time=_text(event.get("eventTime")))
    for dataset in map(_dict, _list(event.get("inputs"))):
        if _text(dataset.get("name")):
            found.reads.append((_text(dataset.get("name")), _version(dataset)))
    for dataset in map(_dict, _list(event.get("outputs"))):
        facet = _dict(_dict(dataset.get("facets")).get("columnLineage"))
        if not _text(dataset.get("name")) or not facet:
            continue
        rows = _dict(_dict(dataset.get("outputFacets")).get("outputStatistics")).get("rowCount")
        output = OutputLineage(
            _text(dataset.get("name")), snapshot=_version(dataset), row_count=rows if type(rows) is int else None
        )
        for name, entry in _dict(facet.get("fields")).items():
            deps = [d for source in _list(_dict(entry).get("inputFields")) for d in _dependencies(source)]
            output.columns.append((str(name), deps))
        output.rows = [d for source in _list(facet.get("dataset")) for d in _dependencies(source)]
        found.outputs.append(output)
    return found


def _split(name: str) -> tuple[str, str]:
    try:
        column = ColumnRef.parse(name)
        return str(column.table), column.field
    except ValueError:
        return "", name


def lineage_picture(output: OutputLineage) -> str:
    """Return the SVG of one output's lineage.

    Input columns (boxes by table) on the left, the output's columns and `every row` on the right, one curve per edge.
    """
    target = Box(("out", output.table), output.table, depth=1)
    sources: dict[str, Box] = {}
    links: list[Link] = []

    def add(dep: DependencyView, row: int) -> None:
        table, column = _split(dep.source)
        box = sources.setdefault(table, Box(("in", table), table or "(no table)"))
        links.append(
            Link(
                (box.key, box.row(column)),
                (target.key, row),
                dep.type,
                dep.subtype,
                dep.masking,
                title=f"{dep.line()} -> {target.rows[row]}",
            )
        )

    for name, deps in output.columns:
        row = target.row(name)
        for dep in deps:
            add(dep, row)
    if output.rows:
        row = target.row(EVERY_ROW)
        for dep in output.rows:
            add(dep, row)
    boxes = [*sorted(sources.values(), key=lambda b: b.title), target]
    return draw(boxes, links, f"column lineage of {output.table}")


def _table_of(node: ColumnRef | TableRef) -> TableRef:
    return node.table if isinstance(node, ColumnRef) else node


def _depths(impact: Impact, edges: Sequence[Edge]) -> dict[TableRef, int]:
    depths = {impact.column.table: 0}
    for _ in range(len(edges) + 1):  # relax until stable (a cycle stops at the bound)
        changed = False
        for edge in edges:
            source, target = edge.source.table, _table_of(edge.target)
            if source in depths and source != target and depths.get(target, -1) < depths[source] + 1:
                depths[target] = depths[source] + 1
                changed = True
        if not changed or len(depths) > MAX_PICTURED:
            break
    return depths


def impact_picture(impact: Impact, leaving: Leaving) -> tuple[str, int]:
    """Return the SVG of the subgraph a change to the column reaches, and the number of columns left out of it.

    Tables are boxes left to right by depth; the edges of the paths that reach each column are highlighted, other edges
    among reached columns faint. Columns beyond MAX_PICTURED are left out of the picture.

    Args:
        impact: The impact pictured.
        leaving: Returns the edges that leave each of some columns at the impact's time (one question for all).

    Returns:
        The SVG, and how many reached columns it leaves out.
    """
    shown = impact.columns_reached[:MAX_PICTURED]
    path_edges = list(dict.fromkeys(e for c in shown for e in impact.paths[c]))
    on_paths = set(path_edges)
    reached = {impact.column, *shown}
    out = leaving(sorted(reached, key=str)) if len(reached) <= MAX_PICTURED else {}
    other = [
        e
        for c in sorted(reached, key=str)
        for e in out.get(c, ())
        if (e.target in reached or (isinstance(e.target, TableRef) and e.target in impact.rows)) and e not in on_paths
    ]
    depths = _depths(impact, [*path_edges, *other])
    boxes: dict[TableRef, Box] = {}

    def row(node: ColumnRef | TableRef) -> tuple[TableRef, int]:
        table = _table_of(node)
        box = boxes.setdefault(table, Box(table, str(table), depth=depths.get(table, 0)))
        return table, box.row(node.field if isinstance(node, ColumnRef) else EVERY_ROW)

    start = row(impact.column)
    boxes[start[0]].marked.add(start[1])
    for column in shown:
        place = row(column)
        boxes[place[0]].marked.add(place[1])
    links = [
        Link(
            row(e.source),
            row(e.target),
            str(e.type),
            str(e.subtype),
            e.masking,
            highlighted,
            f"{e.source} -> {e.target} ({e.type} {e.subtype})",
        )
        for edges, highlighted in ((path_edges, True), (other, False))
        for e in edges
    ]
    ordered = sorted(boxes.values(), key=lambda b: (b.depth, b.title))
    return draw(ordered, links, f"impact of {impact.column}"), len(impact.columns_reached) - len(shown)


@dataclass
class ReportLine:
    """One governance run as the Governance page lists it.

    `checked_at` is when the run checked (the store's record), else when its report file was written; `target_dag_id`
    the DAG it checked.
    """

    dag_id: str
    run_id: str
    logical_date: str
    errors: int
    warnings: int
    coverage: dict[str, Any]
    checked_at: str = ""

    @property
    def target_dag_id(self) -> str:
        """Return the DAG the run checked, as its coverage names it ("" when it names none)."""
        return _text(self.coverage.get("target_dag_id"))


def stored_line(run: GovernanceRun) -> ReportLine:
    """Return the listing line of a governance run the lineage store keeps."""
    return ReportLine(
        run.dag_id,
        run.run_id,
        run.logical_date,
        run.errors,
        run.warnings,
        dict(run.coverage),
        moment(run.checked_at),
    )


def moment(at: datetime) -> str:
    """Return an instant as the pages show it: `2030-01-31 03:00:00 UTC`."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def report_line(report: Mapping[str, Any]) -> ReportLine:
    """Return the listing line of a governance report read from its JSON (unknown kinds count as errors)."""
    findings = [_dict(f) for f in _list(report.get("findings"))]
    warnings = sum(1 for f in findings if _severity(f.get("kind")) is Severity.WARNING)
    return ReportLine(
        _text(report.get("dag_id")),
        _text(report.get("run_id")),
        _text(report.get("logical_date")),
        len(findings) - warnings,
        warnings,
        _dict(report.get("coverage")),
    )


def _severity(kind: Any) -> Severity:
    try:
        return FindingKind(kind).severity
    except ValueError:
        return Severity.ERROR


def finding_subject(finding: Mapping[str, Any]) -> tuple[str, TableRef | None]:
    """Return what a finding is about as text (its column, table or job) and the table whose owner answers for it.

    The table is None when the finding names no table.
    """
    for key in ("column", "table"):
        text = _text(finding.get(key))
        if text:
            try:
                ref = ColumnRef.parse(text).table if key == "column" else TableRef.parse(text)
            except ValueError:
                ref = None
            return text, ref
    return _text(finding.get("job")) or _text(finding.get("dag_id")) or "", None
