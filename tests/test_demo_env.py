"""`make demo` can be pointed at Marquez: an explicit AIRFLOW__OPENLINEAGE__TRANSPORT and LINEAGE_GOVERNANCE_EVENTS
are honoured; every other AIRFLOW* variable of the caller is still left out."""

from __future__ import annotations

import json

from learning_platform.demo import demo_env

HTTP = json.dumps(
    {"type": "http", "url": "http://marquez:5000", "timeout": 2, "retry": {"total": 1, "connect": 1, "read": 1}}
)


def test_the_file_transport_by_default(tmp_path, monkeypatch):
    for variable in ("AIRFLOW__OPENLINEAGE__TRANSPORT", "LINEAGE_GOVERNANCE_EVENTS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor")
    env = demo_env(tmp_path)
    assert json.loads(env["AIRFLOW__OPENLINEAGE__TRANSPORT"]) == {
        "type": "file",
        "log_file_path": str(tmp_path / "events.jsonl"),
        "append": True,
    }
    assert env["LINEAGE_GOVERNANCE_EVENTS"] == str(tmp_path / "events.jsonl")
    assert "AIRFLOW__CORE__EXECUTOR" not in env


def test_an_explicit_transport_is_honoured_and_its_url_read(tmp_path, monkeypatch):
    monkeypatch.delenv("LINEAGE_GOVERNANCE_EVENTS", raising=False)
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__TRANSPORT", HTTP)
    env = demo_env(tmp_path)
    assert env["AIRFLOW__OPENLINEAGE__TRANSPORT"] == HTTP
    assert env["LINEAGE_GOVERNANCE_EVENTS"] == "http://marquez:5000"


def test_an_explicit_event_source_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__TRANSPORT", HTTP)
    monkeypatch.setenv("LINEAGE_GOVERNANCE_EVENTS", "http://marquez-read-replica:5000")
    assert demo_env(tmp_path)["LINEAGE_GOVERNANCE_EVENTS"] == "http://marquez-read-replica:5000"


def test_the_namespace_is_platform_unless_named(tmp_path, monkeypatch):
    monkeypatch.delenv("LINEAGE_GOVERNANCE_DEMO_NAMESPACE", raising=False)
    env = demo_env(tmp_path)
    assert env["AIRFLOW__OPENLINEAGE__NAMESPACE"] == "platform"
    assert json.loads(env["AIRFLOW_CONN_ICEBERG_DEFAULT"])["extra"]["lineage_namespace"] == "iceberg://platform"
    monkeypatch.setenv("LINEAGE_GOVERNANCE_DEMO_NAMESPACE", "demo_two")
    env = demo_env(tmp_path)
    assert env["AIRFLOW__OPENLINEAGE__NAMESPACE"] == "demo_two"
    assert json.loads(env["AIRFLOW_CONN_ICEBERG_DEFAULT"])["extra"]["lineage_namespace"] == "iceberg://demo_two"


def test_the_lineage_store_is_a_duckdb_file_in_the_demo_folder_unless_named(tmp_path, monkeypatch):
    monkeypatch.delenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", raising=False)
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID", "a_developers_own")
    env = demo_env(tmp_path)
    assert env["AIRFLOW__LINEAGE_GOVERNANCE__STORE"] == str(tmp_path / "lineage-store.duckdb")
    assert "AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID" not in env
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", "postgresql://lineage@db.internal:5432/lineage")
    assert demo_env(tmp_path)["AIRFLOW__LINEAGE_GOVERNANCE__STORE"] == "postgresql://lineage@db.internal:5432/lineage"
