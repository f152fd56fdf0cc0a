"""A real Apache Iceberg REST catalog for the tests: `scripts/iceberg-rest/start.sh` in a folder, stopped by pid.

The server (Iceberg's own REST handlers over a JdbcCatalog on SQLite, Jetty on 127.0.0.1 only) keeps its catalog,
warehouse, log (`server.log`), `pid` and `port` in that folder. The first start on a machine resolves the jars
from Maven Central and compiles the launcher (`make iceberg-rest` does that ahead of time).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_catalog

BASH = shutil.which("bash") or "/bin/bash"
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "iceberg-rest"
# A cold Maven cache resolves ~65 MB of jars before the server starts.
START_TIMEOUT_S = 600
STOP_TIMEOUT_S = 60


class RestCatalogStartError(RuntimeError):
    """The REST catalog server did not start; the message is start.sh's one sentence."""


def server_properties(folder: Path, uri: str) -> dict[str, str]:
    """Returns the pyiceberg properties of the REST catalog at `uri` whose files live in `folder`."""
    return {"type": "rest", "uri": uri, "warehouse": f"file://{folder.resolve() / 'warehouse'}"}


def start_rest_catalog(folder: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """Starts the server in `folder` and returns its pyiceberg catalog properties; raises RestCatalogStartError
    with start.sh's sentence when it does not answer GET /v1/config (start.sh has then stopped it)."""
    result = subprocess.run(
        [BASH, str(SCRIPTS / "start.sh"), str(folder)],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if result.returncode != 0:
        raise RestCatalogStartError(result.stderr.strip() or f"start.sh exited {result.returncode} saying nothing.")
    return server_properties(folder, result.stdout.strip().splitlines()[-1])


def stop_rest_catalog(folder: Path) -> None:
    """Stops the server started in `folder` by its pid and waits until it has exited; raises CalledProcessError
    when stop.sh fails."""
    subprocess.run(
        [BASH, str(SCRIPTS / "stop.sh"), str(folder)],
        capture_output=True,
        text=True,
        timeout=STOP_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=True,
    )


@contextmanager
def rest_catalog(folder: Path) -> Iterator[dict[str, str]]:
    """Yields the pyiceberg properties of a REST catalog server running in `folder`, and stops it afterwards."""
    properties = start_rest_catalog(folder)
    try:
        yield properties
    finally:
        stop_rest_catalog(folder)


CATALOG_KINDS = ("sql", "rest")
"""The catalog kinds the parametrised fixtures run on: pyiceberg's SqlCatalog on SQLite, and the REST server."""


def clear_catalog(catalog: Catalog) -> None:
    """Drops every table and namespace of `catalog` (deepest first), so a test on the shared REST server starts
    from an empty catalog; the files stay in the server's warehouse."""
    namespaces: list[tuple[str, ...]] = []
    pending = [tuple(namespace) for namespace in catalog.list_namespaces()]
    while pending:
        namespace = pending.pop()
        namespaces.append(namespace)
        pending.extend(tuple(child) for child in catalog.list_namespaces(namespace) if tuple(child) != namespace)
    # A JDBC catalog lists the parent of a nested namespace (`a` of `a.b`) without holding it as a namespace.
    for namespace in sorted(namespaces, key=len, reverse=True):
        with suppress(NoSuchNamespaceError):
            for identifier in catalog.list_tables(namespace):
                catalog.drop_table(identifier)
            catalog.drop_namespace(namespace)


@contextmanager
def catalog_properties(kind: str, request: pytest.FixtureRequest, folder: Path) -> Iterator[dict[str, str]]:
    """Gives the pyiceberg properties of an empty catalog of `kind` for one test: a SQLite catalog in `folder`,
    or the session's REST server (started on first use) emptied before and after the test."""
    if kind == "sql":
        (folder / "warehouse").mkdir(parents=True, exist_ok=True)
        yield local_catalog_properties(folder)
        return
    properties: dict[str, str] = request.getfixturevalue("rest_catalog_properties")
    clear_catalog(open_catalog("clear", properties))
    try:
        yield properties
    finally:
        clear_catalog(open_catalog("clear", properties))
