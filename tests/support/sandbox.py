"""A throw-away Airflow installation for whole-DAG tests: its own AIRFLOW_HOME (a copy of one migrated SQLite
database), dags folder, local Iceberg catalog and OpenLineage file transport; DAGs run with the real
`airflow dags test` in a subprocess, so each run gets its own environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import is_rest, local_catalog_properties, open_catalog

VENV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
"""The repo's dags folder; it holds the demo platform package `learning_platform` too."""


def demo_pythonpath() -> str:
    """Returns a PYTHONPATH for a subprocess that imports the demo platform (dags/) and this repo's package."""
    inherited = os.environ.get("PYTHONPATH")
    return os.pathsep.join([str(DAGS), str(REPO), *([inherited] if inherited else [])])


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "PATH": f"{VENV_BIN}:{env.get('PATH', '')}",
        }
    )
    return env


def migrate(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(VENV_BIN / "airflow"), "db", "migrate"], env=base_env(home), check=True, capture_output=True, timeout=300
    )


@dataclass
class AirflowRun:
    returncode: int
    log: str
    events_path: Path

    @property
    def events(self) -> list[dict]:
        if not self.events_path.exists():
            return []
        return [json.loads(line) for line in self.events_path.read_text().splitlines() if line.strip()]

    def task_events(self, task_id: str, event_type: str | None = None) -> list[dict]:
        return [
            e
            for e in self.events
            if e["job"]["name"].endswith(f".{task_id}") and (event_type is None or e["eventType"] == event_type)
        ]


class Sandbox:
    def __init__(self, root: Path, template_home: Path) -> None:
        self.root = root
        self.home = root / "airflow"
        shutil.copytree(template_home, self.home)
        self.dags = root / "dags"
        self.dags.mkdir()
        self.catalog_folder = root / "catalog"
        self.catalog_properties = local_catalog_properties(self.catalog_folder)
        """The pyiceberg properties of the `iceberg_default` connection: a local SQLite catalog unless the test
        puts another (a REST catalog's `{"type": "rest", "uri": …}`) here."""
        self.catalog_password: str | None = None
        """The connection's password (the hook passes it as the property `password_property` names)."""
        self.events_path = root / "events.jsonl"

    def catalog_extra(self) -> dict[str, str]:
        return {**self.catalog_properties, "catalog_name": "default", "lineage_namespace": "iceberg://platform"}

    def catalog_connection(self) -> str:
        """Returns the `iceberg_default` connection as Airflow reads it from AIRFLOW_CONN_ICEBERG_DEFAULT."""
        connection: dict[str, object] = {"conn_type": "iceberg_catalog", "extra": self.catalog_extra()}
        if self.catalog_password is not None:
            connection["password"] = self.catalog_password
        return json.dumps(connection)

    def open_catalog(self) -> Catalog:
        """Returns the catalog the sandbox's DAGs use, opened in the test's process."""
        if not is_rest(self.catalog_properties):
            (self.catalog_folder / "warehouse").mkdir(parents=True, exist_ok=True)
        return open_catalog("default", self.catalog_properties)

    def env(self, **overrides: str) -> dict[str, str]:
        env = base_env(self.home)
        env.update(
            {
                "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
                "AIRFLOW__OPENLINEAGE__NAMESPACE": "platform",
                "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                    {"type": "file", "log_file_path": str(self.events_path), "append": True}
                ),
                "AIRFLOW_CONN_ICEBERG_DEFAULT": self.catalog_connection(),
                "LINEAGE_GOVERNANCE_SQL_DIR": str(DAGS / "sql"),
                "LINEAGE_GOVERNANCE_DIR": str(REPO / "governance"),
            }
        )
        env.update(overrides)
        return env

    def write_dag(self, name: str, code: str) -> Path:
        path = self.dags / f"{name}.py"
        path.write_text(code)
        return path

    def copy_repo_dags(self) -> None:
        for item in DAGS.iterdir():
            if item.name == "__pycache__":
                continue
            target = self.dags / item.name
            if item.is_dir():
                shutil.copytree(item, target)
            else:
                shutil.copy(item, target)

    def dags_test(
        self, dag_id: str, logical_date: str = "2026-10-01T02:00:00+00:00", timeout: int = 300, **env_overrides: str
    ) -> AirflowRun:
        done = subprocess.run(
            [str(VENV_BIN / "airflow"), "dags", "test", dag_id, logical_date],
            env=self.env(**env_overrides),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return AirflowRun(done.returncode, done.stdout + done.stderr, self.events_path)
