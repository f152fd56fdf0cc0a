"""`lineage-governance`: the same answers the Airflow parts give, for a person or a CI job.

Exit codes: 0 clean, 1 findings, 2 bad input (with one sentence on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC
from pathlib import Path

from openlineage.client.serde import Serde

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli_common import (
    BAD_INPUT,
    FINDINGS,
    BadInput,
    escaped,
    existing_catalog,
    governance_file,
    job_namespaces,
    say,
)
from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.lineage import column_lineage


def _schema_from(args: argparse.Namespace) -> dict:
    if args.schema:
        try:
            return json.loads(Path(args.schema).read_text())
        except FileNotFoundError:
            raise BadInput(f"{args.schema}: the schema file does not exist.") from None
        except json.JSONDecodeError as error:
            raise BadInput(f"{args.schema}: the schema file is not JSON ({error}).") from None
    from airflow_lineage_governance.iceberg.catalog import lineage_schema

    return lineage_schema(existing_catalog(args.catalog))


def _statement(path: Path, args: argparse.Namespace) -> str:
    """Returns the SQL file rendered in Jinja's sandbox for --logical-date (default: midnight UTC today);
    raises BadInput for a missing file and TemplateRenderError for a template that cannot be rendered safely.
    """
    from airflow_lineage_governance.templating import parse_logical_date, render_sql, start_of_today

    if not path.is_file():
        raise BadInput(f"{path}: the SQL file does not exist.")
    logical_date = parse_logical_date(args.logical_date) if args.logical_date else start_of_today()
    return render_sql(path.read_text(), logical_date, str(path))


def _resolve_defaults(args: argparse.Namespace) -> None:
    """Fills in, from the [lineage_governance] settings, the options the command needs and its command line
    left out (Airflow's configuration is read only then); raises MissingSettingError naming the flag and the
    setting to give.
    """
    if getattr(args, "events", "") is None and _from_store(args):
        args.store = settings.store_location(args.store)
    elif getattr(args, "events", "") is None:
        args.events = settings.required("events", "--events")
    if getattr(args, "catalog", "") is None and getattr(args, "schema", None) is None:
        args.catalog = settings.required(
            "catalog_folder", "--catalog or --schema" if hasattr(args, "schema") else "--catalog"
        )
    if hasattr(args, "metadata"):
        args.rules = str(governance_file(args.rules, "lineage.toml", "--rules"))
        args.metadata = str(governance_file(args.metadata, "metadata.toml", "--metadata"))


def cmd_lineage(args: argparse.Namespace) -> int:
    """Prints the column lineage facet of one statement."""
    lineage = column_lineage(_statement(Path(args.file), args), _schema_from(args))
    if args.json:
        namespace = args.namespace
        if not namespace:
            from airflow_lineage_governance.governance.config import load_rules

            namespace = load_rules(governance_file(args.rules, "lineage.toml", "--rules or --namespace")).namespace
        from airflow_lineage_governance.lineage.facet import column_lineage_facet

        print(Serde.to_json(column_lineage_facet(lineage, namespace)))
        return 0
    say(f"{lineage.target} ({lineage.kind}), reads {', '.join(map(str, lineage.sources))}")
    for output in lineage.columns:
        sources = (
            ", ".join(f"{d.source} {d.type} {d.subtype}{' masked' if d.masking else ''}" for d in output.inputs)
            or "no source column"
        )
        say(f"  {output.name} <- {sources}")
    say("  every row shaped by: " + (", ".join(f"{d.source} {d.subtype}" for d in lineage.rows) or "none"))
    return 0


def _from_store(args: argparse.Namespace) -> bool:
    """Returns True when a command that can answer from the lineage store should: `--store` is given, or no event
    source is given or configured.
    """
    if not hasattr(args, "store"):
        return False
    return bool(args.store) or (args.events is None and not settings.setting("events"))


def _governance(args: argparse.Namespace):
    from airflow_lineage_governance.governance.session import Governance

    return Governance.load(
        args.events,
        rules_path=args.rules,
        metadata_path=args.metadata,
        job_namespaces=job_namespaces(args.job_namespace),
        after=_time(args.since, "--since"),
        before=_time(args.until, "--until"),
    )


def _time(given: str | None, flag: str) -> str | None:
    """Returns the ISO 8601 time `flag` gives, in UTC with a `Z` (as Marquez reads it); raises BadInput for
    text that is no time.
    """
    if given is None:
        return None
    from airflow_lineage_governance.graph.events import parse_time

    parsed = parse_time(given)
    if parsed is None:
        raise BadInput(f"{flag} {given!r}: not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _edges(path) -> str:
    return " -> ".join([str(path[0].source), *(f"{e.target} ({e.type} {e.subtype})" for e in path)]) if path else ""


def _when(args: argparse.Namespace):
    """Returns --as-of as an aware datetime (None: now) and --active-since as a timedelta (None: no window);
    raises BadInput for text that is neither.
    """
    from airflow_lineage_governance.graph.asof import parse_duration
    from airflow_lineage_governance.graph.events import parse_time

    at = parse_time(args.as_of) if getattr(args, "as_of", None) else None
    if getattr(args, "as_of", None) and at is None:
        raise BadInput(f"--as-of {args.as_of!r}: not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.")
    window = parse_duration(args.active_since) if getattr(args, "active_since", None) else None
    if getattr(args, "active_since", None) and window is None:
        raise BadInput(f"--active-since {args.active_since!r}: not a duration; write e.g. 7d, 36h or 90m.")
    return at, window


def _mark(reached) -> str:
    """Returns a reached column's confidence and staleness at a glance: `[observed]`, `[declared, STALE]`."""
    return f"[{reached.confidence}{', STALE' if reached.stale else ''}]" if reached is not None else ""


def _retired_lines(retired) -> list[str]:
    return [
        f"  retired (stale): {e.edge.source} -> {e.edge.target} ({e.edge.type} {e.edge.subtype}) by "
        f"{e.edge.job}, last stated by run {e.record.event.run_id} at {e.record.event.event_time}"
        for e in retired
        if e.record is not None
    ]


def cmd_impact(args: argparse.Namespace) -> int:
    """Prints what a change to a column can reach (as of --as-of), each column's confidence and staleness."""
    at, window = _when(args)
    impact = _governance(args).impact(args.column, at, window)
    if args.json:
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
        say(f"  {column} {_mark(impact.reached.get(column))}: {_edges(impact.paths[column])}")
    for line in _retired_lines(impact.retired):
        say(line)
    say("  owners: " + (", ".join(f"{t} ({o or 'no owner'})" for t, o in impact.owners.items()) or "none"))
    return 0


def cmd_upstream(args: argparse.Namespace) -> int:
    """Prints where a column comes from (as of --as-of), each source's confidence and staleness."""
    at, window = _when(args)
    provenance = _governance(args).provenance(args.column, at, window)
    if args.json:
        print(json.dumps(provenance.to_dict(), indent=2))
        return 0
    say(
        f"{provenance.column} depends on {len(provenance.sources)} columns:"
        + (f" (as of {provenance.as_of})" if provenance.as_of else "")
    )
    for source in provenance.sources:
        say(f"  {_mark(provenance.reached.get(source))} {_edges(provenance.paths[source])}")
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    """Prints where a table's snapshot came from (runs, tries, SQL hashes, input snapshots, to the sources), or
    with --forward every output snapshot that read it, directly or not, with run, owner and tier.
    """
    if args.store:
        found = _stored_trace(args)
    else:
        found = _governance(args).trace(args.snapshot, args.forward)
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


def _stored_trace(args: argparse.Namespace):
    """Returns the trace of `args.snapshot` answered by the lineage store at `args.store` (owners and tiers from
    metadata.toml).
    """
    from airflow_lineage_governance.governance.config import load_metadata, load_rules
    from airflow_lineage_governance.graph.trace import snapshot_asked
    from airflow_lineage_governance.refs import TableRef
    from airflow_lineage_governance.store.lineage_store import LineageStore

    table, version = snapshot_asked(args.snapshot)
    with LineageStore.open(args.store, read_only=True) as store:
        if not args.forward:
            return store.trace_back(table, version)
        metadata = load_metadata(args.metadata, load_rules(args.rules))

        def about(written: TableRef) -> tuple[str | None, int | None]:
            known = metadata.tables.get(written)
            return (known.owner, known.tier) if known is not None else (None, None)

        return store.trace_forward(table, version, about)


def cmd_propose(args: argparse.Namespace) -> int:
    """Prints the proposed class of every written column (as of --as-of); a class decided through a stale
    job's edge says so.
    """
    at, window = _when(args)
    governance = _governance(args)
    proposals = governance.as_of(at).proposals
    stale = set(governance.stale_jobs(at, window))
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
    from airflow_lineage_governance.governance.checks import run_checks
    from airflow_lineage_governance.iceberg.catalog import table_names

    at, window = _when(args)
    catalog = existing_catalog(args.catalog)
    loaded = _governance(args)
    governance = loaded.as_of(at)
    findings = run_checks(governance, table_names(catalog))
    stale = loaded.stale_jobs(at, window)
    if args.json:
        print(
            json.dumps(
                {
                    "findings": [f.to_dict() for f in findings],
                    "events": governance.report.to_dict(),
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
        read = governance.report
        say(
            f"{len(findings)} findings; events read {read.events}, malformed {read.malformed + read.truncated}"
            + (f", of other job namespaces {read.other_namespace} (left out)" if read.other_namespace else "")
        )
    return FINDINGS if findings else 0


def cmd_gate(args: argparse.Namespace) -> int:
    """Prints the impact of each column a SQL change alters or removes; exit 1 above the threshold."""
    from airflow_lineage_governance.governance.gate import gate

    schema = _schema_from(args)
    before = column_lineage(_statement(Path(args.before), args), schema)
    after_path = Path(args.after)
    after = column_lineage(_statement(after_path, args), schema) if after_path.exists() else None
    governance = _governance(args)
    changes = gate(governance, before, after)
    threshold = governance.rules.gate_threshold
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


def _governance_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--events", help=f"an OpenLineage JSONL file or a Marquez URL (default: [{settings.SECTION}] events)"
    )
    command.add_argument(
        "--rules",
        help=f"lineage.toml (default: lineage.toml in [{settings.SECTION}] governance_dir, else in ./governance)",
    )
    command.add_argument(
        "--metadata",
        help=f"metadata.toml (default: metadata.toml in [{settings.SECTION}] governance_dir, else in ./governance)",
    )
    command.add_argument(
        "--job-namespace",
        action="append",
        metavar="NAMESPACE",
        help="read only the events of this OpenLineage job namespace (repeatable; `*`: every "
        "namespace; default: [openlineage] namespace when set, else every namespace)",
    )
    command.add_argument(
        "--since", help="a Marquez source: read events after this ISO 8601 time (default: 1970-01-01, sent explicitly)"
    )
    command.add_argument(
        "--until", help="a Marquez source: read events before this ISO 8601 time (default: 9999-12-31, sent explicitly)"
    )
    command.add_argument("--json", action="store_true")


def _time_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--as-of", help="answer from each job's latest COMPLETE at or before this ISO 8601 time (default: now)"
    )
    command.add_argument(
        "--active-since",
        metavar="DURATION",
        help="edges whose last run is older than this before --as-of (e.g. 7d, 36h) are reported as stale, not dropped",
    )


def _template_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--logical-date",
        help="the logical date the SQL templates are rendered for, ISO 8601 "
        "(default: midnight UTC today); gives ds, ts, logical_date, "
        "data_interval_start/end as Airflow does",
    )


def parser() -> argparse.ArgumentParser:
    """Returns the argument parser of every subcommand."""
    root = argparse.ArgumentParser(prog="lineage-governance", description=__doc__.splitlines()[0])
    commands = root.add_subparsers(dest="command", required=True)

    lineage = commands.add_parser("lineage", help="the column lineage facet of one CTAS or INSERT … SELECT")
    lineage.add_argument("file", help="the .sql file")
    source = lineage.add_mutually_exclusive_group()
    source.add_argument(
        "--catalog",
        help=f"a local Iceberg catalog folder (catalog.db + warehouse/; default: [{settings.SECTION}] catalog_folder)",
    )
    source.add_argument("--schema", help="a JSON file {db: {table: {column: type}}}")
    lineage.add_argument("--namespace", help="the facet's dataset namespace (default: the rules' namespace)")
    lineage.add_argument("--rules", help="lineage.toml whose namespace --json uses (default: as for impact)")
    _template_options(lineage)
    lineage.add_argument("--json", action="store_true", help="print the OpenLineage facet as JSON")
    lineage.set_defaults(run=cmd_lineage)

    for name, run, text in (
        ("impact", cmd_impact, "what a change to a column can reach"),
        ("upstream", cmd_upstream, "where a column comes from"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("column", help="namespace.table.column")
        _governance_options(command)
        _time_options(command)
        command.set_defaults(run=run)
    command = commands.add_parser("trace", help="the runs and input snapshots a table's snapshot came from")
    command.add_argument("snapshot", help="namespace.table@SNAPSHOT_ID (a datasetVersion of the version facet)")
    command.add_argument(
        "--forward", action="store_true", help="list every output snapshot that read it, directly or through others"
    )
    _governance_options(command)
    command.add_argument(
        "--store",
        metavar="LOCATION",
        help="answer from the lineage store: a DuckDB file or a postgresql:// URL (default, when no "
        f"--events is given and [{settings.SECTION}] events is unset: [{settings.SECTION}] "
        "store_conn_id, else store)",
    )
    command.set_defaults(run=cmd_trace)
    command = commands.add_parser("propose", help="proposed classes of every written column")
    _governance_options(command)
    _time_options(command)
    command.set_defaults(run=cmd_propose)
    command = commands.add_parser("check", help="understated classes, unaccounted tables, missing metadata")
    _governance_options(command)
    _time_options(command)
    command.add_argument(
        "--catalog", help=f"a local Iceberg catalog folder (default: [{settings.SECTION}] catalog_folder)"
    )
    command.set_defaults(run=cmd_check)
    command = commands.add_parser("gate", help="impact of the columns a SQL change alters (for CI)")
    command.add_argument("--before", required=True, help="the pipeline's SQL before the change")
    command.add_argument("--after", required=True, help="the SQL after it (a missing file: the pipeline is removed)")
    gate_schema = command.add_mutually_exclusive_group()
    gate_schema.add_argument(
        "--catalog", help=f"a local Iceberg catalog folder (default: [{settings.SECTION}] catalog_folder)"
    )
    gate_schema.add_argument("--schema", help="a JSON file {db: {table: {column: type}}}")
    _template_options(command)
    _governance_options(command)
    command.set_defaults(run=cmd_gate)

    from airflow_lineage_governance.design.commands import add_design_commands

    add_design_commands(commands)
    from airflow_lineage_governance.store_commands import add_store_commands

    add_store_commands(commands)
    from airflow_lineage_governance.iceberg_commands import add_iceberg_commands

    add_iceberg_commands(commands)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the exit code."""
    args = parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        _resolve_defaults(args)
        return run(args)
    except LineageGovernanceError as error:
        print(f"lineage-governance: {escaped(str(error))}", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
