"""The CLI's questions about the lineage history: `impact`, `upstream` and `trace`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli.common import (
    add_governance_options,
    add_time_options,
    as_of_and_window,
    open_governance,
    say,
)

if TYPE_CHECKING:
    from airflow_lineage_governance.graph.answers import Impact, Provenance
    from airflow_lineage_governance.graph.build import Edge
    from airflow_lineage_governance.graph.evidence import Evidence
    from airflow_lineage_governance.graph.reach import Reached


def edges_text(path: Sequence[Edge]) -> str:
    """Return a path of edges as one line: its source, then each target with the edge's type and subtype."""
    return " -> ".join([str(path[0].source), *(f"{e.target} ({e.type} {e.subtype})" for e in path)]) if path else ""


def reached_mark(reached: Reached | None) -> str:
    """Return a reached column's confidence and staleness at a glance: `[observed]`, `[declared, STALE]`."""
    return f"[{reached.confidence}{', STALE' if reached.stale else ''}]" if reached is not None else ""


def retired_lines(retired: Sequence[Evidence]) -> list[str]:
    """Return one line per retired (stale) edge: the edge, its job, and the run that last stated it."""
    return [
        f"  retired (stale): {e.edge.source} -> {e.edge.target} ({e.edge.type} {e.edge.subtype}) by "
        f"{e.edge.job}, last stated by run {e.record.event.run_id} at {e.record.event.event_time}"
        for e in retired
        if e.record is not None
    ]


def cmd_impact(args: argparse.Namespace) -> int:
    """Print what a change to a column can reach (as of --as-of), each column's confidence and staleness."""
    at, window = as_of_and_window(args)
    with open_governance(args) as governance:
        return print_impact(governance.impact(args.column, at, window), args.json)


def print_impact(impact: Impact, as_json: bool) -> int:
    """Print an impact as text, or as JSON with `as_json`; return the exit code."""
    if as_json:
        sys.stdout.write(impact.to_json())
        return 0
    say(
        f"{impact.column}: {len(impact.values)} columns through values, {len(impact.rows)} tables through "
        f"rows, {len(impact.columns_reached)} columns in all; blast-radius score {impact.score:g}"
        + (f"; as of {impact.as_of}" if impact.as_of else "")
    )
    say("  values can change: " + (", ".join(map(str, impact.values)) or "none"))
    say("  every row can change: " + (", ".join(map(str, impact.rows)) or "none"))
    if impact.reaches_itself:
        say(f"  {impact.column} reaches itself: it is on a cycle (a job reads what it writes)")
    for column in impact.columns_reached:
        say(f"  {column} {reached_mark(impact.reached.get(column))}: {edges_text(impact.paths[column])}")
    for line in retired_lines(impact.retired):
        say(line)
    say("  owners: " + (", ".join(f"{t} ({o or 'no owner'})" for t, o in impact.owners.items()) or "none"))
    return 0


def cmd_upstream(args: argparse.Namespace) -> int:
    """Print where a column comes from (as of --as-of), each source's confidence and staleness."""
    at, window = as_of_and_window(args)
    with open_governance(args) as governance:
        return print_provenance(governance.provenance(args.column, at, window), args.json)


def print_provenance(provenance: Provenance, as_json: bool) -> int:
    """Print a provenance as text, or as JSON with `as_json`; return the exit code."""
    if as_json:
        print(json.dumps(provenance.to_dict(), indent=2))
        return 0
    say(
        f"{provenance.column} depends on {len(provenance.sources)} columns:"
        + (f" (as of {provenance.as_of})" if provenance.as_of else "")
    )
    for source in provenance.sources:
        say(f"  {reached_mark(provenance.reached.get(source))} {edges_text(provenance.paths[source])}")
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    """Print where a table's snapshot came from, or with --forward every output snapshot that read it.

    Backwards: runs, tries, SQL hashes, input snapshots, to the sources. Forwards: every output snapshot that read it,
    directly or not, with run, owner and tier.
    """
    with open_governance(args) as governance:
        found = governance.trace(args.snapshot, args.forward)
    if args.json:
        data = [c.to_dict() for c in found] if isinstance(found, list) else found.to_dict()
        print(json.dumps({"snapshot": args.snapshot, "forward" if args.forward else "origin": data}, indent=2))
        return 0
    if isinstance(found, list):
        say(f"{args.snapshot}: {len(found)} output snapshots read it, directly or through others:")
        for contaminated in found:
            say(f"  {contaminated.line()}")
        return 0
    for line in found.lines():
        say(line)
    return 0


def add_history_commands(commands: Any) -> None:
    """Add the `impact`, `upstream` and `trace` commands to the CLI's subcommands.

    Args:
        commands: The root parser's subparsers.
    """
    for name, run, text in (
        ("impact", cmd_impact, "what a change to a column can reach"),
        ("upstream", cmd_upstream, "where a column comes from"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("column", help="namespace.table.column")
        add_governance_options(command)
        add_time_options(command)
        add_store_option(command)
        command.set_defaults(run=run)
    command = commands.add_parser("trace", help="the runs and input snapshots a table's snapshot came from")
    command.add_argument("snapshot", help="namespace.table@SNAPSHOT_ID (a datasetVersion of the version facet)")
    command.add_argument(
        "--forward", action="store_true", help="list every output snapshot that read it, directly or through others"
    )
    add_governance_options(command)
    add_store_option(command)
    command.set_defaults(run=cmd_trace)


def add_store_option(command: argparse.ArgumentParser) -> None:
    """Add `--store`: answer from the lineage store.

    Args:
        command: The command's parser.
    """
    command.add_argument(
        "--store",
        metavar="LOCATION",
        help="answer from the lineage store: a DuckDB file or a postgresql:// URL (default, when no "
        f"--events is given and [{settings.SECTION}] events is unset: [{settings.SECTION}] "
        "store_conn_id, else store)",
    )
