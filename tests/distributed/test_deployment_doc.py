"""docs/deployment.md's commands: the service scripts are run here as written; the Airflow commands are the ones
the suite's stack ran."""

from __future__ import annotations

import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from tests.distributed.cluster import REPO, Cluster, free_port

DOC = REPO / "docs" / "deployment.md"


def commands() -> list[list[str]]:
    """Returns each line of the document's `sh` blocks, split as the shell splits it."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.S)
    return [shlex.split(line) for block in blocks for line in block.splitlines() if line.strip()]


def test_the_service_commands_run_as_written():
    scripts = [c for c in commands() if c[0] == "bash"]
    assert [Path(c[1]).name for c in scripts] == ["start.sh", "create-database.sh", "start.sh", "stop.sh", "stop.sh"]
    folder = Path(tempfile.mkdtemp(prefix="deployment-doc-"))
    folder.chmod(0o755)  # PostgreSQL runs as the `postgres` user when root runs the test
    names = {
        "/tmp/airflow-pg": str(folder / "pg"),
        "/tmp/airflow-redis": str(folder / "redis"),
        "54329": str(free_port()),
        "63790": str(free_port()),
    }
    try:
        for command in scripts:
            done = subprocess.run(
                [names.get(part, part) for part in command],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, (command, done.stderr)
    finally:
        subprocess.run(["bash", "scripts/redis/stop.sh", str(folder / "redis")], cwd=REPO, check=False)
        subprocess.run(["bash", "scripts/postgres/stop.sh", str(folder / "pg")], cwd=REPO, check=False)
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_the_airflow_commands_are_the_ones_the_suite_ran(cluster: Cluster):
    stack = [c for c in commands() if c[0] == "python"]
    assert [c[2] for c in stack] == ["start", "restart", "stop"]  # the suite's start, its fault tests' restart
    assert {"--executor", "celery", "--workers", "2", "--restart-on-exit"} <= set(stack[0])
    worker = re.search(r"`(airflow celery worker [^`]+)`", DOC.read_text())
    assert worker is not None
    started = cluster.component_args("worker-1")[1:-1]  # after the venv's airflow, before --skip-serve-logs
    assert shlex.split(worker.group(1))[1:] == [part.replace("worker-1", "worker-N") for part in started]
