"""`lineage-governance`: the same answers the Airflow parts give, for a person or a CI job.

Exit codes: 0 clean, 1 findings, 2 bad input (with one sentence on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli.common import BAD_INPUT, answers_from_store, escaped, governance_file
from airflow_lineage_governance.errors import LineageGovernanceError


def resolve_defaults(args: argparse.Namespace) -> None:
    """Fill in, from the [lineage_governance] settings, the options the command needs and its command line left out.

    Airflow's configuration is read only then. Raises MissingSettingError naming the flag and the setting to give.
    """
    if getattr(args, "events", "") is None and answers_from_store(args):
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


def parser() -> argparse.ArgumentParser:
    """Return the argument parser of every subcommand."""
    from airflow_lineage_governance.cli.design import add_design_commands
    from airflow_lineage_governance.cli.governance import add_governance_commands
    from airflow_lineage_governance.cli.history import add_history_commands
    from airflow_lineage_governance.cli.iceberg import add_iceberg_commands
    from airflow_lineage_governance.cli.lineage import add_lineage_commands
    from airflow_lineage_governance.cli.store import add_store_commands

    root = argparse.ArgumentParser(prog="lineage-governance", description=__doc__.splitlines()[0])
    commands = root.add_subparsers(dest="command", required=True)
    for add_commands in (
        add_lineage_commands,
        add_history_commands,
        add_governance_commands,
        add_design_commands,
        add_store_commands,
        add_iceberg_commands,
    ):
        add_commands(commands)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI.

    Args:
        argv: The command line after the program's name (default: `sys.argv[1:]`).

    Returns:
        The exit code: 0 clean, 1 findings, 2 bad input.
    """
    args = parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        resolve_defaults(args)
        return run(args)
    except LineageGovernanceError as error:
        print(f"lineage-governance: {escaped(str(error))}", file=sys.stderr)
        return BAD_INPUT
