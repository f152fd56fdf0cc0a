"""What every `lineage-governance` command shares.

Its exit codes, its one-line output, the error for input it cannot use, and how it finds the local catalog, the
governance files and the job namespaces.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from airflow_lineage_governance import settings
from airflow_lineage_governance.errors import LineageGovernanceError

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog

    from airflow_lineage_governance.governance.store_session import StoredGovernance
    from airflow_lineage_governance.lineage.schema import CatalogSchema, NestedSchema

FINDINGS = 1
BAD_INPUT = 2

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    r"""Return the text with newlines, terminal escapes and other control characters written as `\n`, `\x1b`, ...

    A name from an event or a file can never forge an output line or drive the terminal.
    """
    return CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


def say(text: str) -> None:
    """Print one line of the text output, escaped."""
    print(escaped(text))


class BadInput(LineageGovernanceError):
    """Raised for input the CLI cannot use; its message is the one sentence the user sees."""


def existing_catalog(folder: str | Path) -> SqlCatalog:
    """Return the local catalog in `folder`; raise BadInput when there is none (opening would create one).

    The catalog is opened under the `[lineage_governance] catalog_name` setting, or under the one name its
    catalog.db keeps tables for when the setting names none of them.
    """
    from airflow_lineage_governance.iceberg.catalog import local_catalog_names, open_local_catalog

    folder = Path(folder)
    if not (folder / "catalog.db").exists():
        raise BadInput(
            f"{folder}: no local Iceberg catalog here (expected {folder / 'catalog.db'}); give the "
            f"folder of an existing one with --catalog or [{settings.SECTION}] catalog_folder."
        )
    name = settings.required("catalog_name", None)
    kept = local_catalog_names(folder)
    if kept and name not in kept:
        if len(kept) > 1:
            raise BadInput(
                f"{folder}: the local Iceberg catalog keeps the catalogs {', '.join(kept)} and none named {name}; "
                f"set the one to read with {settings.SETTINGS['catalog_name'].flag_or_setting}."
            )
        name = kept[0]
    return open_local_catalog(folder, name)


def governance_file(given: str | None, name: str, flag: str) -> Path:
    """Return the file `flag` gives, else `name` in [lineage_governance] governance_dir, else in ./governance.

    Raises MissingSettingError naming the flag and the setting when none is given and ./governance has none.
    """
    if given:
        return Path(given)
    folder = settings.setting("governance_dir")
    path = Path(folder or "governance") / name
    if not folder and not path.is_file():
        raise settings.MissingSettingError(
            f"no {name}: give {flag}, or set [{settings.SECTION}] governance_dir in airflow.cfg or "
            f"{settings.SETTINGS['governance_dir'].variable}, or run where governance/{name} is."
        )
    return path


ALL_NAMESPACES = "*"


def job_namespaces(given: list[str] | None) -> list[str] | None:
    """Return the job namespaces whose events the governance reads.

    Those given with --job-namespace (`*`: every namespace, None), else the OpenLineage provider's configured namespace,
    else None (every namespace: outside an Airflow deployment the provider's fallback `default` would only be a guess).
    """
    if given:
        return None if ALL_NAMESPACES in given else given
    configured = settings.configured_openlineage_namespace()
    return [configured] if configured else None


def schema_from(args: argparse.Namespace) -> CatalogSchema | NestedSchema:
    """Return the schema the lineage is read against: the JSON file of --schema, else the local catalog's.

    Raises BadInput for a schema file that is missing or not JSON, or a folder with no local catalog.
    """
    if args.schema:
        try:
            nested: NestedSchema = json.loads(Path(args.schema).read_text())
            return nested
        except FileNotFoundError:
            raise BadInput(f"{args.schema}: the schema file does not exist.") from None
        except json.JSONDecodeError as error:
            raise BadInput(f"{args.schema}: the schema file is not JSON ({error}).") from None
    from airflow_lineage_governance.iceberg.catalog import lineage_schema

    return lineage_schema(existing_catalog(args.catalog))


def statement(path: Path, args: argparse.Namespace) -> str:
    """Return the SQL file rendered in Jinja's sandbox for --logical-date (default: midnight UTC today).

    Raises BadInput for a missing file and TemplateRenderError for a template that cannot be rendered safely.
    """
    from airflow_lineage_governance.templating import parse_logical_date, render_sql, start_of_today

    if not path.is_file():
        raise BadInput(f"{path}: the SQL file does not exist.")
    logical_date = parse_logical_date(args.logical_date) if args.logical_date else start_of_today()
    return render_sql(path.read_text(), logical_date, str(path))


def answers_from_store(args: argparse.Namespace) -> bool:
    """Return True when a command that can answer from the lineage store should.

    `--store` is given, or no event source is given or configured.
    """
    if not hasattr(args, "store"):
        return False
    return bool(args.store) or (args.events is None and not settings.setting("events"))


def open_governance(args: argparse.Namespace) -> StoredGovernance:
    """Return the governance the command answers from, over its rules, metadata and job namespaces.

    The lineage store (`answers_from_store`), opened read-only; else the events of the command's source (between
    --since and --until for a Marquez source) read into a lineage store in memory. Close it when done.
    """
    from airflow_lineage_governance.governance.store_session import StoredGovernance

    namespaces = job_namespaces(args.job_namespace)
    if answers_from_store(args):
        return StoredGovernance.open(
            args.store, rules_path=args.rules, metadata_path=args.metadata, job_namespaces=namespaces
        )
    return StoredGovernance.from_events(
        args.events,
        rules_path=args.rules,
        metadata_path=args.metadata,
        job_namespaces=namespaces,
        after=utc_time(getattr(args, "since", None), "--since"),
        before=utc_time(getattr(args, "until", None), "--until"),
    )


def utc_time(given: str | None, flag: str) -> str | None:
    """Return the ISO 8601 time `flag` gives, in UTC with a `Z` (as Marquez reads it).

    Raises BadInput for text that is no time.
    """
    if given is None:
        return None
    from airflow_lineage_governance.graph.events import parse_time

    parsed = parse_time(given)
    if parsed is None:
        raise BadInput(f"{flag} {given!r}: not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([wdhms])\s*$")
UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> timedelta | None:
    """Return the duration `7d`, `36h`, `90m`, `2w` or `30s` names, or None when the text is none of those."""
    found = DURATION.match(text)
    return timedelta(seconds=float(found.group(1)) * UNITS[found.group(2)]) if found else None


def as_of_and_window(args: argparse.Namespace) -> tuple[datetime | None, timedelta | None]:
    """Return --as-of as an aware datetime (None: now) and --active-since as a timedelta (None: no window).

    Raises BadInput for text that is neither.
    """
    from airflow_lineage_governance.graph.events import parse_time

    at = parse_time(args.as_of) if getattr(args, "as_of", None) else None
    if getattr(args, "as_of", None) and at is None:
        raise BadInput(f"--as-of {args.as_of!r}: not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.")
    window = parse_duration(args.active_since) if getattr(args, "active_since", None) else None
    if getattr(args, "active_since", None) and window is None:
        raise BadInput(f"--active-since {args.active_since!r}: not a duration; write e.g. 7d, 36h or 90m.")
    return at, window


def add_governance_options(command: argparse.ArgumentParser) -> None:
    """Add the options of a command that reads the governance: events, rules, metadata, namespaces, times, --json."""
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


def add_time_options(command: argparse.ArgumentParser) -> None:
    """Add --as-of and --active-since: the time a question is answered as of, and the window of edges that count."""
    command.add_argument(
        "--as-of", help="answer from each job's latest COMPLETE at or before this ISO 8601 time (default: now)"
    )
    command.add_argument(
        "--active-since",
        metavar="DURATION",
        help="edges whose last run is older than this before --as-of (e.g. 7d, 36h) are reported as stale, not dropped",
    )


def add_template_options(command: argparse.ArgumentParser) -> None:
    """Add --logical-date, the date a SQL file's Jinja template is rendered for."""
    command.add_argument(
        "--logical-date",
        help="the logical date the SQL templates are rendered for, ISO 8601 "
        "(default: midnight UTC today); gives ds, ts, logical_date, "
        "data_interval_start/end as Airflow does",
    )
