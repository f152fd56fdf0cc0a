"""The distributed suite's services, started natively on loopback as docker-compose.yaml names them: PostgreSQL
15 (Airflow's metadata database), Redis (the Celery broker), the Iceberg REST catalog, a real Marquez, and
Airflow on CeleryExecutor with two Celery workers (scripts/airflow_stack.py), each stopped by pid. The same
services run benchmarks/distributed_overhead.py, there also on LocalExecutor and without Marquez."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
from cryptography.fernet import Fernet
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from airflow_lineage_governance.iceberg.catalog import open_catalog
from tests.distributed.compose import native_environment
from tests.support.iceberg_rest import rest_catalog
from tests.support.marquez_server import Marquez, marquez_server
from tests.support.stack import Api

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
STACK = SCRIPTS / "airflow_stack.py"
DAGS = Path(__file__).resolve().parent / "dags"
GOVERNANCE = Path(__file__).resolve().parent / "governance"
HEARTBEAT_TIMEOUT_S = 15
"""A task whose worker is gone is failed (and retried) after this many seconds without a heartbeat."""


def free_port() -> int:
    """Returns a TCP port free on 127.0.0.1 at the time of asking."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_script(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> str:
    """Runs a bash script of scripts/; returns its last line of output. Raises RuntimeError with its stderr."""
    done = subprocess.run(
        ["bash", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{Path(args[0]).name} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@dataclass
class Postgres:
    """PostgreSQL 15 of scripts/postgres/start.sh with Airflow's database (login and database `airflow`)."""

    folder: Path
    port: int

    def start(self) -> None:
        run_script(str(SCRIPTS / "postgres" / "start.sh"), str(self.folder), str(self.port))
        run_script(str(SCRIPTS / "postgres" / "create-database.sh"), str(self.folder), str(self.port), "airflow")

    def stop(self) -> None:
        run_script(str(SCRIPTS / "postgres" / "stop.sh"), str(self.folder))


@dataclass
class Redis:
    """Redis of scripts/redis/start.sh."""

    folder: Path
    port: int

    def start(self) -> None:
        run_script(str(SCRIPTS / "redis" / "start.sh"), str(self.folder), str(self.port))

    def stop(self) -> None:
        run_script(str(SCRIPTS / "redis" / "stop.sh"), str(self.folder))


@dataclass
class Cluster:
    """The running services: Airflow's REST API, the catalog, Marquez, and the stack's folders."""

    api: Api
    home: Path
    dags: Path
    catalog_properties: dict[str, str]
    marquez: Marquez | None
    postgres: Postgres
    redis: Redis
    reports: Path
    environment: dict[str, str] = field(default_factory=dict)

    def catalog(self) -> Catalog:
        return open_catalog("platform", self.catalog_properties)

    def component_pid(self, name: str) -> int | None:
        """Returns the pid of a stack component (`scheduler`, `worker-1`, ...), None when it has none."""
        try:
            return int((self.home / "stack" / f"{name}.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def component_args(self, name: str) -> list[str]:
        """Returns the command line the stack started a component with."""
        return list(json.loads((self.home / "stack" / "components.json").read_text())["args"][name])

    def worker_of(self, pid: int) -> str:
        """Returns the stack worker (`worker-1`, `worker-2`) whose process tree holds `pid`."""
        workers = {self.component_pid(f"worker-{n}"): f"worker-{n}" for n in (1, 2)}
        for process in [psutil.Process(pid), *psutil.Process(pid).parents()]:
            if process.pid in workers:
                return workers[process.pid]
        raise LookupError(f"the process {pid} runs under no worker of the stack")

    def kill_worker(self, name: str) -> None:
        """Kills a worker as a lost host: SIGKILL to the worker's process group and to every process under it
        (task supervisors and tasks run in process groups of their own), then waits until all are gone."""
        pid = self.component_pid(name)
        assert pid is not None, name
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        groups = {os.getpgid(p.pid) for p in tree if p.is_running()}
        for group in groups:
            with _gone():
                os.killpg(group, signal.SIGKILL)
        for process in tree:
            with _gone():
                process.kill()
        psutil.wait_procs(tree, timeout=30)
        with _gone():
            os.waitpid(pid, os.WNOHANG)

    def restart_component(self, name: str) -> None:
        """Starts a stopped stack component again as it was first started."""
        subprocess.run(
            [sys.executable, str(STACK), "restart", "--home", str(self.home), "--component", name],
            check=True,
            timeout=60,
            capture_output=True,
        )

    def trigger(self, dag_id: str, logical_date: str) -> str:
        return self.api.trigger(dag_id, logical_date)

    def wait_for(self, dag_id: str, run_id: str, timeout: float = 300) -> str:
        return self.api.wait_for(dag_id, run_id, timeout)

    def tries(self, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> list[dict[str, Any]]:
        """Returns every try of a task instance, as the API lists them."""
        path = f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances/{task_id}"
        path += f"/{map_index}/tries" if map_index >= 0 else "/tries"
        return list(self.api.call("GET", path)["task_instances"])

    def events(self, job_namespace: str = "platform") -> list[dict[str, Any]]:
        """Returns every OpenLineage event Marquez holds for the job namespace, oldest first."""
        assert self.marquez is not None, "this cluster runs without Marquez"
        found: list[dict[str, Any]] = []
        offset = 0
        while True:
            status, page = self.marquez.get(
                "/api/v1/events/lineage", limit=500, offset=offset, sortDirection="asc", before="2100-01-01T00:00:00Z"
            )
            assert status == 200, page
            found += [e for e in page["events"] if e.get("job", {}).get("namespace") == job_namespace]
            offset += len(page["events"])
            if not page["events"] or offset >= page["totalCount"]:
                return found


@contextmanager
def _gone() -> Iterator[None]:
    try:
        yield
    except (ProcessLookupError, ChildProcessError, psutil.NoSuchProcess):
        pass


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.5) -> Any:
    """Returns `check()`'s first truthy answer; raises TimeoutError naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(every)
    raise TimeoutError(f"{what} did not happen within {timeout:g} s")


def admin_token(url: str) -> str:
    """Returns a JWT from the simple auth manager's no-credential endpoint (`simple_auth_manager_all_admins`)."""
    with urllib.request.urlopen(f"{url}/auth/token", timeout=60) as response:
        return str(json.loads(response.read())["access_token"])


def seed(catalog: Catalog) -> None:
    """Creates namespace `dist` with `dist.numbers` (n = 0..999) and the fault tests' empty targets."""
    catalog.create_namespace_if_not_exists("dist")
    numbers = catalog.create_table("dist.numbers", Schema(NestedField(1, "n", LongType(), required=False)))
    numbers.append(pa.table({"n": pa.array(range(1000), pa.int64())}))
    for point in ("before_commit", "after_commit"):
        catalog.create_table(
            f"dist.fault_{point}",
            Schema(
                NestedField(1, "id", LongType(), required=False),
                NestedField(2, "part", LongType(), required=False),
                NestedField(3, "value", LongType(), required=False),
            ),
        )


def stack_env(cluster_env: dict[str, str]) -> list[str]:
    args = []
    for key, value in cluster_env.items():
        args += ["--env", f"{key}={value}"]
    return args


MARK = "DISTRIBUTED_CLUSTER_MARK"
"""The environment variable every process a running cluster starts carries (inherited), with the cluster's own
token: what is left of a cluster after it stopped is found by it."""


def marked_processes(token: str) -> list[psutil.Process]:
    """Returns the running processes whose environment carries the cluster's token (zombies left out)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and process.environ().get(MARK) == token:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def describe(processes: list[psutil.Process]) -> str:
    """Returns `pid command line` of each process, one a line."""
    lines = []
    for process in processes:
        with _gone():
            lines.append(f"{process.pid} {' '.join(process.cmdline())[:200]}")
    return "\n".join(lines)


@contextmanager
def leaving_no_process(token: str, grace: float = 30) -> Iterator[None]:
    """Sets the cluster's token in this process's environment while the block runs, so that every process started
    from it inherits it; afterwards waits up to `grace` s for all of them to end. Raises AssertionError naming
    those still running (after killing them by pid, so that the machine is freed all the same)."""
    outer = os.environ.get(MARK)  # a check inside a running cluster's (the teardown test's) gives it back
    os.environ[MARK] = token
    try:
        yield
    finally:
        if outer is None:
            del os.environ[MARK]
        else:
            os.environ[MARK] = outer
    deadline = time.monotonic() + grace
    while (left := marked_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        named = describe(left)
        for process in left:
            with _gone():
                process.kill()
        raise AssertionError(f"processes of the stopped cluster were still running (killed now):\n{named}")


@contextmanager
def running_cluster(
    root: Path, *, executor: str = "celery", with_marquez: bool = True, dags_from: Path = DAGS
) -> Iterator[Cluster]:
    """Starts every service of the suite, yields the cluster, and stops every service by pid; raises
    AssertionError, naming them, when a process it started is still running afterwards. On `executor` `local`
    Airflow runs on LocalExecutor (on the same PostgreSQL) with no Celery worker; without Marquez the events go to
    `root/events.jsonl` (OpenLineage's file transport). The DAGs are those of `dags_from`."""
    with leaving_no_process(secrets.token_hex(16)), _running_cluster(root, executor, with_marquez, dags_from) as up:
        yield up


@contextmanager
def _running_cluster(root: Path, executor: str, with_marquez: bool, dags_from: Path) -> Iterator[Cluster]:
    # PostgreSQL runs as the `postgres` user when root runs the suite: its folder sits outside pytest's private
    # temporary folder.
    pg_folder = Path(tempfile.mkdtemp(prefix="distributed-pg-"))
    postgres, redis = Postgres(pg_folder, free_port()), Redis(root / "redis", free_port())
    dags = root / "dags"
    shutil.copytree(dags_from, dags, ignore=shutil.ignore_patterns("__pycache__"))
    (dags / "faults").mkdir()
    home, reports = root / "airflow", root / "reports"
    home.mkdir()
    with ExitStack() as stack, ThreadPoolExecutor(4) as pool:
        stack.callback(shutil.rmtree, pg_folder, ignore_errors=True)
        marquez_future = pool.submit(lambda: stack.enter_context(marquez_server())) if with_marquez else None
        catalog_future = pool.submit(lambda: stack.enter_context(rest_catalog(root / "rest-catalog")))
        postgres.start()
        stack.callback(postgres.stop)
        redis.start()
        stack.callback(redis.stop)
        marquez, catalog_properties = marquez_future.result() if marquez_future else None, catalog_future.result()
        seed(open_catalog("platform", catalog_properties))
        api_port = free_port()
        addresses = {
            "postgres": f"127.0.0.1:{postgres.port}",
            "redis": f"127.0.0.1:{redis.port}",
            "marquez-api": marquez.url.removeprefix("http://") if marquez else f"127.0.0.1:{free_port()}",
            "iceberg-rest": catalog_properties["uri"].removeprefix("http://"),
            "airflow-apiserver": f"127.0.0.1:{api_port}",
        }
        connection = {
            "conn_type": "iceberg_catalog",
            "extra": {**catalog_properties, "catalog_name": "default", "lineage_namespace": "iceberg://platform"},
        }
        environment = native_environment(
            addresses,
            {
                "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
                "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
                "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
                "AIRFLOW__CORE__FERNET_KEY": Fernet.generate_key().decode(),
                "AIRFLOW_CONN_ICEBERG_DEFAULT": json.dumps(connection),
                "LINEAGE_GOVERNANCE_REPORT_DIR": str(reports),
            },
        )
        environment.update(
            {
                "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT_S),
                "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "2",
                "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL": "2",
                "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
                "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
                "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
                "AIRFLOW__LINEAGE_GOVERNANCE__POKE_SECONDS": "10",
                "AIRFLOW__LINEAGE_GOVERNANCE__WAIT_SECONDS": "240",
                "AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR": str(GOVERNANCE),
            }
        )
        if executor == "local":
            environment["AIRFLOW__CORE__EXECUTOR"] = "LocalExecutor"
        if marquez is None:
            events = json.dumps({"type": "file", "log_file_path": str(root / "events.jsonl"), "append": True})
            environment["AIRFLOW__OPENLINEAGE__TRANSPORT"] = events
            environment["LINEAGE_GOVERNANCE_EVENTS"] = str(root / "events.jsonl")
        # the components import the provider from this checkout, whichever checkout the venv was installed from
        environment["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        done = subprocess.run(
            [
                sys.executable,
                str(STACK),
                "start",
                "--home",
                str(home),
                "--dags",
                str(dags),
                "--port",
                str(api_port),
                "--executor",
                executor,
                "--workers",
                "2" if executor == "celery" else "0",
                "--restart-on-exit",
                "--timeout",
                "300",
                *stack_env(environment),
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        stack.callback(
            subprocess.run, [sys.executable, str(STACK), "stop", "--home", str(home)], timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip() or done.stdout.strip())
        url = done.stdout.strip().splitlines()[-1]
        yield Cluster(
            Api(url, admin_token(url)), home, dags, catalog_properties, marquez, postgres, redis, reports, environment
        )
