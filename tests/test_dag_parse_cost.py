"""Parsing a DAG costs nothing extra: importing the provider's operator, sensor, hook and DAG factory modules,
and each of the repo's DAG files, in a fresh interpreter loads none of the heavy libraries the work needs (they
load inside execute(), get_conn() and the facet methods)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pyiceberg", "duckdb", "pyarrow", "sqlglot", "networkx", "openlineage.client")
MODULES = (
    "airflow_lineage_governance.operators.iceberg_sql",
    "airflow_lineage_governance.sensors.lineage_complete",
    "airflow_lineage_governance.hooks.iceberg",
    "airflow_lineage_governance.dags.governance",
)


def heavy_after(code: str, tmp_path: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE", "LINEAGE"))}
    env.update(
        {
            "AIRFLOW_HOME": str(tmp_path / "airflow"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "dags")]),
        }
    )
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, cwd=REPO / "dags"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_provider_modules_import_without_heavy_libraries(tmp_path):
    assert heavy_after("\n".join(f"import {module}" for module in MODULES), tmp_path) == []


@pytest.mark.parametrize("dag_file", ["platform_nightly.py", "lineage_governance.py"])
def test_each_dag_file_imports_without_heavy_libraries(dag_file, tmp_path):
    code = f"import runpy\nns = runpy.run_path({str(REPO / 'dags' / dag_file)!r})\nassert ns['dag'].tasks"
    assert heavy_after(code, tmp_path) == []
