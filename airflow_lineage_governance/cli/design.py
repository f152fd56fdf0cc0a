"""The CLI's `design` and `diff` commands.

The designed lineage of a DAGs folder, and where it differs from what the lineage events say ran.

    lineage-governance design DAGS_FOLDER [--logical-date D] [--catalog FOLDER] [--json]
    lineage-governance diff DAGS_FOLDER --events SOURCE [--as-of TIME] [--dag DAG_ID] [--json]

`diff` exits 1 when design and runtime differ (as `check` does on findings), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from airflow_lineage_governance import settings
from airflow_lineage_governance.graph.design import Design, short
from airflow_lineage_governance.graph.diff import DESIGNED_NOT_OBSERVED, OBSERVED_NOT_DESIGNED, DesignDiff


def read_design(folder: str | Path, catalog_folder: str | Path, logical_date: datetime) -> Design:
    """Return the design of the DAGs in `folder`, each IcebergSqlOperator's SQL rendered for `logical_date`.

    Each statement is read against the schema of the local catalog in `catalog_folder`. Raises BadInput for a missing
    catalog and DagsFolderError for a missing folder.
    """
    from airflow_lineage_governance.cli.common import existing_catalog
    from airflow_lineage_governance.design.dagbag import catalog_design

    return catalog_design(folder, existing_catalog(catalog_folder), logical_date)


def design_lines(design: Design) -> list[str]:
    """Return the design as the text output prints it.

    Per task its target, SQL hash, dataset and column edges, or its one-sentence reason; then the tasks design cannot
    read and the files that could not be imported.
    """
    lines = []
    for job, task in sorted(design.tasks.items()):
        if not task.readable:
            lines.append(f"{job}: its lineage cannot be read: {task.problem}")
            continue
        lines.append(
            f"{job} writes {task.target} (sql {short(task.sql_hash)}), reads "
            f"{', '.join(map(str, task.sources)) or 'no table'}"
        )
        lines.extend(
            f"  {edge.line()}"
            for edge in sorted(task.edges, key=lambda e: (str(e.target), str(e.source), e.type, e.subtype))
        )
    readable = len(design.readable())
    lines.append(
        f"{readable} tasks designed, {len(design.tasks) - readable} unreadable, logical date "
        f"{design.logical_date}; tasks design cannot read (not IcebergSqlOperator): "
        f"{', '.join(sorted(design.other_tasks)) or 'none'}"
    )
    lines.extend(f"{file}: not imported ({error})" for file, error in sorted(design.import_errors.items()))
    return lines


def diff_lines(diff: DesignDiff) -> list[str]:
    """Return the diff as the text output prints it.

    SQL hash mismatches, then each side's jobs (their reason, then their edges) and tables, then the jobs not compared,
    then the count.
    """
    lines = [
        f"Design against runtime as of {diff.as_of}: {diff.count} differences over {len(diff.compared)} designed tasks"
    ]
    if diff.sql_mismatches:
        lines.append("SQL hash mismatches (the deployed SQL is not what ran):")
        lines.extend(f"  {m.sentence()}" for m in diff.sql_mismatches)
    for kind, title in (
        (DESIGNED_NOT_OBSERVED, "Designed, not observed"),
        (OBSERVED_NOT_DESIGNED, "Observed, not designed"),
    ):
        jobs, tables = diff.of_kind(kind), diff.tables_of_kind(kind)
        if not (jobs or tables):
            continue
        lines.append(f"{title}:")
        for difference in jobs:
            lines.append(f"  {difference.job}: {difference.reason}")
            lines.extend(f"    {edge.line()}" for edge in difference.dataset_edges)
            lines.extend(f"    {edge.line()}" for edge in difference.column_edges)
        lines.extend(f"  table {t.table}: {t.reason}" for t in tables)
    if diff.declared:
        lines.append("Declared, not designed (a person's statement of a job design cannot read; no difference):")
        for difference in diff.declared:
            lines.append(f"  {difference.job}: {difference.reason}")
            lines.extend(f"    {edge.line()}" for edge in difference.dataset_edges)
    if diff.not_compared:
        lines.append("Not compared (the design cannot be read):")
        lines.extend(f"  {job}: {why}" for job, why in sorted(diff.not_compared.items()))
    if not diff.count:
        lines.append("Design and runtime agree.")
    return lines


def _logical_date(args: argparse.Namespace) -> datetime:
    from airflow_lineage_governance.templating import parse_logical_date, start_of_today

    return parse_logical_date(args.logical_date) if args.logical_date else start_of_today()


def cmd_design(args: argparse.Namespace) -> int:
    """Print the designed lineage of every IcebergSqlOperator task in the DAGs folder."""
    from airflow_lineage_governance.cli.common import say

    design = read_design(args.dags_folder, args.catalog, _logical_date(args))
    if args.json:
        print(json.dumps(design.to_dict(), indent=2))
        return 0
    for line in design_lines(design):
        say(line)
    return 0


def _as_of(args: argparse.Namespace) -> datetime:
    from airflow_lineage_governance.cli.common import BadInput
    from airflow_lineage_governance.graph.events import parse_time

    if args.as_of is None:
        return datetime.now(UTC)
    moment = parse_time(args.as_of)
    if moment is None:
        raise BadInput(f"--as-of {args.as_of!r}: not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.")
    return moment


def cmd_diff(args: argparse.Namespace) -> int:
    """Print where the design of the DAGs folder and the runtime as of --as-of differ; exit 1 on any."""
    from airflow_lineage_governance.cli.common import governance_file, open_governance, say
    from airflow_lineage_governance.graph.diff import design_diff

    as_of = _as_of(args)
    args.rules = governance_file(args.rules, "lineage.toml", "--rules")
    args.metadata = governance_file(args.metadata, "metadata.toml", "--metadata")
    with open_governance(args) as governance:
        observed, declared = governance.observed_jobs(as_of), governance.declared_jobs()
        read_from = (
            governance.read.to_dict() if governance.read is not None else {"store": governance.store.engine.description}
        )
    design = read_design(args.dags_folder, args.catalog, _logical_date(args))
    diff = design_diff(design, observed, as_of.isoformat(), args.dag or None, declared)
    if args.json:
        data: dict[str, Any] = diff.to_dict()
        data["events"] = read_from
        print(json.dumps(data, indent=2))
    else:
        for line in diff_lines(diff):
            say(line)
    return 1 if diff.count else 0


def add_design_commands(commands: Any) -> None:
    """Add the `design` and `diff` subcommands to the CLI's subparsers."""
    catalog_help = (
        f"a local Iceberg catalog folder whose schemas the SQL is read against (default: "
        f"[{settings.SECTION}] catalog_folder)"
    )
    date_help = "the logical date the SQL templates are rendered for, ISO 8601 (default: midnight UTC today)"
    design = commands.add_parser("design", help="the designed lineage of every IcebergSqlOperator in a DAGs folder")
    design.add_argument("dags_folder", help="the DAGs folder (read with Airflow's DagBag; nothing runs)")
    design.add_argument("--catalog", help=catalog_help)
    design.add_argument("--logical-date", help=date_help)
    design.add_argument("--json", action="store_true")
    design.set_defaults(run=cmd_design)

    diff = commands.add_parser("diff", help="where the design of a DAGs folder and the lineage events differ")
    diff.add_argument("dags_folder", help="the DAGs folder (read with Airflow's DagBag; nothing runs)")
    diff.add_argument(
        "--events", help=f"an OpenLineage JSONL file or a Marquez URL (default: [{settings.SECTION}] events)"
    )
    diff.add_argument(
        "--store",
        metavar="LOCATION",
        help="read the runtime from the lineage store: a DuckDB file or a postgresql:// URL (default, "
        f"when no --events is given and [{settings.SECTION}] events is unset: "
        f"[{settings.SECTION}] store_conn_id, else store)",
    )
    diff.add_argument(
        "--as-of", help="compare with each job's latest COMPLETE at or before this ISO 8601 time (default: now)"
    )
    diff.add_argument(
        "--dag",
        action="append",
        metavar="DAG_ID",
        help="compare only this DAG's tasks and jobs (repeatable; default: every DAG and job)",
    )
    diff.add_argument("--catalog", help=catalog_help)
    diff.add_argument("--logical-date", help=date_help)
    diff.add_argument(
        "--rules",
        help=f"lineage.toml, for the dataset namespace (default: lineage.toml in "
        f"[{settings.SECTION}] governance_dir, else in ./governance)",
    )
    diff.add_argument(
        "--metadata",
        help=f"metadata.toml, for the declared lineage (default: metadata.toml in "
        f"[{settings.SECTION}] governance_dir, else in ./governance)",
    )
    diff.add_argument(
        "--job-namespace",
        action="append",
        metavar="NAMESPACE",
        help="read only the events of this OpenLineage job namespace (repeatable; `*`: every "
        "namespace; default: [openlineage] namespace when set, else every namespace)",
    )
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(run=cmd_diff)
