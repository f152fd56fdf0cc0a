"""`lineage-governance`: the same answers the Airflow parts give, for a person or a CI job.

Exit codes: 0 clean, 1 findings, 2 bad input (with one sentence on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from openlineage.client.serde import Serde

from airflow_lineage_governance.governance.errors import GovernanceConfigError
from airflow_lineage_governance.lineage import LineageError, column_lineage

BAD_INPUT = 2


class BadInput(Exception):
    """Raised for input the CLI cannot use; its message is the one sentence the user sees."""


def _schema_from(args: argparse.Namespace) -> dict:
    if args.schema:
        try:
            return json.loads(Path(args.schema).read_text())
        except FileNotFoundError:
            raise BadInput(f"{args.schema}: the schema file does not exist.") from None
        except json.JSONDecodeError as error:
            raise BadInput(f"{args.schema}: the schema file is not JSON ({error}).") from None
    from airflow_lineage_governance.iceberg.catalog import lineage_schema, open_local_catalog

    folder = Path(args.catalog)
    if not (folder / "catalog.db").exists():
        raise BadInput(f"{folder}: no local Iceberg catalog here (expected {folder / 'catalog.db'}); "
                       "seed one with `lineage-governance platform seed`.")
    return lineage_schema(open_local_catalog(folder))


def cmd_lineage(args: argparse.Namespace) -> int:
    """Prints the column lineage facet of one statement."""
    path = Path(args.file)
    if not path.is_file():
        raise BadInput(f"{path}: the SQL file does not exist.")
    lineage = column_lineage(path.read_text(), _schema_from(args))
    if args.json:
        print(Serde.to_json(lineage.facet(args.namespace)))
        return 0
    print(f"{lineage.target} ({lineage.kind}), reads {', '.join(lineage.sources)}")
    for output in lineage.columns:
        sources = ", ".join(f"{d.source} {d.type} {d.subtype}{' masked' if d.masking else ''}"
                            for d in output.inputs) or "no source column"
        print(f"  {output.name} <- {sources}")
    print("  every row shaped by: " + (", ".join(f"{d.source} {d.subtype}" for d in lineage.rows) or "none"))
    return 0


def cmd_platform_seed(args: argparse.Namespace) -> int:
    """Seeds the demo platform into a local catalog folder."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog
    from airflow_lineage_governance.platform.seed import seed_platform

    if args.scale <= 0:
        raise BadInput(f"--scale must be above 0, not {args.scale}.")
    counts = seed_platform(open_local_catalog(args.folder), seed=args.seed, scale=args.scale)
    if args.json:
        print(json.dumps(counts, indent=2))
    else:
        for name, rows in counts.items():
            print(f"{name}: {rows:,} rows")
    return 0


def parser() -> argparse.ArgumentParser:
    """Returns the argument parser of every subcommand."""
    root = argparse.ArgumentParser(prog="lineage-governance", description=__doc__.splitlines()[0])
    commands = root.add_subparsers(dest="command", required=True)

    lineage = commands.add_parser("lineage", help="the column lineage facet of one CTAS or INSERT … SELECT")
    lineage.add_argument("file", help="the .sql file")
    source = lineage.add_mutually_exclusive_group(required=True)
    source.add_argument("--catalog", help="a local Iceberg catalog folder (catalog.db + warehouse/)")
    source.add_argument("--schema", help="a JSON file {db: {table: {column: type}}}")
    lineage.add_argument("--namespace", default="iceberg://platform")
    lineage.add_argument("--json", action="store_true", help="print the OpenLineage facet as JSON")
    lineage.set_defaults(run=cmd_lineage)

    platform = commands.add_parser("platform", help="the demo platform").add_subparsers(dest="action",
                                                                                       required=True)
    seed = platform.add_parser("seed", help="create the eight source tables in a local catalog")
    seed.add_argument("--folder", default=".demo/catalog")
    seed.add_argument("--seed", type=int, default=7)
    seed.add_argument("--scale", type=float, default=1.0)
    seed.add_argument("--json", action="store_true")
    seed.set_defaults(run=cmd_platform_seed)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the exit code."""
    args = parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except (BadInput, LineageError, GovernanceConfigError) as error:
        print(f"lineage-governance: {error}", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
