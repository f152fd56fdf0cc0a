"""A real Airflow on loopback for the `scheduler` and `distributed` test suites and for trying the provider as a
user would: api-server, scheduler, dag-processor and triggerer (SimpleAuthManager), on LocalExecutor and SQLite, or
on CeleryExecutor with Celery workers (the metadata database and broker given as settings, e.g. PostgreSQL and
Redis), each started as its own process with its pid written down, and stopped by pid.

    python scripts/airflow_stack.py start --home FOLDER --dags FOLDER [--port 0] [--env KEY=VALUE ...]
                                          [--executor celery --workers 2] [--restart-on-exit]
    python scripts/airflow_stack.py restart --home FOLDER --component worker-1
    python scripts/airflow_stack.py stop --home FOLDER

`start` migrates the database when it has not done so yet, picks a free loopback port when given 0, starts the
processes (output in FOLDER/stack/<name>.log; Celery worker N is `worker-N`, hostname `worker-N@<host>`, queue
`default`), waits until the api-server answers, the scheduler and dag-processor report healthy and every worker
answers a Celery ping, writes FOLDER/stack/url, and exits 0; on failure it stops what it started and exits 1 with
one sentence. With `--restart-on-exit` the scheduler and dag-processor are started again when they exit (they
exit when the metadata database goes away). `restart` starts one stopped component again as it was started.
`stop` sends SIGTERM to each recorded process group, then SIGKILL after 20 s.
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
RESTARTED = ("scheduler", "dag-processor")
"""The components that exit when the metadata database goes away, started again under --restart-on-exit."""
WORKER_QUEUE = "default"
WORKER_SLOTS = 2
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    """Returns a TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def worker_args(number: int) -> list[str]:
    """Returns the arguments of Celery worker `number` after `airflow` (docker-compose.yaml runs the same)."""
    return ["celery", "worker", "-H", f"worker-{number}@%h", "-q", WORKER_QUEUE, "-c", str(WORKER_SLOTS)]


def component_args(name: str, port: int) -> list[str]:
    """Returns the arguments of a component after `airflow`."""
    if name.startswith("worker-"):
        return [*worker_args(int(name.removeprefix("worker-"))), "--skip-serve-logs"]
    if name == "api-server":
        return [name, "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    return [name]


def stack_env(home: Path, dags: Path, port: int, extra: dict[str, str]) -> dict[str, str]:
    """Returns the environment every component runs with."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE", "LINEAGE_GOVERNANCE"))}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__AUTH_MANAGER": (
                "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
            ),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
            "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": "600",
            "PATH": f"{VENV_BIN}:{env.get('PATH', '')}",
        }
    )
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


def _launch(folder: Path, name: str, args: list[str], env: dict[str, str]) -> None:
    with (folder / f"{name}.log").open("ab") as log:
        process = subprocess.Popen(
            args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    (folder / f"{name}.pid").write_text(str(process.pid))


def _private(path: Path, text: str) -> None:
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text)


def workers_answer(env: dict[str, str], count: int) -> bool:
    """Returns True when `count` Celery workers answer a ping through the broker."""
    done = subprocess.run(
        [
            str(VENV_BIN / "celery"),
            "--app",
            "airflow.providers.celery.executors.celery_executor.app",
            "inspect",
            "ping",
            "--timeout",
            "5",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        return False
    try:
        answers = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return False
    return sum(1 for name in answers if name.startswith("worker-")) >= count


def start(
    home: Path,
    dags: Path,
    port: int,
    extra: dict[str, str],
    timeout: float,
    *,
    executor: str = "local",
    workers: int = 0,
    restart_on_exit: bool = False,
) -> str:
    """Starts the stack; returns its base URL. Raises RuntimeError with one sentence when it does not come up."""
    home.mkdir(parents=True, exist_ok=True)
    folder = _stack(home)
    port = port or free_port()
    if executor == "celery":
        extra = {"AIRFLOW__CORE__EXECUTOR": "CeleryExecutor", **extra}
    env = stack_env(home, dags, port, extra)
    if not (home / "airflow.db").exists() and not (folder / "migrated").exists():
        done = subprocess.run(
            [str(VENV_BIN / "airflow"), "db", "migrate"], env=env, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            (folder / "migrate.log").write_text(done.stdout + done.stderr)
            raise RuntimeError(f"airflow db migrate failed; see {folder / 'migrate.log'}")
        (folder / "migrated").write_text("")
    names = [*COMPONENTS, *(f"worker-{n}" for n in range(1, workers + 1) if executor == "celery")]
    launched: dict[str, list[str]] = {}
    for name in names:
        args = [str(VENV_BIN / "airflow"), *component_args(name, port)]
        if restart_on_exit and name in RESTARTED:
            args = ["bash", "-c", 'while :; do "$@"; sleep 2; done', name, *args]
        launched[name] = args
        _launch(folder, name, args, env)
    _private(folder / "components.json", json.dumps({"env": env, "args": launched}))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(url) and (executor != "celery" or workers_answer(env, workers)):
            (folder / "url").write_text(url)
            return url
        dead = [name for name in names if not _alive(_pid(folder, name))]
        if dead:
            stop(home)
            raise RuntimeError(f"the Airflow {', '.join(dead)} exited at start; see {folder}/{dead[0]}.log")
        time.sleep(1)
    stop(home)
    raise RuntimeError(f"Airflow on {url} was not healthy within {timeout:g} s; see the logs in {folder}")


def restart(home: Path, name: str) -> None:
    """Starts the component `name` again with the arguments and environment it was first started with. Raises
    RuntimeError when the stack never started it or it is still running."""
    folder = _stack(home)
    try:
        recorded = json.loads((folder / "components.json").read_text())
    except FileNotFoundError:
        raise RuntimeError(f"no stack was started in {home}") from None
    if name not in recorded["args"]:
        raise RuntimeError(f"the stack in {home} has no component {name}")
    if _alive(_pid(folder, name)):
        raise RuntimeError(f"the component {name} is still running")
    _launch(folder, name, recorded["args"][name], recorded["env"])


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
    pids = {path.stem: _pid(folder, path.stem) for path in folder.glob("*.pid")}
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
    up.add_argument("--executor", choices=("local", "celery"), default="local")
    up.add_argument("--workers", type=int, default=2, help="Celery workers (with --executor celery)")
    up.add_argument("--restart-on-exit", action="store_true")
    again = commands.add_parser("restart")
    again.add_argument("--home", required=True, type=Path)
    again.add_argument("--component", required=True)
    down = commands.add_parser("stop")
    down.add_argument("--home", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "stop":
        stop(args.home.resolve())
        return 0
    try:
        if args.command == "restart":
            restart(args.home.resolve(), args.component)
            return 0
        extra = dict(item.split("=", 1) for item in args.env)
        print(
            start(
                args.home.resolve(),
                args.dags.resolve(),
                args.port,
                extra,
                args.timeout,
                executor=args.executor,
                workers=args.workers,
                restart_on_exit=args.restart_on_exit,
            )
        )
    except RuntimeError as error:
        print(f"airflow_stack: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
