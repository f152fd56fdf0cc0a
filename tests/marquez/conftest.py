"""The session's real Marquez, and one fresh run of `make demo`'s platform whose events the tests post to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.marquez_server import Marquez, marquez_server, missing_tools

REPO = Path(__file__).resolve().parents[2]
DEMO_SECONDS = 900


@dataclass(frozen=True)
class DemoRun:
    """One run of the demo (`python -m learning_platform.demo`) in its own folder and namespace."""

    namespace: str
    """The job namespace; the datasets are in `iceberg://<namespace>`."""
    events_path: Path
    output: str

    @property
    def dataset_namespace(self) -> str:
        return f"iceberg://{self.namespace}"

    @property
    def lines(self) -> list[str]:
        return [line for line in self.events_path.read_text().splitlines() if line.strip()]

    @property
    def events(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]


def run_demo(folder: Path, namespace: str) -> DemoRun:
    """Runs the demo as `make demo` does, its files in `folder`, its events into folder/events.jsonl (the file
    transport) under the job namespace `namespace`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE", "LINEAGE_GOVERNANCE"))}
    inherited = os.environ.get("PYTHONPATH")
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(REPO / "dags"), str(REPO), *([inherited] if inherited else [])]),
            "LINEAGE_GOVERNANCE_DEMO_DIR": str(folder),
            "LINEAGE_GOVERNANCE_DEMO_NAMESPACE": namespace,
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "learning_platform.demo"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=DEMO_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return DemoRun(namespace, folder / "events.jsonl", done.stdout)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """A fresh run of the demo, in a namespace of its own (`demo_<hex>`)."""
    return run_demo(tmp_path_factory.mktemp("demo"), f"demo_{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="session")
def marquez(request: pytest.FixtureRequest) -> Iterator[Marquez]:
    """A real Marquez 0.51.1 started for the session by ../shared/marquez/start.sh and stopped by its stop.sh;
    skipped, with the reason printed, only when Java, Maven or PostgreSQL 15 is not installed."""
    missing = missing_tools()
    if missing:
        reason = f"no real Marquez: {', '.join(missing)} missing (scripts/install-system-deps.sh installs them)"
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"SKIPPED the Marquez tests: {reason}")
        pytest.skip(reason)
    with marquez_server() as server:
        yield server
