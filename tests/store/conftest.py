"""The lineage store's engines for the tests: a DuckDB file in the test's folder, and one real PostgreSQL 15 for the
session (scripts/postgres/start.sh, on a free loopback port, stopped by its pid), each test in a schema of its own."""

from __future__ import annotations

import itertools
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("duckdb", "postgres")
_schemas = itertools.count()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """Yields the URL (with its password) of a PostgreSQL 15 started for the session."""
    folder = Path(tempfile.mkdtemp(prefix="lineage-store-pg-"))  # under /tmp: the postgres user must reach it
    password = secrets.token_hex(16)
    port = free_port()
    started = subprocess.run(
        ["bash", str(ROOT / "scripts/postgres/start.sh"), str(folder), str(port)],
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LINEAGE_STORE_PG_PASSWORD": password},
        capture_output=True,
        text=True,
        timeout=180,
    )
    if started.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr.strip()}")
    try:
        yield f"postgresql://lineage:{password}@127.0.0.1:{port}/lineage"
    finally:
        subprocess.run(["bash", str(ROOT / "scripts/postgres/stop.sh"), str(folder)], check=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def new_schema(postgres_url: str) -> str:
    """Returns the URL of a new, empty schema of the session's PostgreSQL (the store's tables go there)."""
    name = f"store_{next(_schemas)}_{secrets.token_hex(3)}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    return f"{postgres_url}?options=-csearch_path%3D{name}"


@pytest.fixture(params=ENGINES)
def engine_kind(request: pytest.FixtureRequest) -> str:
    """The engine a parametrised store test runs on."""
    return str(request.param)


@pytest.fixture
def store_location(engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The location of an empty store on the test's engine: a DuckDB file path or a PostgreSQL URL."""
    if engine_kind == "duckdb":
        return str(tmp_path / "lineage-store.duckdb")
    return new_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture
def fresh_location(engine_kind: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Returns a function that gives the location of another empty store on the test's engine (for property
    tests, which need one per example)."""
    url = request.getfixturevalue("postgres_url") if engine_kind == "postgres" else None

    def make() -> str:
        if url is not None:
            return new_schema(url)
        return str(tmp_path_factory.mktemp("store") / "lineage-store.duckdb")

    return make
