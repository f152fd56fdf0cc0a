"""A real Marquez for the test session: ../shared/marquez/start.sh (PostgreSQL 15 and the Marquez API server,
both on 127.0.0.1) on free ports with its own database folder, stopped by ../shared/marquez/stop.sh, which stops
each process by its pid and deletes the database."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO.parent / "shared" / "marquez"
"""start.sh and stop.sh beside the repository, as a CI clone sits beside the shared folder."""
START_SECONDS = 900
"""Bound of start.sh: the first build downloads Marquez's Maven dependencies (1-2 minutes), later starts ~35 s."""


def missing_tools() -> list[str]:
    """Returns what start.sh needs and the machine lacks: java, mvn, the PostgreSQL 15 binaries, the scripts."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if not Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "initdb").exists():
        missing.append("PostgreSQL 15 (postgresql-15)")
    if not (SCRIPTS / "start.sh").exists():
        missing.append(str(SCRIPTS / "start.sh"))
    return missing


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Marquez:
    """A running Marquez: its API's base URL."""

    url: str

    def get(self, path: str, **query: str | int) -> tuple[int, Any]:
        """Returns the status and the JSON body (or the text of an error) of GET `path`?`query`."""
        address = f"{self.url}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        try:
            with urllib.request.urlopen(address, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    def post_event(self, line: str) -> int:
        """Posts one OpenLineage event (its JSON text) to /api/v1/lineage; returns the status."""
        request = urllib.request.Request(
            f"{self.url}/api/v1/lineage",
            data=line.encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return int(error.code)


@contextmanager
def marquez_server() -> Iterator[Marquez]:
    """Starts Marquez with start.sh on free loopback ports and a fresh database, yields it, and stops it with
    stop.sh --wipe. Raises RuntimeError with start.sh's last lines when it does not start."""
    # PostgreSQL runs as the `postgres` user when root runs the script: its folders sit in /tmp, not under
    # pytest's private temporary folder.
    pg_dir = tempfile.mkdtemp(prefix="marquez-pg-")
    run_dir = tempfile.mkdtemp(prefix="marquez-run-")
    port = _free_port()
    env = {
        **os.environ,
        "MARQUEZ_PORT": str(port),
        "MARQUEZ_ADMIN_PORT": str(_free_port()),
        "POSTGRES_PORT": str(_free_port()),
        "MARQUEZ_PG_DIR": pg_dir,
        "MARQUEZ_RUN_DIR": run_dir,
    }
    try:
        started = subprocess.run(
            ["bash", str(SCRIPTS / "start.sh")],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=START_SECONDS,
            check=False,
        )
        if started.returncode != 0:
            raise RuntimeError(f"start.sh exited {started.returncode}: {started.stderr[-3000:]}")
        yield Marquez(f"http://127.0.0.1:{port}")
    finally:
        subprocess.run(
            ["bash", str(SCRIPTS / "stop.sh"), "--wipe"],
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(pg_dir, ignore_errors=True)
