"""A real Airflow on loopback for the `scheduler` test suite and for trying the provider as a user would:
api-server, scheduler, dag-processor and triggerer (LocalExecutor, SQLite, SimpleAuthManager), each started as
its own process with its pid written down, and stopped by pid.

    python scripts/airflow_stack.py start --home FOLDER --dags FOLDER [--port 0] [--env KEY=VALUE ...]
    python scripts/airflow_stack.py stop --home FOLDER

`start` migrates the database when it has none, picks a free loopback port when given 0, starts the four
processes (output in FOLDER/stack/<name>.log), waits until the api-server answers and the scheduler and
dag-processor report healthy, writes FOLDER/stack/url, and exits 0; on failure it stops what it started and
exits 1 with one sentence. `stop` sends SIGTERM to each recorded process group, then SIGKILL after 20 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    """Returns a TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stack_env(home: Path, dags: Path, port: int, extra: dict[str, str]) -> dict[str, str]:
    """Returns the environment every component runs with."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE", "LINEAGE_GOVERNANCE"))}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__AUTH_MANAGER":
            "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
        "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": "600",
        "PATH": f"{VENV_BIN}:{env.get('PATH', '')}",
    })
    env.update(extra)
    return env


def _stack(home: Path) -> Path:
    folder = home / "stack"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _get_json(url: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            data = json.loads(response.read())
            return data if isinstance(data, dict) else None
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        return None


def healthy(url: str) -> bool:
    """Returns True when the api-server answers and reports its scheduler and dag-processor healthy."""
    health = _get_json(f"{url}/api/v2/monitor/health")
    if health is None:
        return False
    states = {name: (health.get(name) or {}).get("status") for name in ("metadatabase", "scheduler", "dag_processor")}
    return all(state == "healthy" for state in states.values())


def start(home: Path, dags: Path, port: int, extra: dict[str, str], timeout: float) -> str:
    """Starts the stack; returns its base URL. Raises RuntimeError with one sentence when it does not come up."""
    home.mkdir(parents=True, exist_ok=True)
    folder = _stack(home)
    port = port or free_port()
    env = stack_env(home, dags, port, extra)
    if not (home / "airflow.db").exists():
        done = subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"], env=env, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            (folder / "migrate.log").write_text(done.stdout + done.stderr)
            raise RuntimeError(f"airflow db migrate failed; see {folder / 'migrate.log'}")
    for name in COMPONENTS:
        args = [str(VENV_BIN / "airflow"), name]
        if name == "api-server":
            args += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
        with (folder / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        (folder / f"{name}.pid").write_text(str(process.pid))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(url):
            (folder / "url").write_text(url)
            return url
        dead = [name for name in COMPONENTS if not _alive(_pid(folder, name))]
        if dead:
            stop(home)
            raise RuntimeError(f"the Airflow {', '.join(dead)} exited at start; see {folder}/{dead[0]}.log")
        time.sleep(1)
    stop(home)
    raise RuntimeError(f"Airflow on {url} was not healthy within {timeout:g} s; see the logs in {folder}")


def _pid(folder: Path, name: str) -> int | None:
    try:
        return int((folder / f"{name}.pid").read_text())
    except (FileNotFoundError, ValueError):
        return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def stop(home: Path, grace: float = 20.0) -> None:
    """Stops every recorded component (its whole process group), SIGTERM first, SIGKILL after `grace` s."""
    folder = _stack(home)
    pids = {name: _pid(folder, name) for name in COMPONENTS}
    for pid in pids.values():
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGTERM)  # type: ignore[arg-type]
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids.values()):
        time.sleep(0.2)
    for name, pid in pids.items():
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)  # type: ignore[arg-type]
            except ProcessLookupError:
                pass
        (folder / f"{name}.pid").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("start")
    up.add_argument("--home", required=True, type=Path)
    up.add_argument("--dags", required=True, type=Path)
    up.add_argument("--port", type=int, default=0)
    up.add_argument("--timeout", type=float, default=180)
    up.add_argument("--env", action="append", default=[], help="KEY=VALUE for every component")
    down = commands.add_parser("stop")
    down.add_argument("--home", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "stop":
        stop(args.home.resolve())
        return 0
    extra = dict(item.split("=", 1) for item in args.env)
    try:
        print(start(args.home.resolve(), args.dags.resolve(), args.port, extra, args.timeout))
    except RuntimeError as error:
        print(f"airflow_stack: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
