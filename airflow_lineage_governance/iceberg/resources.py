"""What one task's DuckDB may take of its worker.

Memory, threads, and a spill folder of its own that is removed when the task's statement ends, whether it succeeded or
failed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb

from airflow_lineage_governance.iceberg.session import SessionSettingError

TASKS_PER_WORKER = 4
"""The tasks a worker is assumed to run at once: each task's default share of its memory."""
SPILL_PREFIX = "lineage-governance-spill-"
"""How the name of a task's spill folder starts."""
OWNER_FILE = ".owner"
"""The file in a spill folder its task holds locked while it runs."""
OWNER_GRACE_SECONDS = 60.0
"""How old an unlocked owner file must be before its folder counts as abandoned."""
UNOWNED_AGE_SECONDS = 24 * 3600.0
"""How old a spill folder with no owner file must be before it counts as abandoned."""
CONFIG_OPTIONS = {
    "memory_limit": "duckdb_memory_limit",
    "threads": "duckdb_threads",
    "spill_root": "duckdb_spill_folder",
}
"""Each resource's option in the provider's config section."""


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_memory_limit() -> str:
    """Return a task's default DuckDB memory limit.

    A TASKS_PER_WORKER-th of the machine's memory, at least 256 MiB (DuckDB's own default when the machine's memory
    cannot be read).
    """
    total = _physical_memory()
    if total is None:
        return ""
    return f"{max(total // TASKS_PER_WORKER, 256 * 1024 * 1024) // (1024 * 1024)}MiB"


_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def memory_bytes(limit: str) -> int | None:
    """Return the bytes of a DuckDB memory limit such as `'2GB'` or `'512 MiB'`; None for one of another form.

    Args:
        limit: The limit as DuckDB's `memory_limit` setting takes it.

    Returns:
        The limit in bytes, or None when the text is not a number followed by a unit DuckDB names.
    """
    text = limit.strip().lower().replace(" ", "")
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number) :] or "b"
    try:
        value = float(number)
    except ValueError:
        return None
    return int(value * _UNITS[unit]) if unit in _UNITS and value >= 0 else None


def default_threads() -> int:
    """Return a task's default DuckDB threads.

    The machine's cores, as DuckDB's own default (threads only share the cores among a worker's tasks; memory is what a
    task must not take from the others).
    """
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Resources:
    """The DuckDB resources of one task.

    Its memory limit (DuckDB's syntax, `'2GB'`; empty for the default share), its threads (0 for the default share) and
    the folder under which its spill folder is made (empty for the system's temporary folder).
    """

    memory_limit: str = ""
    threads: int = 0
    spill_root: str = ""

    def resolved(self) -> Resources:
        """Return these resources with every unset one given its default."""
        return Resources(
            self.memory_limit or default_memory_limit(),
            self.threads or default_threads(),
            self.spill_root or tempfile.gettempdir(),
        )


@contextmanager
def spill_folder(resources: Resources) -> Iterator[str]:
    """Make a spill folder of the task's own under the resources' spill root and yield its path.

    The folder is removed with all it holds when the block ends, also when it raises.

    Raises:
        SessionSettingError: when the spill root cannot hold a folder.
    """
    root = resources.spill_root or tempfile.gettempdir()
    remove_abandoned_spill_folders(root)
    path = None
    try:
        path = tempfile.mkdtemp(prefix=SPILL_PREFIX, dir=root)
        owner = _hold_owner_file(path)
    except OSError:
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
        raise SessionSettingError(
            CONFIG_OPTIONS["spill_root"], "no spill folder can be made under the folder it names"
        ) from None
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(owner)


def _hold_owner_file(folder: str) -> int:
    descriptor = os.open(os.path.join(folder, OWNER_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return descriptor


def remove_abandoned_spill_folders(root: str, now: float | None = None) -> list[str]:
    """Remove the spill folders under `root` that no running task holds, and return their paths.

    A task holds its folder's owner file locked while it runs; the lock goes with the process, also when it is killed.
    A folder counts as abandoned when its owner file is older than OWNER_GRACE_SECONDS and no process holds it, or when
    it has no owner file and is older than UNOWNED_AGE_SECONDS. Only folders of this user are looked at.

    Args:
        root: the folder spill folders are made under.
        now: the time to age folders against (the clock's when None).

    Returns:
        The paths of the folders removed.
    """
    clock = time.time() if now is None else now
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(SPILL_PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            if _abandoned(entry.path, clock):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
        except OSError:
            continue
    return removed


def _abandoned(folder: str, now: float) -> bool:
    owner_path = os.path.join(folder, OWNER_FILE)
    try:
        descriptor = os.open(owner_path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return now - os.stat(folder, follow_symlinks=False).st_mtime > UNOWNED_AGE_SECONDS
    try:
        facts = os.fstat(descriptor)
        if not stat.S_ISREG(facts.st_mode) or now - facts.st_mtime < OWNER_GRACE_SECONDS:
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    finally:
        os.close(descriptor)


_DUCKDB_OPTIONS = {
    "memory_limit": "duckdb_memory_limit",
    "threads": "duckdb_threads",
    "temp_directory": "duckdb_spill_folder",
}


def resource_config(resources: Resources, spill: str | None) -> dict[str, str]:
    """Return the DuckDB settings of a connection under `resources`.

    Its memory limit and threads, and `spill` as the only folder it spills to (no spilling when None).
    """
    resolved = resources.resolved()
    config = {"threads": str(resolved.threads), "temp_directory": spill or ""}
    if resolved.memory_limit:
        config["memory_limit"] = resolved.memory_limit
    return config


def apply_resources(connection: duckdb.DuckDBPyConnection, resources: Resources, spill: str | None) -> None:
    """Set `resources` on `connection`, with `spill` as its spill folder (none: it does not spill).

    Args:
        connection: a DuckDB connection the provider opened, before any statement runs on it.
        resources: the task's memory limit and threads.
        spill: the task's spill folder (from `spill_folder`), or None.

    Raises:
        SessionSettingError: naming the config option whose value DuckDB refuses.
    """
    for key, value in resource_config(resources, spill).items():
        try:
            connection.execute(f"SET {key} = '" + value.replace("'", "''") + "'")
        except duckdb.Error:
            raise SessionSettingError(_DUCKDB_OPTIONS[key], f"DuckDB does not accept {value!r} as its {key}") from None
