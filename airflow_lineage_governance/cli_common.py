"""What every `lineage-governance` command shares: its exit codes, its one-line output, the error for input it
cannot use, and how it finds the local catalog, the governance files and the job namespaces.
"""

from __future__ import annotations

import re
from pathlib import Path

from airflow_lineage_governance import settings
from airflow_lineage_governance.errors import LineageGovernanceError

FINDINGS = 1
BAD_INPUT = 2

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    """Returns the text with newlines, terminal escapes and other control characters written as `\\n`,
    `\\x1b`, ...: a name from an event or a file can never forge an output line or drive the terminal.
    """
    return CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


def say(text: str) -> None:
    """Prints one line of the text output, escaped."""
    print(escaped(text))


class BadInput(LineageGovernanceError):
    """Raised for input the CLI cannot use; its message is the one sentence the user sees."""


def existing_catalog(folder: str | Path):
    """Returns the local catalog in `folder`; raises BadInput when there is none (opening would create one)."""
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog

    folder = Path(folder)
    if not (folder / "catalog.db").exists():
        raise BadInput(
            f"{folder}: no local Iceberg catalog here (expected {folder / 'catalog.db'}); give the "
            f"folder of an existing one with --catalog or [{settings.SECTION}] catalog_folder."
        )
    return open_local_catalog(folder)


def governance_file(given: str | None, name: str, flag: str) -> Path:
    """Returns the file `flag` gives, else `name` in [lineage_governance] governance_dir, else in ./governance;
    raises MissingSettingError naming the flag and the setting when none is given and ./governance has none.
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
    """Returns the job namespaces whose events the governance reads: those given with --job-namespace (`*`:
    every namespace, None), else the OpenLineage provider's configured namespace, else None (every namespace:
    outside an Airflow deployment the provider's fallback `default` would only be a guess).
    """
    if given:
        return None if ALL_NAMESPACES in given else given
    configured = settings.configured_openlineage_namespace()
    return [configured] if configured else None
