"""Finding and removing the files under a table's location that no snapshot references.

Data files of a write that was killed before its commit, manifests of a commit the catalog refused; and those of one
task instance's earlier tries, which its later try removes once its own write is committed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlparse

from pyarrow import fs
from pyiceberg.table import Table

from airflow_lineage_governance.iceberg.data_files import listed_files, owner_marker

SAFETY_AGE = timedelta(days=3)
"""How old an unreferenced file must be before it counts as an orphan: a write still running has files that no
snapshot references yet."""


@dataclass(frozen=True)
class OrphanFile:
    """One file under a table's location that no snapshot references: its path, size and last change."""

    path: str
    size: int
    modified: datetime


def _key(location: str) -> str:
    """Return `location` (a URI or a path) as the path its filesystem lists it by."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return parsed.path
    return f"{parsed.netloc}{parsed.path}"


def referenced_files(table: Table) -> set[str]:
    """Return every file the table's metadata references, as listed paths.

    Its metadata files, each snapshot's manifest list, manifests, data and delete files (removed entries too), and
    statistics files.
    """
    metadata = table.metadata
    found = {table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    found.update(statistics.statistics_path for statistics in metadata.statistics)
    found.update(statistics.statistics_path for statistics in metadata.partition_statistics)
    for snapshot in metadata.snapshots:
        found.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(table.io):
            found.add(manifest.manifest_path)
            found.update(
                entry.data_file.file_path for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False)
            )
    return {_key(location) for location in found}


def orphan_files(table: Table, older_than: timedelta = SAFETY_AGE, now: datetime | None = None) -> list[OrphanFile]:
    """Return the files under the table's location that no snapshot references, sorted by path.

    Only those last changed more than `older_than` before `now` (default: the current time).
    """
    cutoff = (now or datetime.now(UTC)) - older_than
    referenced = referenced_files(table)
    found = []
    for info in listed_files(table.location()):
        if info.path in referenced or info.mtime is None:
            continue
        modified = info.mtime if info.mtime.tzinfo else info.mtime.replace(tzinfo=UTC)
        if modified < cutoff:
            found.append(OrphanFile(info.path, int(info.size or 0), modified))
    return sorted(found, key=lambda orphan: orphan.path)


def remove_orphans(table: Table, orphans: Iterable[OrphanFile]) -> int:
    """Remove `orphans` (as orphan_files found them for the table) and return how many were removed.

    One already gone is not counted.
    """
    filesystem, _ = fs.FileSystem.from_uri(table.location())
    removed = 0
    for orphan in orphans:
        try:
            filesystem.delete_file(orphan.path)
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def unreferenced_files_of(table: Table, owner: str) -> list[OrphanFile]:
    """List the files a write of `owner` named under the table's location that no snapshot references.

    Only a write that commits at most once per owner may remove them once its own commit is in the table: an
    earlier try still running can then no longer commit (its commit conflicts and finds this one), so no snapshot
    will ever reference them.

    Args:
        table: The table whose location is listed.
        owner: A task instance's write key.

    Returns:
        The unreferenced files, whatever their age, sorted by path.
    """
    marker = owner_marker(owner)
    named = [info for info in listed_files(table.location()) if marker in info.base_name]
    if not named:
        return []
    referenced = referenced_files(table)
    found = []
    for info in named:
        if info.path in referenced:
            continue
        modified = info.mtime if info.mtime is None or info.mtime.tzinfo else info.mtime.replace(tzinfo=UTC)
        found.append(OrphanFile(info.path, int(info.size or 0), modified or datetime.now(UTC)))
    return sorted(found, key=lambda orphan: orphan.path)
