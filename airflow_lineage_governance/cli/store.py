"""The CLI's `store` commands: create, fill, describe and vacuum the lineage store.

    lineage-governance store init [--store LOCATION]
    lineage-governance store import EVENTS... [--store LOCATION] [--batch-size N] [--json]
    lineage-governance store sync [EVENTS] [--store LOCATION] [--overlap DURATION] [--batch-size N] [--json]
    lineage-governance store stats [--store LOCATION] [--json]
    lineage-governance store vacuum [--store LOCATION]

LOCATION is a DuckDB file or a postgresql:// URL (default: `[lineage_governance] store_conn_id`, else `store`); EVENTS
is a Marquez URL, a JSON Lines file or a folder holding events.jsonl (default: the configured event source).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from airflow_lineage_governance import settings


def _open(args: argparse.Namespace, *, create: bool = False) -> Any:
    from airflow_lineage_governance.store.lineage_store import LineageStore

    return LineageStore.open(settings.store_location(args.store), create=create)


def cmd_init(args: argparse.Namespace) -> int:
    """Create the store (or upgrades an older one in place) and print its schema version."""
    from airflow_lineage_governance.cli.common import say

    with _open(args, create=True) as store:
        say(f"lineage store {store.engine.description} ({store.engine.dialect}): schema version {store.version}")
    return 0


def events_files(given: list[str]) -> list[Path]:
    """Return the events files the arguments name.

    A file itself, a folder its `events.jsonl` (the history folder the nightly governance keeps); raises BadInput for a
    name that is neither.
    """
    from airflow_lineage_governance.cli.common import BadInput

    files = []
    for name in given:
        path = Path(name)
        if path.is_dir():
            path = path / "events.jsonl"
        if not path.is_file():
            raise BadInput(f"{name}: no events file here (give a JSON Lines file, or a folder holding events.jsonl)")
        files.append(path)
    return files


def batch_size(args: argparse.Namespace) -> int:
    """Return the events per transaction `--batch-size` asks for (`ingest.BATCH` unless given).

    Raises BadInput for a number below 1.
    """
    from airflow_lineage_governance.cli.common import BadInput
    from airflow_lineage_governance.store.ingest import BATCH

    if args.batch_size is None:
        return BATCH
    if args.batch_size < 1:
        raise BadInput(f"--batch-size {args.batch_size}: give how many events a transaction holds, 1 or more")
    return int(args.batch_size)


def cmd_import(args: argparse.Namespace) -> int:
    """Add the events of each file or folder to the store and print what was read, stored and left out."""
    from airflow_lineage_governance.cli.common import say
    from airflow_lineage_governance.graph.events import FileEventSource

    files = events_files(args.events)
    size = batch_size(args)
    reports = []
    with _open(args) as store:
        for path in files:
            report = store.ingest(FileEventSource(path), batch_size=size)
            reports.append(report.to_dict())
            if not args.json:
                say(
                    f"{path}: {report.read} read, {report.stored} stored, {report.duplicates} already in the store; "
                    f"left out: {report.malformed} not JSON, {report.truncated} truncated, {report.wrong_shape} of "
                    f"the wrong shape, {report.unknown_type} of an unknown type"
                )
    if args.json:
        print(json.dumps({"imports": reports}, indent=2))
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """Bring the new events of the event source into the store and print what was read, added and left out."""
    from airflow_lineage_governance.cli.common import BadInput, parse_duration, say
    from airflow_lineage_governance.store.sync import OVERLAP, sync

    source = args.events or settings.event_source()
    if not source:
        raise BadInput(
            "no event source to sync: give a Marquez URL or an events file, or set "
            f"{settings.SETTINGS['events'].flag_or_setting}."
        )
    overlap = parse_duration(args.overlap) if args.overlap else OVERLAP
    if overlap is None:
        raise BadInput(f"--overlap {args.overlap!r}: not a duration; write e.g. 1h, 90m or 2d.")
    report = sync(settings.store_location(args.store), source, overlap=overlap, batch_size=batch_size(args))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        say(report.line())
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Prints the store's location, schema version, size and rows per table."""
    from airflow_lineage_governance.cli.common import say

    with _open(args) as store:
        stats = store.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    say(
        f"lineage store {stats['store']} ({stats['engine']}): schema version {stats['schema_version']}, "
        f"{stats['size_bytes']:,} bytes"
    )
    for table, rows in stats["rows"].items():
        say(f"  {table}: {rows:,} rows")
    return 0


def cmd_vacuum(args: argparse.Namespace) -> int:
    """Give back the space of deleted rows and print the store's size afterwards."""
    from airflow_lineage_governance.cli.common import say

    with _open(args) as store:
        store.vacuum()
        say(f"lineage store {store.engine.description} vacuumed: {store.engine.size_bytes():,} bytes")
    return 0


def add_store_commands(commands: Any) -> None:
    """Add the `store` command group to the CLI's subparsers."""
    group = commands.add_parser("store", help="the lineage store: init, import, stats, vacuum")
    actions = group.add_subparsers(dest="store_command", required=True)
    where = (
        f"a DuckDB file or a postgresql:// URL (default: the [{settings.SECTION}] store_conn_id connection, "
        f"else [{settings.SECTION}] store)"
    )
    for name, run, text in (
        ("init", cmd_init, "create the store, or upgrade an older one in place"),
        ("import", cmd_import, "add the events of JSON Lines files or history folders"),
        ("sync", cmd_sync, "bring the new events of a Marquez server or an events file into the store"),
        ("stats", cmd_stats, "the store's schema version, size and rows per table"),
        ("vacuum", cmd_vacuum, "give back the space of deleted rows"),
    ):
        command = actions.add_parser(name, help=text)
        command.add_argument("--store", help=where)
        if name == "import":
            command.add_argument("events", nargs="+", help="an events.jsonl file, or a folder holding one")
            command.add_argument("--batch-size", type=int, help="events per transaction (default: 20000)")
        if name == "sync":
            command.add_argument(
                "events",
                nargs="?",
                help=f"a Marquez URL, an events.jsonl file, or a folder holding one (default: [{settings.SECTION}] "
                "events, else where the OpenLineage provider's transport sends events)",
            )
            command.add_argument(
                "--overlap",
                metavar="DURATION",
                help="ask a Marquez source again for this much before the last event time read (default: 1h)",
            )
            command.add_argument("--batch-size", type=int, help="events per transaction (default: 20000)")
        if name in ("import", "sync", "stats"):
            command.add_argument("--json", action="store_true")
        command.set_defaults(run=run)
