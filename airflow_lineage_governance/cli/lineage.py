"""The CLI's `lineage` command: the column lineage facet of one statement."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from openlineage.client.serde import Serde

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli.common import add_template_options, governance_file, say, schema_from, statement
from airflow_lineage_governance.lineage import column_lineage


def cmd_lineage(args: argparse.Namespace) -> int:
    """Print the column lineage facet of one statement."""
    lineage = column_lineage(statement(Path(args.file), args), schema_from(args))
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


def add_lineage_commands(commands: Any) -> None:
    """Add the `lineage` command to the CLI's subcommands.

    Args:
        commands: The root parser's subparsers.
    """
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
    add_template_options(lineage)
    lineage.add_argument("--json", action="store_true", help="print the OpenLineage facet as JSON")
    lineage.set_defaults(run=cmd_lineage)
