"""A real Apache Iceberg REST catalog (scripts/iceberg-rest): what a pyiceberg caller sees where REST differs from
the embedded SQL catalog: commits checked by the server (409), `file:/` metadata locations, a loopback-only
socket, a server that starts and stops by our scripts, and requests bounded by a timeout (a server that does not
answer is one sentence). The read and write tests (test_read.py, test_write.py) run on both catalog kinds."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.types import StringType

from airflow_lineage_governance.iceberg.catalog import is_rest, open_catalog, open_local_catalog
from airflow_lineage_governance.iceberg.errors import CatalogUnreachableError, IcebergError
from airflow_lineage_governance.iceberg.read import DIRECT_SCAN, expose_table, local_path
from airflow_lineage_governance.iceberg.rest import DEFAULT_TIMEOUT_S, BoundedRestCatalog
from tests.support.iceberg_rest import RestCatalogStartError, start_rest_catalog, stop_rest_catalog

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def ids_of(catalog: Catalog, name: str) -> list[int]:
    return sorted(catalog.load_table(name).scan().to_arrow().column("id").to_pylist())


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    """A namespace of the test's own on the shared server."""
    return re.sub(r"\W+", "_", request.node.name).strip("_").lower()


@pytest.fixture
def rest(rest_catalog_properties: dict[str, str]) -> Catalog:
    return open_catalog("rest", rest_catalog_properties)


def server_port(properties: dict[str, str]) -> int:
    return int(properties["uri"].rsplit(":", 1)[1])


def test_create_append_and_read_back(rest: Catalog, namespace: str):
    rest.create_namespace(namespace)
    table = rest.create_table(f"{namespace}.t", schema=SCHEMA)
    table.append(rows([1, 2, 3]))
    table.append(rows([4]))
    assert (namespace,) in rest.list_namespaces()
    assert rest.list_tables(namespace) == [(namespace, "t")]
    assert ids_of(rest, f"{namespace}.t") == [1, 2, 3, 4]
    assert len(rest.load_table(f"{namespace}.t").snapshots()) == 2

    connection = duckdb.connect()
    read = expose_table(connection, rest, f"{namespace}.t")
    assert read.path == DIRECT_SCAN
    assert connection.execute(f"select sum(id) from {namespace}.t").fetchone()[0] == 10


def test_a_stale_commit_is_answered_409_commit_failed(
    rest: Catalog, rest_catalog_properties: dict[str, str], namespace: str
):
    rest.create_namespace(namespace)
    rest.create_table(f"{namespace}.t", schema=SCHEMA).append(rows([1]))
    current = rest.load_table(f"{namespace}.t").current_snapshot().snapshot_id
    commit = {
        "identifier": {"namespace": [namespace], "name": "t"},
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": current + 1}],
        "updates": [],
    }
    request = urllib.request.Request(
        f"{rest_catalog_properties['uri']}/v1/namespaces/{namespace}/tables/t",
        data=json.dumps(commit).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=10)
    assert answer.value.code == 409
    error = json.loads(answer.value.read())["error"]
    assert (error["code"], error["type"]) == (409, "CommitFailedException")
    assert "branch main has changed" in error["message"]

    # pyiceberg retries appends and overwrites itself, but not a schema change: the caller sees the 409.
    first, second = rest.load_table(f"{namespace}.t"), rest.load_table(f"{namespace}.t")
    with first.update_schema() as update:
        update.add_column("w", StringType())
    with pytest.raises(CommitFailedException, match="current schema changed"):
        with second.update_schema() as update:
            update.add_column("z", StringType())
    assert [f.name for f in rest.load_table(f"{namespace}.t").schema().fields] == ["id", "v", "w"]


def test_a_stale_append_is_retried_and_lands(rest: Catalog, namespace: str, caplog: pytest.LogCaptureFixture):
    rest.create_namespace(namespace)
    rest.create_table(f"{namespace}.t", schema=SCHEMA).append(rows([1]))
    first, second = rest.load_table(f"{namespace}.t"), rest.load_table(f"{namespace}.t")
    first.append(rows([2]))
    second.append(rows([3]))
    assert ids_of(rest, f"{namespace}.t") == [1, 2, 3]
    assert "Commit failed due to a concurrent update, retrying" in caplog.text


@pytest.mark.parametrize("kind", ["rest", "sql"])
def test_a_stale_overwrite_raises_validation_exception_on_both_catalogs(
    kind: str, rest: Catalog, namespace: str, tmp_path: Path
):
    catalog = rest if kind == "rest" else open_local_catalog(tmp_path)
    catalog.create_namespace(namespace)
    catalog.create_table(f"{namespace}.t", schema=SCHEMA).append(rows([1]))
    first, second = catalog.load_table(f"{namespace}.t"), catalog.load_table(f"{namespace}.t")
    first.overwrite(rows([10]))
    with pytest.raises(ValidationException, match="Added data files were found matching the filter"):
        second.overwrite(rows([20]))
    assert ids_of(catalog, f"{namespace}.t") == [10]


def test_two_concurrent_overwrites_one_wins_the_other_sees_the_conflict(
    rest_catalog_properties: dict[str, str], rest: Catalog, namespace: str
):
    rest.create_namespace(namespace)
    rest.create_table(f"{namespace}.t", schema=SCHEMA).append(rows([1]))
    tables = [open_catalog(f"writer{i}", rest_catalog_properties).load_table(f"{namespace}.t") for i in (0, 1)]
    start = threading.Barrier(2)
    outcomes: dict[int, BaseException | None] = {}

    def overwrite(i: int) -> None:
        start.wait()
        try:
            tables[i].overwrite(rows([100 + i]))
            outcomes[i] = None
        except Exception as error:  # noqa: BLE001 - the outcome is what the test asserts
            outcomes[i] = error

    threads = [threading.Thread(target=overwrite, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    winners = [i for i, error in outcomes.items() if error is None]
    losers = [error for error in outcomes.values() if error is not None]
    assert len(winners) == 1 and len(losers) == 1, outcomes
    assert isinstance(losers[0], ValidationException | CommitFailedException), repr(losers[0])
    assert ids_of(rest, f"{namespace}.t") == [100 + winners[0]]


def test_two_concurrent_appends_both_land(rest_catalog_properties: dict[str, str], rest: Catalog, namespace: str):
    rest.create_namespace(namespace)
    rest.create_table(f"{namespace}.t", schema=SCHEMA)
    tables = [open_catalog(f"writer{i}", rest_catalog_properties).load_table(f"{namespace}.t") for i in (0, 1)]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def append(i: int) -> None:
        start.wait()
        try:
            tables[i].append(rows([i]))
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=append, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert ids_of(rest, f"{namespace}.t") == [0, 1]


def test_metadata_locations_are_file_colon_slash_and_the_direct_scan_reads_them(
    rest: Catalog, rest_catalog_properties: dict[str, str], namespace: str
):
    warehouse = rest_catalog_properties["warehouse"].removeprefix("file://")
    rest.create_namespace(namespace)
    default = rest.create_table(f"{namespace}.t", schema=SCHEMA)
    default.append(rows([1, 2]))
    default = rest.load_table(f"{namespace}.t")
    # What the server gives: Hadoop's `file:/` for metadata, the warehouse's `file:///` for the table location,
    # and pyiceberg writes data files under the table location.
    assert default.metadata_location.startswith(f"file:{warehouse}/{namespace}/t/metadata/")
    assert default.location() == f"file://{warehouse}/{namespace}/t"
    data_files = [task.file.file_path for task in default.scan().plan_files()]
    assert data_files and all(path.startswith(f"file://{warehouse}/") for path in data_files)

    # A table placed at a `file:/` location keeps that form for its data files.
    elsewhere = Path(warehouse).parent / f"{namespace}-elsewhere"
    placed = rest.create_table(f"{namespace}.placed", schema=SCHEMA, location=f"file:{elsewhere}")
    placed.append(rows([3]))
    placed = rest.load_table(f"{namespace}.placed")
    placed_files = [task.file.file_path for task in placed.scan().plan_files()]
    assert placed_files and all(path.startswith(f"file:{elsewhere}/data/") for path in placed_files)

    for location in [default.metadata_location, placed.metadata_location, *data_files, *placed_files]:
        local = local_path(location)
        assert local is not None and Path(local).is_file(), location

    connection = duckdb.connect()
    reads = [expose_table(connection, rest, f"{namespace}.{name}") for name in ("t", "placed")]
    assert [read.path for read in reads] == [DIRECT_SCAN, DIRECT_SCAN]
    assert connection.execute(
        f"select id from {namespace}.t union all select id from {namespace}.placed order by id"
    ).fetchall() == [(1,), (2,), (3,)]


def listening_addresses(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Returns the local addresses of every listening TCP socket on `port`, from /proc/net/tcp and tcp6."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:
                continue
            # Each 32-bit word is in host (little-endian) order.
            raw = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, width, 8))
            found.append(ipaddress.ip_address(raw))
    return found


def test_the_server_listens_on_127_0_0_1_only(rest_catalog_properties: dict[str, str]):
    port = server_port(rest_catalog_properties)
    assert rest_catalog_properties["uri"] == f"http://127.0.0.1:{port}"
    addresses = listening_addresses(port)
    assert addresses, f"nothing listens on port {port}"
    loopback = ipaddress.IPv4Address("127.0.0.1")
    assert all(a == loopback or getattr(a, "ipv4_mapped", None) == loopback for a in addresses), addresses
    # Another loopback address reaches any socket bound to every interface; ours refuses it. (The machine's
    # non-loopback interface addresses are not probed: tests send traffic to loopback addresses only.)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        with pytest.raises(ConnectionRefusedError):
            probe.connect(("127.0.0.2", port))
    # ::1 is refused too (or unreachable, on a machine without IPv6 loopback).
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        with pytest.raises(OSError):
            probe.connect(("::1", port))


def test_start_writes_pid_and_port_and_stop_ends_the_process(tmp_path: Path):
    properties = start_rest_catalog(tmp_path)
    pid = int((tmp_path / "pid").read_text())
    port = int((tmp_path / "port").read_text())
    assert properties["uri"] == f"http://127.0.0.1:{port}"
    assert servers_for(tmp_path) == [pid]
    with urllib.request.urlopen(f"{properties['uri']}/v1/config", timeout=10) as answer:
        assert answer.status == 200 and "overrides" in json.loads(answer.read())
    stop_rest_catalog(tmp_path)
    assert servers_for(tmp_path) == []
    assert not (tmp_path / "pid").exists() and not (tmp_path / "port").exists()
    stop_rest_catalog(tmp_path)  # stopping a stopped server is not an error


def assert_one_sentence(message: str, *words: str) -> None:
    assert "\n" not in message and message.endswith("."), message
    for word in words:
        assert word in message, message


def test_a_missing_java_is_one_sentence_saying_what_to_install(tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()
    with pytest.raises(RestCatalogStartError) as error:
        start_rest_catalog(tmp_path / "server", env={"PATH": str(empty)})
    assert_one_sentence(str(error.value), "java is not installed", "apt-get install openjdk-17-jre-headless maven")


def test_a_port_in_use_is_one_sentence_and_leaves_no_server(tmp_path: Path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        env = {**os.environ, "ICEBERG_REST_PORT": str(taken.getsockname()[1])}
        with pytest.raises(RestCatalogStartError) as error:
            start_rest_catalog(tmp_path, env=env)
    assert_one_sentence(str(error.value), "exited during start", str(tmp_path / "server.log"))
    assert "BindException" in (tmp_path / "server.log").read_text()
    assert not (tmp_path / "pid").exists() and servers_for(tmp_path) == []


def test_a_server_that_does_not_answer_in_time_is_one_sentence_and_stopped(tmp_path: Path):
    env = {**os.environ, "ICEBERG_REST_START_TIMEOUT": "0"}
    with pytest.raises(RestCatalogStartError) as error:
        start_rest_catalog(tmp_path, env=env)
    assert_one_sentence(str(error.value), "did not answer GET /v1/config within 0 s")
    assert not (tmp_path / "pid").exists()
    assert servers_for(tmp_path) == []


def servers_for(folder: Path) -> list[int]:
    """Returns the pids of the launcher processes serving `folder`."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "lineagegovernance.icebergrest.LoopbackRestServer" in cmdline and str(folder) in cmdline:
            pids.append(int(entry.name))
    return pids


def test_a_catalog_that_does_not_answer_in_time_is_one_sentence():
    # A socket that accepts connections (the backlog) and never answers.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(CatalogUnreachableError) as raised:
            open_catalog("platform", {"type": "rest", "uri": uri, "request-timeout-seconds": "1"})
    assert str(raised.value) == (
        f"catalog platform: the REST catalog at {uri} did not answer within 1 s; "
        "check that the catalog server is running and reachable, then retry the task."
    )
    assert isinstance(raised.value, IcebergError) and raised.value.catalog == "platform"


def test_a_timeout_that_is_not_a_positive_number_is_refused():
    with pytest.raises(ValueError, match="request-timeout-seconds must be a positive number"):
        open_catalog("platform", {"type": "rest", "uri": "http://127.0.0.1:9", "request-timeout-seconds": "0"})


def test_every_request_of_the_rest_catalog_is_bounded(rest_catalog_properties: dict[str, str]):
    catalog = open_catalog("platform", rest_catalog_properties)
    assert isinstance(catalog, BoundedRestCatalog)
    adapter = catalog._session.get_adapter(rest_catalog_properties["uri"])
    assert adapter.timeout == DEFAULT_TIMEOUT_S
    assert is_rest({"uri": "https://catalog.example.org"}) and not is_rest({"type": "sql", "uri": "sqlite://"})


def test_a_sql_catalog_opens_without_importing_the_rest_client(tmp_path):
    """The REST client (requests and its charset detection, about 0.2 s) loads only for a REST catalog: a task on a
    SQL catalog does not pay for it (a fresh interpreter stands for the task's process)."""
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys\n"
        "from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_catalog\n"
        f"catalog = open_catalog('default', local_catalog_properties({str(tmp_path)!r}))\n"
        "catalog.create_namespace('shop')\n"
        "print(sorted(catalog.list_namespaces()), 'requests' in sys.modules)\n"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(repo)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[('shop',)] False"
