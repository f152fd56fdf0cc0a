from __future__ import annotations

import json
import os
import secrets
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from learning_platform.seed import seed_platform
from tests.scheduler.browser import Browser
from tests.support.stack import REPO, Api, start_stack, stop_stack, token

ADMIN = "admin"
USERS = {ADMIN: "admin", "reader": "viewer"}  # user -> role of the simple auth manager
PASSWORDS = {user: secrets.token_urlsafe(12) for user in USERS}


def plugin_env() -> dict[str, str]:
    """Returns what the stack needs to load the provider's UI plugin: nothing when the installed distribution
    declares its `airflow.plugins` entry point (pyproject.toml), else the setting that makes Airflow load the
    plugins of the providers' info (`plugins` in get_provider_info), for an editable install made before the
    entry point existed."""
    declared = any(e.value.startswith("airflow_lineage_governance.") for e in entry_points(group="airflow.plugins"))
    return {} if declared else {"AIRFLOW__CORE__LAZY_DISCOVER_PROVIDERS": "False"}


def airflow_cfg(events, reports, store) -> str:
    """Returns the airflow.cfg of the stack: the OpenLineage transport and namespace and the governance settings
    (the lineage store the UI plugin reads among them) live only here (no environment variable sets them), as most
    deployments keep them."""
    transport = json.dumps({"type": "file", "log_file_path": str(events), "append": True})
    # A poke interval shorter than a loaded machine takes to end a poke's process lets the scheduler queue the
    # next poke before it sees the last one end, and it then fails the sensor ("state changed externally").
    # Airflow writes its own airflow.cfg, with these two secrets, only when none exists; every component must
    # share the JWT secret, or the api-server refuses the tokens the scheduler's workers present.
    return (
        f"[api_auth]\njwt_secret = {secrets.token_urlsafe(32)}\n\n"
        f"[api]\nsecret_key = {secrets.token_urlsafe(32)}\n\n"
        f"[core]\nsimple_auth_manager_users = {','.join(f'{u}:{r}' for u, r in USERS.items())}\n\n"
        f"[openlineage]\nnamespace = platform\ntransport = {transport}\n\n"
        f"[lineage_governance]\nreport_folder = {reports}\nwait_seconds = 300\npoke_seconds = 20\n"
        f"governance_dir = {REPO / 'governance'}\nstore = {store}\n"
    )


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    """The repo's DAGs under a real api-server, scheduler, dag-processor and triggerer (LocalExecutor) on
    loopback, over a seeded catalog, with the OpenLineage file transport set in airflow.cfg; the scheduler makes
    no runs of its own (only the triggered ones run); stopped by pid at the end."""
    root = tmp_path_factory.mktemp("scheduler")
    dags = root / "dags"
    shutil.copytree(REPO / "dags", dags, ignore=shutil.ignore_patterns("__pycache__"))
    seed_platform(open_local_catalog(root / "catalog"))
    catalog = {
        **local_catalog_properties(root / "catalog"),
        "catalog_name": "default",
        "lineage_namespace": "iceberg://platform",
    }
    home = root / "airflow"
    home.mkdir()
    (home / "airflow.cfg").write_text(
        airflow_cfg(root / "events.jsonl", root / "reports", root / "lineage-store.duckdb")
    )
    # The simple auth manager keeps the passwords it generates here; it adds only users missing from the file.
    (home / "simple_auth_manager_passwords.json.generated").write_text(json.dumps(PASSWORDS))
    env = {
        "AIRFLOW_CONN_ICEBERG_DEFAULT": json.dumps({"conn_type": "iceberg_catalog", "extra": catalog}),
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",  # unpausing must not add a latest-interval run
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",  # named users: anonymous requests are refused
        **plugin_env(),
    }
    url = start_stack(home, dags, env)
    try:
        yield Api(url, token(url, ADMIN, PASSWORDS[ADMIN])), root
    finally:
        stop_stack(home)


@pytest.fixture(scope="session")
def browser(stack, tmp_path_factory):
    """Headless Chromium logged in to the stack's UI as the admin user, through the login form."""
    api, _ = stack
    chromium = Browser(tmp_path_factory.mktemp("chromium"))
    try:
        chromium.log_in(api.url, ADMIN, PASSWORDS[ADMIN])
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """The folder the UI tests save their screenshots in: $SCHEDULER_SCREENSHOTS (e.g. docs, to refresh the
    README's pictures), else a temporary folder."""
    chosen = os.environ.get("SCHEDULER_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
