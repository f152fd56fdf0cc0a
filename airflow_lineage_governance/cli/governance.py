"""The CLI's governance commands: `propose`, `check`, `gate` and `findings`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli.common import (
    FINDINGS,
    add_governance_options,
    add_template_options,
    add_time_options,
    as_of_and_window,
    existing_catalog,
    open_governance,
    say,
    schema_from,
    statement,
)
from airflow_lineage_governance.cli.history import add_store_option
from airflow_lineage_governance.lineage import column_lineage


def cmd_propose(args: argparse.Namespace) -> int:
    """Print the proposed class of every written column (as of --as-of).

    A class decided through a stale job's edge says so.
    """
    at, window = as_of_and_window(args)
    with open_governance(args) as governance:
        proposals, stale = governance.proposals(at), set(governance.stale_jobs(at, window))
    if args.json:
        print(
            json.dumps(
                [
                    {**p.to_dict(), "stale": bool(p.decided_by and p.decided_by.job in stale)}
                    for p in proposals.values()
                ],
                indent=2,
            )
        )
        return 0
    for proposal in proposals.values():
        decided = proposal.decided_by
        why = f"from {decided.source} ({decided.type} {decided.subtype})" if decided else "no classified input"
        declared = f", declared {proposal.declared}" if proposal.declared else ""
        mark = " [STALE]" if decided and decided.job in stale else ""
        say(f"{proposal.column}: {proposal.proposed or 'unknown'}{declared}, {why}{mark}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Prints understated classes, unaccounted tables and tables with no metadata; exit 1 on any."""
    from airflow_lineage_governance.iceberg.catalog import table_names

    at, window = as_of_and_window(args)
    catalog = existing_catalog(args.catalog)
    with open_governance(args) as governance:
        findings, stale, read = (
            governance.findings(table_names(catalog), at),
            governance.stale_jobs(at, window),
            governance.report(),
        )
    if args.json:
        print(
            json.dumps(
                {
                    "findings": [f.to_dict() for f in findings],
                    "events": read.to_dict(),
                    "stale_jobs": stale,
                },
                indent=2,
            )
        )
    else:
        for finding in findings:
            say(finding.line())
        if stale:
            say(f"stale (no COMPLETE within --active-since {args.active_since}): {', '.join(stale)}")
        say(
            f"{len(findings)} findings; events read {read.events}, malformed {read.malformed + read.truncated}"
            + (f", of other job namespaces {read.other_namespace} (left out)" if read.other_namespace else "")
        )
    return FINDINGS if findings else 0


def cmd_gate(args: argparse.Namespace) -> int:
    """Print the impact of each column a SQL change alters or remove; exit 1 above the threshold."""
    from airflow_lineage_governance.governance.gate import gate

    schema = schema_from(args)
    before = column_lineage(statement(Path(args.before), args), schema)
    after_path = Path(args.after)
    after = column_lineage(statement(after_path, args), schema) if after_path.exists() else None
    with open_governance(args) as governance:
        changes, threshold = gate(governance, before, after), governance.rules.gate_threshold
    blocked = [c for c in changes if c.score > threshold]
    if args.json:
        print(
            json.dumps(
                {"changes": [c.to_dict() for c in changes], "threshold": threshold, "blocked": bool(blocked)}, indent=2
            )
        )
    else:
        for change in changes:
            reached = len(change.impact.columns_reached) if change.impact else 0
            say(f"{change.column} {change.change}: {reached} columns downstream, score {change.score:g}")
        verdict = f"BLOCKED: {len(blocked)} above the threshold {threshold:g}" if blocked else "passes"
        say(f"{len(changes)} columns changed; {verdict}")
    return FINDINGS if blocked else 0


def cmd_findings(args: argparse.Namespace) -> int:
    """Print what the lineage store keeps of the governance runs: the runs, one run's findings, or a subject's."""
    from airflow_lineage_governance.store.errors import StoreError
    from airflow_lineage_governance.store.lineage_store import LineageStore

    with LineageStore.open(settings.store_location(args.store), read_only=True) as store:
        if args.subject:
            history = store.subject_history(args.subject, args.limit)
            if args.json:
                print(json.dumps([_run_dict(h.run) | {"finding": _finding_dict(h.finding)} for h in history], indent=2))
                return 0
            for entry in history:
                say(f"{entry.run.key} ({entry.run.logical_date}): {_finding_line(entry.finding)}")
            say(f"{len(history)} findings about {args.subject} in the lineage store {store.engine.description}")
            return 0
        if args.run_id:
            dag_id = args.dag_id or _latest_dag(store)
            run = store.governance_run(dag_id, args.run_id) if dag_id else None
            if run is None:
                raise StoreError(
                    f"the lineage store {store.engine.description} keeps no governance run {args.run_id}"
                    + (f" of {dag_id}" if dag_id else "")
                    + "; `lineage-governance findings` lists the runs it keeps"
                )
            found = store.governance_findings(run.dag_id, run.run_id)
            if args.json:
                print(json.dumps(_run_dict(run) | {"findings": [_finding_dict(f) for f in found]}, indent=2))
            else:
                for finding in found:
                    say(_finding_line(finding))
                say(f"{_run_line(run)}; {len(found)} findings")
            return FINDINGS if run.errors else 0
        runs = store.governance_runs(args.dag_id, args.limit)
        if args.json:
            print(json.dumps([_run_dict(run) for run in runs], indent=2))
            return 0
        for run in runs:
            say(_run_line(run))
        say(f"{len(runs)} governance runs in the lineage store {store.engine.description}")
    return 0


def _latest_dag(store: Any) -> str | None:
    latest = store.latest_governance_run()
    return str(latest.dag_id) if latest is not None else None


def _run_line(run: Any) -> str:
    source = f", read from {run.source}" if run.source else ""
    return (
        f"{run.key} (logical date {run.logical_date}, checked {run.checked_at.isoformat()}): {run.errors} errors, "
        f"{run.warnings} warnings{source}"
    )


def _run_dict(run: Any) -> dict[str, Any]:
    return {
        "dag_id": run.dag_id,
        "run_id": run.run_id,
        "logical_date": run.logical_date,
        "checked_at": run.checked_at.isoformat(),
        "source": run.source,
        "errors": run.errors,
        "warnings": run.warnings,
        "coverage": run.coverage,
    }


def _finding_line(finding: Any) -> str:
    return f"{finding.severity} {finding.kind} {finding.subject}: {finding.message}"


def _finding_dict(finding: Any) -> dict[str, Any]:
    return {
        "severity": finding.severity,
        "kind": finding.kind,
        "subject_kind": finding.subject_kind,
        "subject": finding.subject,
        "message": finding.message,
        "fields": finding.fields,
    }


def add_governance_commands(commands: Any) -> None:
    """Add the `propose`, `check`, `findings` and `gate` commands to the CLI's subcommands.

    Args:
        commands: The root parser's subparsers.
    """
    command = commands.add_parser("propose", help="proposed classes of every written column")
    add_governance_options(command)
    add_time_options(command)
    add_store_option(command)
    command.set_defaults(run=cmd_propose)
    command = commands.add_parser("check", help="understated classes, unaccounted tables, missing metadata")
    add_governance_options(command)
    add_time_options(command)
    command.add_argument(
        "--catalog", help=f"a local Iceberg catalog folder (default: [{settings.SECTION}] catalog_folder)"
    )
    add_store_option(command)
    command.set_defaults(run=cmd_check)
    command = commands.add_parser("findings", help="the governance runs the lineage store keeps and their findings")
    command.add_argument(
        "--store",
        metavar="LOCATION",
        help=f"a DuckDB file or a postgresql:// URL (default: [{settings.SECTION}] store_conn_id, else store)",
    )
    command.add_argument("--dag-id", help="the governance DAG whose runs are listed (default: every one)")
    command.add_argument("--run-id", help="print this governance run's findings (exit 1 when it found errors)")
    command.add_argument("--subject", help="print the findings about a column, table, job or source, latest first")
    command.add_argument("--limit", type=int, default=50, help="the most runs or findings printed (default: 50)")
    command.add_argument("--json", action="store_true")
    command.set_defaults(run=cmd_findings)
    command = commands.add_parser("gate", help="impact of the columns a SQL change alters (for CI)")
    command.add_argument("--before", required=True, help="the pipeline's SQL before the change")
    command.add_argument("--after", required=True, help="the SQL after it (a missing file: the pipeline is removed)")
    gate_schema = command.add_mutually_exclusive_group()
    gate_schema.add_argument(
        "--catalog", help=f"a local Iceberg catalog folder (default: [{settings.SECTION}] catalog_folder)"
    )
    gate_schema.add_argument("--schema", help="a JSON file {db: {table: {column: type}}}")
    add_template_options(command)
    add_governance_options(command)
    add_store_option(command)
    command.set_defaults(run=cmd_gate)
