"""The `[lineage_governance]` settings: where each value is found, and that Airflow is read only when needed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from airflow_lineage_governance import settings
from airflow_lineage_governance.errors import LineageGovernanceError
from tests.support.shop import write_shop


@pytest.fixture
def no_settings(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith(("AIRFLOW__LINEAGE_GOVERNANCE__", "LINEAGE_GOVERNANCE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))


def test_airflows_variable_wins_over_the_older_one(no_settings, monkeypatch):
    monkeypatch.setenv("LINEAGE_GOVERNANCE_EVENTS", "old.jsonl")
    assert settings.setting("events") == "old.jsonl"
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__EVENTS", "new.jsonl")
    assert settings.setting("events") == "new.jsonl"


def test_the_older_variables_keep_their_names(no_settings, monkeypatch):
    for key, variable in (
        ("governance_dir", "LINEAGE_GOVERNANCE_DIR"),
        ("report_folder", "LINEAGE_GOVERNANCE_REPORT_DIR"),
        ("wait_seconds", "LINEAGE_GOVERNANCE_WAIT_SECONDS"),
        ("poke_seconds", "LINEAGE_GOVERNANCE_POKE_SECONDS"),
    ):
        monkeypatch.setenv(variable, "7")
        assert settings.setting(key) == "7"


def test_a_needed_value_nothing_sets_is_one_sentence_naming_flag_and_setting(no_settings):
    assert settings.setting("catalog_folder") is None
    assert settings.setting("wait_seconds") == "600"
    with pytest.raises(LineageGovernanceError) as caught:
        settings.required("catalog_folder", "--catalog")
    assert str(caught.value) == (
        "the catalog_folder setting is not set: give --catalog or set [lineage_governance] "
        "catalog_folder in airflow.cfg or AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_FOLDER."
    )


def test_an_undeclared_key_is_a_key_error():
    with pytest.raises(KeyError):
        settings.setting("evnets")


def test_a_cli_call_with_every_path_given_never_imports_airflow(tmp_path):
    events, governance = write_shop(tmp_path)
    code = (
        "import sys; from airflow_lineage_governance.cli import main; "
        f"code = main(['impact', 'sales.customers.email', '--events', {str(events)!r}, "
        f"'--rules', {str(governance / 'lineage.toml')!r}, '--metadata', {str(governance / 'metadata.toml')!r}]); "
        "print(code, sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "0 []"


def test_with_no_airflow_cfg_a_missing_value_is_answered_without_importing_airflow(tmp_path):
    code = (
        "import sys; from airflow_lineage_governance import settings; "
        "print(settings.setting('catalog_folder'), settings.setting('poke_seconds'), "
        "any(m == 'airflow' or m.startswith('airflow.') for m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "LINEAGE_GOVERNANCE"))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "AIRFLOW_HOME": str(tmp_path / "empty")},
    )
    assert done.stdout.splitlines()[-1] == "None 30 False", done.stderr[-2000:]


def test_airflow_cfg_is_read_through_airflows_conf(tmp_path):
    config = tmp_path / "elsewhere.cfg"
    config.write_text("[lineage_governance]\ncatalog_folder = /data/catalog\n")
    code = "from airflow_lineage_governance import settings; print(settings.setting('catalog_folder'))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "LINEAGE_GOVERNANCE"))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "AIRFLOW_HOME": str(tmp_path / "home"), "AIRFLOW_CONFIG": str(config)},
    )
    assert done.stdout.splitlines()[-1] == "/data/catalog", done.stderr[-2000:]


def test_the_openlineage_transport_and_namespace_in_airflow_cfg_only_reach_the_sensor(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    transport = '{"type": "file", "log_file_path": "/data/events.jsonl", "append": true}'
    (home / "airflow.cfg").write_text(
        f"[openlineage]\nnamespace = platform\ntransport = {transport}\n\n"
        "[lineage_governance]\nwait_seconds = 42\nreport_folder = /data/reports\n"
    )
    code = (
        "from airflow_lineage_governance import settings\n"
        "from airflow_lineage_governance.sensors.lineage_complete import default_event_source, "
        "default_job_namespace\n"
        "print(default_event_source(), default_job_namespace(), settings.seconds('wait_seconds'), "
        "settings.seconds('poke_seconds'), settings.run_report_folder('gov', 'manual__1'))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "LINEAGE_GOVERNANCE", "OPENLINEAGE"))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "AIRFLOW_HOME": str(home)},
    )
    assert done.stdout.splitlines()[-1] == "/data/events.jsonl platform 42.0 30.0 /data/reports/gov/manual__1", (
        done.stderr[-2000:]
    )
    env["AIRFLOW__LINEAGE_GOVERNANCE__EVENTS"] = "http://marquez:5000"  # the governance setting comes first
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "AIRFLOW_HOME": str(home)},
    )
    assert done.stdout.splitlines()[-1].startswith("http://marquez:5000 platform"), done.stderr[-2000:]


def test_the_report_folder_defaults_under_airflow_home(no_settings, tmp_path):
    assert (
        settings.run_report_folder("gov", "scheduled__2026-10-01T02:00:00+00:00")
        == tmp_path / "airflow" / "governance-reports" / "gov" / "scheduled__2026-10-01T02:00:00+00:00"
    )


def test_a_seconds_setting_that_is_no_number_is_one_sentence(no_settings, monkeypatch):
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__WAIT_SECONDS", "ten")
    with pytest.raises(LineageGovernanceError, match="^the wait_seconds setting is not a number of seconds"):
        settings.seconds("wait_seconds")


def test_the_governance_dags_store_is_a_file_in_the_report_folder_unless_named(no_settings, monkeypatch, tmp_path):
    monkeypatch.setenv("LINEAGE_GOVERNANCE_REPORT_DIR", str(tmp_path / "reports"))
    assert settings.governance_store() == str(tmp_path / "reports" / "lineage-store.duckdb")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", "stores/lineage.duckdb")
    assert settings.governance_store() == str(tmp_path / "reports" / "stores" / "lineage.duckdb")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", str(tmp_path / "lineage.duckdb"))
    assert settings.governance_store() == str(tmp_path / "lineage.duckdb")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", "postgresql://lineage@db.internal:5432/lineage")
    assert settings.governance_store() == "postgresql://lineage@db.internal:5432/lineage"
