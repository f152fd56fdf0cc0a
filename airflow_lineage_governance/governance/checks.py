"""The governance checks, run by one function for the nightly DAG and the CLI alike.

Runs with no COMPLETE event (from the sensor's verdict), declared classes lower than lineage proposes, tables no lineage
accounts for, and written tables with no metadata; and the blast-radius weight of a table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.governance import findings
from airflow_lineage_governance.governance.classify import Proposal, understated
from airflow_lineage_governance.governance.config import Metadata, Rules
from airflow_lineage_governance.governance.findings import Finding
from airflow_lineage_governance.graph.build import LineageGraph
from airflow_lineage_governance.refs import ColumnRef, TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.governance.nightly_lineage import NightlyLineage


def unaccounted(catalog_tables: Iterable[TableRef | str], metadata: Metadata, lineage: LineageGraph) -> list[Finding]:
    """Return a finding for each catalog table that is neither a declared source nor the output of a job.

    A table is a ref or its dotted name; a source is declared in metadata.toml. Sorted by name. Raises InvalidNameError
    for a name of no table.
    """
    sources = {name for name, table in metadata.tables.items() if table.source}
    tables = {t if isinstance(t, TableRef) else TableRef.parse(t) for t in catalog_tables}
    return [
        findings.unaccounted_table(t) for t in sorted(tables, key=str) if t not in sources and t not in lineage.outputs
    ]


def tables_without_metadata(
    lineage: LineageGraph, metadata: Metadata, proposals: Mapping[ColumnRef, Proposal]
) -> list[Finding]:
    """Return a finding for every written table with no metadata, sorted by table name.

    Each finding holds the class proposed for each of the table's columns.
    """
    found = []
    for table in sorted(lineage.outputs, key=lineage.name_of):
        if table in metadata.tables:
            continue
        columns = {c.field: proposals[c].proposed for c in lineage.columns_of(table) if c in proposals}
        found.append(findings.missing_metadata(table, columns))
    return found


def understated_classes(proposals: Mapping[ColumnRef, Proposal], rules: Rules) -> list[Finding]:
    """Return a finding for every written column whose declared class is lower than lineage proposes."""
    found = []
    for p in understated(proposals, rules):
        assert p.declared is not None and p.proposed is not None and p.decided_by is not None
        edge = p.decided_by
        found.append(
            findings.understated_classification(p.column, p.declared, p.proposed, edge.source, edge.type, edge.subtype)
        )
    return found


def run_checks(
    governance: NightlyLineage,
    catalog_tables: Iterable[TableRef | str],
    verdict: Mapping[str, Any] | None = None,
    lineage_problem: str | None = None,
) -> list[Finding]:
    """Return every finding, in the report's order.

    With the sensor's `verdict`, an unfinished target run and the tasks with no COMPLETE event first; then understated
    classes, unaccounted tables and tables with no metadata. With `lineage_problem` (the sentence saying why the event
    source could not be read, or was read only in part), those three checks would answer from missing lineage: one
    lineage_unavailable finding takes their place. Raises ValueError when the verdict holds a finding of an unknown
    kind.
    """
    found: list[Finding] = []
    if verdict is not None:
        if not verdict.get("finished"):
            found.append(
                findings.target_run_unfinished(
                    verdict.get("target_dag_id"), verdict.get("target_run_id"), verdict.get("backend_problem")
                )
            )
        found.extend(Finding.from_dict(m) for m in verdict.get("missing") or [])
    if lineage_problem is not None:
        found.append(findings.lineage_unavailable(governance.report.source, lineage_problem))
        return found
    found.extend(understated_classes(governance.proposals, governance.rules))
    found.extend(unaccounted(catalog_tables, governance.metadata, governance.graph))
    found.extend(tables_without_metadata(governance.graph, governance.metadata, governance.proposals))
    return found
