"""The UI plugin's registration: the provider info and the `airflow.plugins` entry point name the same plugin
class, Airflow takes it as a valid plugin, and importing it (as every Airflow process that loads plugins does)
loads neither the app nor the graph."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from airflow.plugins_manager import is_valid_plugin

from airflow_lineage_governance.get_provider_info import get_provider_info
from airflow_lineage_governance.plugins.governance_ui import URL_PREFIX, LineageGovernancePlugin

REPO = Path(__file__).resolve().parents[2]


def test_the_provider_info_and_the_entry_point_name_the_plugin():
    [plugin] = get_provider_info()["plugins"]
    assert plugin == {
        "name": "lineage_governance",
        "plugin-class": "airflow_lineage_governance.plugins.governance_ui.LineageGovernancePlugin",
    }
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    entry = project["entry-points"]["airflow.plugins"]["lineage_governance"]
    assert entry.replace(":", ".") == plugin["plugin-class"]
    assert is_valid_plugin(LineageGovernancePlugin)


def test_the_plugin_mounts_its_app_and_adds_two_pages_and_a_task_tab():
    [app] = LineageGovernancePlugin.fastapi_apps
    assert app["url_prefix"] == URL_PREFIX == "/lineage-governance"
    views = {v["name"]: v for v in LineageGovernancePlugin.external_views}
    assert {n: v["destination"] for n, v in views.items()} == {
        "Governance": "nav",
        "Impact": "nav",
        "Lineage": "task_instance",
    }
    assert not any(v["href"].startswith("/") for v in views.values())  # relative to the UI's base URL
    assert "{DAG_ID}" in views["Lineage"]["href"] and "{RUN_ID}" in views["Lineage"]["href"]


def test_importing_the_plugin_loads_neither_the_app_nor_the_graph():
    code = (
        "import sys, airflow_lineage_governance.plugins.governance_ui as p; "
        "print(sorted(m for m in sys.modules if m.startswith(('airflow_lineage_governance.plugins.app', "
        "'airflow_lineage_governance.graph', 'fastapi', 'jinja2'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    assert "airflow_lineage_governance" not in loaded, loaded
