"""The lineage summary an IcebergSqlOperator writes to its task log, and the value it returns (XCom).

The summary is for a person reading the Airflow UI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_lineage_governance.iceberg.run import StatementRun
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage import ColumnLineage
from airflow_lineage_governance.lineage.model import Dependency


def _dependency(d: Dependency) -> str:
    masked = ", masked" if d.masking else ""
    return f"{d.source} ({d.type} {d.subtype}{masked})"


def _verb(lineage: ColumnLineage, run: StatementRun) -> str:
    write = run.write
    if lineage.kind.reads_target:
        return "rewrote"
    if lineage.kind is StatementKind.INSERT:
        return "replaced partitions of" if write.replaced else "appended to"
    return "replaced" if write.replaced else "created"


def _written(lineage: ColumnLineage, run: StatementRun) -> list[str]:
    """Return the lines that say what the write did to the table."""
    write = run.write
    if write.untouched:
        return [
            f"  {write.table} already exists, and CREATE TABLE IF NOT EXISTS left it as it is: nothing was "
            f"written (snapshot {write.snapshot_id}), so no column lineage reached it"
        ]
    counts = write.counts
    changes = (
        (
            f" ({counts.inserted} inserted, {counts.updated} updated, {counts.deleted} deleted; "
            f"{counts.files_rewritten} of {counts.files_in_table} data files rewritten)"
        )
        if counts
        else ""
    )
    if write.already_written:
        lines = [
            f"  {write.table}: this task instance already wrote snapshot {write.snapshot_id} "
            f"({write.rows} rows{changes}); nothing written again"
        ]
    elif counts is not None and counts.changed == 0:
        lines = [
            f"  {write.table}: the {lineage.kind} changed no row; nothing was written (snapshot "
            f"{write.snapshot_id} kept)"
        ]
    else:
        lines = [f"  {_verb(lineage, run)} {write.table}: {write.rows} rows{changes}, snapshot {write.snapshot_id}"]
    if write.partitions:
        lines.append(f"  partitions written: {', '.join(write.partitions)}")
    if write.earlier_files_removed:
        lines.append(
            f"  removed {write.earlier_files_removed} files that an earlier try of this task instance wrote "
            "under the table's location and never committed"
        )
    return lines


def lineage_summary(lineage: ColumnLineage, run: StatementRun) -> list[str]:
    """Return the summary lines.

    Target, each output column with its sources, the rows-shaping inputs, the snapshots read and written, the rows
    written (inserted, updated, deleted for a MERGE, UPDATE or DELETE) and the partitions written.
    """
    lines = [
        f"Lineage of {lineage.target} ({lineage.kind}): {len(lineage.columns)} columns, {lineage.edge_count} edges"
    ]
    if run.write.untouched:
        lines = [f"Lineage of {lineage.target} ({lineage.kind}): none, as nothing was written"]
        return lines + _written(lineage, run)
    width = max((len(c.name) for c in lineage.columns), default=0)
    for column in lineage.columns:
        sources = ", ".join(_dependency(d) for d in column.inputs) or "no source column (constant or count)"
        lines.append(f"  {column.name.ljust(width)} <- {sources}")
    shaping = ", ".join(_dependency(d) for d in lineage.rows) or "none"
    lines.append(f"  every row shaped by: {shaping}")
    for read in run.reads:
        how = read.path + (f" ({read.reason})" if read.reason else "")
        lines.append(f"  read {read.table} at snapshot {read.snapshot_id} via {how}")
    return lines + _written(lineage, run)


def run_result(run: StatementRun) -> dict[str, Any]:
    """Return the task's XCom value.

    The table, snapshot id, rows, whether this task instance had already written it, whether anything was written, the
    partitions written, and for a MERGE, UPDATE or DELETE the rows inserted, updated and deleted, and the rows its
    RETURNING gave (`returning`: columns and rows).
    """
    write = run.write
    result: dict[str, Any] = {
        "table": str(write.table),
        "snapshot_id": write.snapshot_id,
        "rows": write.rows,
        "already_written": write.already_written,
        "written": not write.untouched,
        "partitions": list(write.partitions),
    }
    if write.counts is not None:
        result.update(inserted=write.counts.inserted, updated=write.counts.updated, deleted=write.counts.deleted)
    if run.returned is not None:
        result["returning"] = run.returned.as_json()
    return result


OVERHEAD = "Operator time of this try"
"""How the task log line with the operator's own time per phase begins (benchmarks/distributed_overhead.py reads
it)."""


def phase_seconds(run: StatementRun) -> dict[str, float]:
    """Return the seconds a statement run took to run and to commit.

    Args:
        run: The statement run.

    Returns:
        The seconds of `run` (pin the reads and run the statement on DuckDB) and of `commit` (write the data
        files and commit them).
    """
    timings = run.timings
    return {"run": timings.get("read", 0.0) + timings.get("query", 0.0), "commit": timings.get("write", 0.0)}


def overhead_line(seconds: Mapping[str, float], phases: Sequence[str]) -> str:
    """Return the task log line that gives the time of each phase measured, in milliseconds.

    Args:
        seconds: The seconds each phase took.
        phases: The phases shown, in order; a phase not measured is left out.

    Returns:
        The line, e.g. `Operator time of this try: parse 1.2 ms, lineage 40.3 ms`.
    """
    shown = ", ".join(f"{phase} {seconds[phase] * 1000:.1f} ms" for phase in phases if phase in seconds)
    return f"{OVERHEAD}: {shown}"
