"""A running Airflow for the scheduler suite (scripts/airflow_stack.py) and a small client of its REST API."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "airflow_stack.py"
TERMINAL = {"success", "failed"}


def start_stack(home: Path, dags: Path, env: dict[str, str]) -> str:
    """Starts the stack with scripts/airflow_stack.py; returns its URL. Fails the test with the script's sentence."""
    args = [sys.executable, str(SCRIPT), "start", "--home", str(home), "--dags", str(dags), "--timeout", "300"]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or done.stdout.strip())
    return done.stdout.strip().splitlines()[-1]


def stop_stack(home: Path) -> None:
    """Stops every process of the stack by pid."""
    subprocess.run([sys.executable, str(SCRIPT), "stop", "--home", str(home)], check=True, timeout=120)


def token(url: str, username: str, password: str) -> str:
    """Returns a JWT of the user from the simple auth manager's token endpoint (POST /auth/token)."""
    request = urllib.request.Request(
        f"{url}/auth/token",
        method="POST",
        data=json.dumps({"username": username, "password": password}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return str(json.loads(response.read())["access_token"])


def anonymous_get(url: str, accept: str = "text/html") -> tuple[int, str]:
    """Returns the status and body of a GET with no credential at all (no header, no cookie)."""
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@dataclass
class Api:
    """The REST API of a running Airflow (SimpleAuthManager with named users: every call carries `token`)."""

    url: str
    token: str = ""

    def _headers(self, accept: str) -> dict[str, str]:
        return {"Content-Type": "application/json", "Accept": accept, "Authorization": f"Bearer {self.token}"}

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, accept: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/api/v2{path}", data=data, method=method, headers=self._headers(accept)
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw and accept == "application/json" else raw.decode()

    def get(self, path: str, accept: str = "application/json") -> bytes:
        """Returns the body of an authenticated GET of any path of the api-server (a plugin's, say)."""
        request = urllib.request.Request(f"{self.url}/{path.lstrip('/')}", headers=self._headers(accept))
        with urllib.request.urlopen(request, timeout=60) as response:
            return bytes(response.read())

    def trigger(self, dag_id: str, logical_date: str) -> str:
        """Unpauses the DAG and triggers a run for `logical_date`; returns its run id."""
        self.call("PATCH", f"/dags/{dag_id}", {"is_paused": False})
        run = self.call("POST", f"/dags/{dag_id}/dagRuns", {"logical_date": logical_date})
        return str(run["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        return str(self.call("GET", f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}")["state"])

    def wait_for(self, dag_id: str, run_id: str, timeout: float = 900) -> str:
        """Returns the run's final state; raises TimeoutError when it is still running after `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.run_state(dag_id, run_id)
            if state in TERMINAL:
                return state
            time.sleep(3)
        raise TimeoutError(f"{dag_id} run {run_id} did not finish within {timeout:g} s")

    def task_instances(self, dag_id: str, run_id: str) -> dict[str, dict[str, Any]]:
        found = self.call("GET", f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances")
        return {ti["task_id"]: ti for ti in found["task_instances"]}

    def log_lines(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> list[str]:
        """Returns the task log's lines as the UI shows them (every line's event), group markers included."""
        found = self.call(
            "GET",
            f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances/{task_id}"
            f"/logs/{try_number}?full_content=true",
        )
        content = found.get("content", [])
        return [str(item.get("event", "")) if isinstance(item, dict) else str(item) for item in content]

    def log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> str:
        """Returns the task log's text as the UI shows it (every line's event)."""
        return "\n".join(self.log_lines(dag_id, run_id, task_id, try_number))

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        """Returns every run of the DAG."""
        return list(self.call("GET", f"/dags/{dag_id}/dagRuns")["dag_runs"])

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str) -> Any:
        """Returns the value of a task's XCom entry."""
        found = self.call(
            "GET",
            f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances/{task_id}"
            f"/xcomEntries/{key}?deserialize=true",
        )
        value = found["value"]
        return json.loads(value) if isinstance(value, str) and value.startswith("{") else value

    def asset_events(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        """Returns the asset events a DAG run's tasks emitted."""
        query = urllib.parse.urlencode({"source_dag_id": dag_id, "source_run_id": run_id, "limit": 100})
        return list(self.call("GET", f"/assets/events?{query}")["asset_events"])

    def hook_meta(self, connection_type: str) -> dict[str, Any]:
        """Returns the connection form's metadata of a connection type, as the UI reads it."""
        found = json.loads(self.get("ui/connections/hook_meta"))
        return next(entry for entry in found if entry["connection_type"] == connection_type)

    def ui(self, path: str) -> str:
        """Returns the URL of a page of the UI."""
        return f"{self.url}/{path.lstrip('/')}"
