"""The lineage summary an IcebergSqlOperator writes to its task log, for a person reading the Airflow UI."""

from __future__ import annotations

from airflow_lineage_governance.iceberg.run import StatementRun
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage import ColumnLineage
from airflow_lineage_governance.lineage.model import Dependency


def _dependency(d: Dependency) -> str:
    masked = ", masked" if d.masking else ""
    return f"{d.source} ({d.type} {d.subtype}{masked})"


def lineage_summary(lineage: ColumnLineage, run: StatementRun) -> list[str]:
    """Returns the summary lines: target, each output column with its sources, the rows-shaping inputs,
    the snapshots read and written, and the rows written."""
    write = run.write
    verb = "appended to" if lineage.kind is StatementKind.INSERT else "replaced" if write.replaced else "created"
    lines = [f"Lineage of {lineage.target} ({lineage.kind}): {len(lineage.columns)} columns, "
             f"{lineage.edge_count} edges"]
    width = max((len(c.name) for c in lineage.columns), default=0)
    for column in lineage.columns:
        sources = ", ".join(_dependency(d) for d in column.inputs) or "no source column (constant or count)"
        lines.append(f"  {column.name.ljust(width)} <- {sources}")
    shaping = ", ".join(_dependency(d) for d in lineage.rows) or "none"
    lines.append(f"  every row shaped by: {shaping}")
    for read in run.reads:
        how = read.path + (f" ({read.reason})" if read.reason else "")
        lines.append(f"  read {read.table} at snapshot {read.snapshot_id} via {how}")
    if write.already_written:
        lines.append(f"  {write.table}: this task instance already wrote snapshot {write.snapshot_id} "
                     f"({write.rows} rows); nothing appended again")
    else:
        lines.append(f"  {verb} {write.table}: {write.rows} rows, snapshot {write.snapshot_id}")
    return lines
