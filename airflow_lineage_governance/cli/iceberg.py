"""The CLI's `iceberg` commands: maintenance of the catalog's tables.

    lineage-governance iceberg orphans TABLE [--catalog FOLDER] [--older-than HOURS] [--delete] [--json]

`orphans` lists the files under a table's location that no snapshot references and that are older than the
safety age (a write still running has such files too); `--delete` removes them.
"""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from typing import Any

from airflow_lineage_governance import settings


def cmd_orphans(args: argparse.Namespace) -> int:
    """List (or with --delete removes) the table's orphan files and print one line each and a summary."""
    from pyiceberg.exceptions import NoSuchTableError

    from airflow_lineage_governance.cli.common import BadInput, existing_catalog, say
    from airflow_lineage_governance.iceberg.catalog import as_table
    from airflow_lineage_governance.iceberg.orphans import orphan_files, remove_orphans

    if args.older_than < 0:
        raise BadInput(f"--older-than {args.older_than}: the safety age cannot be negative; give hours, 0 or more.")
    catalog = existing_catalog(args.catalog)
    try:
        ref = as_table(args.table)
        table = catalog.load_table(ref.identifier)
    except NoSuchTableError:
        raise BadInput(f"{args.table}: the catalog has no such table; name it namespace.table.") from None
    age = timedelta(hours=args.older_than)
    orphans = orphan_files(table, age)
    removed = remove_orphans(table, orphans) if args.delete else 0
    if args.json:
        print(
            json.dumps(
                {
                    "table": str(ref),
                    "older_than_hours": args.older_than,
                    "deleted": args.delete,
                    "removed": removed,
                    "files": [{"path": o.path, "size": o.size, "modified": o.modified.isoformat()} for o in orphans],
                }
            )
        )
        return 0
    for orphan in orphans:
        say(f"{orphan.path}  {orphan.size:,} bytes  changed {orphan.modified.isoformat(timespec='seconds')}")
    size = sum(orphan.size for orphan in orphans)
    summary = (
        f"{ref}: {len(orphans)} files ({size:,} bytes) that no snapshot references, older than "
        f"{args.older_than:g} hours"
    )
    if args.delete:
        say(f"{summary}: {removed} removed")
    else:
        say(f"{summary}: listed only (dry run); --delete removes them")
    return 0


def add_iceberg_commands(commands: Any) -> None:
    """Add the `iceberg` command group to the CLI's subparsers."""
    group = commands.add_parser("iceberg", help="maintenance of the catalog's tables: orphans")
    actions = group.add_subparsers(dest="iceberg_command", required=True)
    command = actions.add_parser("orphans", help="files under a table's location that no snapshot references")
    command.add_argument("table", help="namespace.table")
    command.add_argument(
        "--catalog", help=f"a local Iceberg catalog folder (default: [{settings.SECTION}] catalog_folder)"
    )
    command.add_argument(
        "--older-than",
        type=float,
        default=72.0,
        help="the safety age in hours: only files last changed before it count (default: 72)",
    )
    command.add_argument("--delete", action="store_true", help="remove the files listed (default: list only)")
    command.add_argument("--json", action="store_true")
    command.set_defaults(run=cmd_orphans)
