"""The wheel built from this repository: it holds the provider and nothing of the demo, installs into a fresh
venv, and its CLI works there on an events file of its own (nothing of the repository on the path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.sandbox import REPO, VENV_BIN
from tests.support.shop import write_shop

UV = VENV_BIN / "uv"  # `make setup` installs uv into the venv


def run(*args: str | Path, **options) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **options)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user of the installed wheel: no PYTHONPATH, no settings of ours, a fresh AIRFLOW_HOME."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith(("AIRFLOW", "LINEAGE_GOVERNANCE", "VIRTUAL_ENV"))
    }
    return {**env, "AIRFLOW_HOME": str(home), **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Builds the wheel from a copy of the package sources (the worktree stays clean)."""
    source = tmp_path_factory.mktemp("source")
    shutil.copytree(
        REPO / "airflow_lineage_governance",
        source / "airflow_lineage_governance",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    built = run(UV, "build", "--wheel", "--out-dir", out, source, cwd=source)
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = out.glob("airflow_lineage_governance-*.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed, its dependencies pinned to this venv's versions (offline from uv's
    cache when it holds them all, else from the index)."""
    folder = tmp_path_factory.mktemp("wheel-venv") / "venv"
    created = run(UV, "venv", "--quiet", "--python", sys.executable, folder)
    assert created.returncode == 0, created.stderr[-3000:]
    frozen = run(UV, "pip", "freeze", "--python", sys.executable)
    constraints = folder.parent / "constraints.txt"
    constraints.write_text(
        "".join(
            line + "\n"
            for line in frozen.stdout.splitlines()
            if line and not line.startswith("-e") and "airflow-lineage-governance" not in line and " @ " not in line
        )
    )
    python = folder / "bin" / "python"
    install = ("pip", "install", "--quiet", "--python", python, "-c", constraints, wheel)
    installed = run(UV, *install, "--offline")
    if installed.returncode != 0:
        installed = run(UV, *install)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return folder


def test_the_wheel_holds_the_provider_and_not_the_demo(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "airflow_lineage_governance/py.typed" in names
    assert "airflow_lineage_governance/settings.py" in names
    assert not [n for n in names if "/platform/" in n or n.endswith("demo.py") or "learning_platform" in n]
    assert not [n for n in names if n.startswith(("dags/", "tests/", "benchmarks/", "governance/"))]


def test_the_installed_cli_answers_from_flags_and_from_settings(venv, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    events, governance = write_shop(tmp_path / "shop")
    cli = venv / "bin" / "lineage-governance"
    where = run(
        venv / "bin" / "python",
        "-c",
        "import airflow_lineage_governance as p; print(p.__file__)",
        cwd=work,
        env=clean_env(tmp_path / "airflow"),
    )
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    helped = run(cli, "--help", cwd=work, env=clean_env(tmp_path / "airflow"))
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "{lineage,impact,upstream,trace,propose,check,findings,gate,design,diff,store,iceberg}" in helped.stdout
    impact = run(
        cli,
        "impact",
        "sales.customers.email",
        "--events",
        events,
        "--rules",
        governance / "lineage.toml",
        "--metadata",
        governance / "metadata.toml",
        cwd=work,
        env=clean_env(tmp_path / "airflow"),
    )
    assert impact.returncode == 0, impact.stderr[-3000:]
    assert "values can change: marts.customer_spend.email" in impact.stdout
    configured = run(
        cli,
        "impact",
        "sales.orders.customer_id",
        "--json",
        cwd=work,
        env=clean_env(
            tmp_path / "airflow",
            AIRFLOW__LINEAGE_GOVERNANCE__EVENTS=str(events),
            AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR=str(governance),
        ),
    )
    assert configured.returncode == 0, configured.stderr[-3000:]
    assert json.loads(configured.stdout)["rows"] == ["marts.customer_spend"]
