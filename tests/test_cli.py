"""The CLI commands that need no events, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.sandbox import REPO, VENV_BIN, demo_pythonpath
from tests.support.shop import write_shop


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(VENV_BIN / "lineage-governance"), *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def seed(*args: str) -> subprocess.CompletedProcess:
    """Runs the demo platform's seed command (dags/learning_platform/seed.py) as the README shows it."""
    env = {**os.environ, "PYTHONPATH": demo_pythonpath()}
    return subprocess.run(
        [sys.executable, "-m", "learning_platform.seed", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
    )


def test_platform_seed_then_lineage_of_a_pipeline(tmp_path):
    folder = tmp_path / "catalog"
    seeded = seed("--folder", str(folder), "--scale", "0.01", "--json")
    assert seeded.returncode == 0, seeded.stderr
    assert json.loads(seeded.stdout)["crm.learners"] == 30
    text = cli("lineage", "dags/sql/birthday_offers.sql", "--catalog", str(folder))
    assert text.returncode == 0, text.stderr
    shaping = "every row shaped by: crm.learners.date_of_birth FILTER, crm.learners.marketing_consent FILTER"
    assert shaping in text.stdout
    facet = json.loads(cli("lineage", "dags/sql/course_performance.sql", "--catalog", str(folder), "--json").stdout)
    completions = {
        f["field"]: f["transformations"][0]["subtype"] for f in facet["fields"]["completions"]["inputFields"]
    }
    assert completions == {"completed_at": "FILTER", "enrollment_id": "AGGREGATION"}


def test_lineage_from_a_schema_file_and_its_errors(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"crm": {"learners": {"email": "string", "country": "string"}}}))
    sql = tmp_path / "bad.sql"
    sql.write_text("create table out.t as select l.emial from crm.learners l")
    done = cli("lineage", str(sql), "--schema", str(schema))
    assert done.returncode == 2
    assert done.stderr == (
        "lineage-governance: out.t: crm.learners has no column emial; check the spelling against the catalog.\n"
    )
    missing = cli("lineage", str(tmp_path / "none.sql"), "--schema", str(schema))
    assert missing.returncode == 2 and "the SQL file does not exist" in missing.stderr
    merge = tmp_path / "merge.sql"
    merge.write_text("merge into crm.learners t using crm.learners s on t.email = s.email when matched then delete")
    merged = cli("lineage", str(merge), "--schema", str(schema))
    assert merged.returncode == 0, merged.stderr
    assert "crm.learners (MERGE)" in merged.stdout and "email <- crm.learners.email DIRECT IDENTITY" in merged.stdout
    truncate = tmp_path / "truncate.sql"
    truncate.write_text("truncate crm.learners")
    refused = cli("lineage", str(truncate), "--schema", str(schema))
    assert refused.returncode == 2 and "not from TRUNCATE" in refused.stderr


def clean_cli(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Runs the CLI from an empty folder with no setting of ours in the environment and an empty AIRFLOW_HOME."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "LINEAGE_GOVERNANCE"))}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    base.update({"AIRFLOW_HOME": str(tmp_path / "airflow"), **env})
    return subprocess.run(
        [str(VENV_BIN / "lineage-governance"), *args], capture_output=True, text=True, timeout=120, cwd=work, env=base
    )


@pytest.mark.reliability
def test_a_template_reaching_for_python_internals_is_refused(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"crm": {"learners": {"email": "string"}}}))
    hostile = tmp_path / "hostile.sql"
    hostile.write_text(
        "create table out.t as select {{ ''.__class__.__mro__[1].__subclasses__() }} as x, email from crm.learners"
    )
    done = cli("lineage", str(hostile), "--schema", str(schema))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(
        f"lineage-governance: {hostile}: the template reaches for Python internals, which the sandbox refuses"
    )
    assert done.stderr.count("\n") == 1
    undefined = tmp_path / "undefined.sql"
    undefined.write_text("create table out.t as select email from crm.learners where '{{ params.day }}' > ''")
    done = cli(
        "gate",
        "--before",
        str(undefined),
        "--after",
        str(undefined),
        "--schema",
        str(schema),
        "--events",
        str(tmp_path / "none.jsonl"),
        "--rules",
        str(REPO / "governance" / "lineage.toml"),
        "--metadata",
        str(REPO / "governance" / "metadata.toml"),
    )
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"lineage-governance: {undefined}: the template uses a name that is not defined "
        "('params' is undefined); use only ds, ds_nodash, ts"
    )


def test_templates_render_for_the_logical_date_given(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"crm": {"learners": {"email": "string", "country": "string"}}}))
    sql = tmp_path / "dated.sql"
    sql.write_text(
        "create table out.t as select {% if ds == '2025-01-31' and ts.startswith(ds) %}email"
        "{% else %}country{% endif %} as x from crm.learners"
    )
    dated = cli("lineage", str(sql), "--schema", str(schema), "--logical-date", "2025-01-31T02:00:00+00:00")
    assert dated.returncode == 0, dated.stderr
    assert "x <- crm.learners.email DIRECT IDENTITY" in dated.stdout
    today = cli("lineage", str(sql), "--schema", str(schema))
    assert "x <- crm.learners.country DIRECT IDENTITY" in today.stdout
    bad = cli("lineage", str(sql), "--schema", str(schema), "--logical-date", "tomorrow")
    assert bad.returncode == 2 and "--logical-date 'tomorrow' is not an ISO date" in bad.stderr


def test_missing_values_say_which_flag_or_setting_to_give(tmp_path):
    no_rules = clean_cli(tmp_path, "impact", "sales.customers.email")
    assert no_rules.returncode == 2 and no_rules.stderr.startswith("lineage-governance: no lineage.toml: give --rules")
    no_store = clean_cli(
        tmp_path,
        "impact",
        "sales.customers.email",
        "--rules",
        str(REPO / "governance" / "lineage.toml"),
        "--metadata",
        str(REPO / "governance" / "metadata.toml"),
    )
    assert no_store.returncode == 2
    assert no_store.stderr == (
        "lineage-governance: lineage-store.duckdb: no lineage store here; create it with "
        "`lineage-governance store init`.\n"
    )
    rules = clean_cli(tmp_path, "propose", "--events", str(tmp_path / "none.jsonl"))
    assert rules.returncode == 2
    assert rules.stderr == (
        "lineage-governance: no lineage.toml: give --rules, or set [lineage_governance] "
        "governance_dir in airflow.cfg or AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR, or run "
        "where governance/lineage.toml is.\n"
    )
    catalog = clean_cli(tmp_path, "lineage", str(REPO / "dags" / "sql" / "birthday_offers.sql"))
    assert catalog.returncode == 2
    assert catalog.stderr == (
        "lineage-governance: the catalog_folder setting is not set: give --catalog or --schema "
        "or set [lineage_governance] catalog_folder in airflow.cfg or "
        "AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_FOLDER.\n"
    )
    no_catalog = clean_cli(
        tmp_path,
        "check",
        "--events",
        "x.jsonl",
        "--catalog",
        str(tmp_path / "nowhere"),
        "--rules",
        str(REPO / "governance" / "lineage.toml"),
        "--metadata",
        str(REPO / "governance" / "metadata.toml"),
    )
    assert no_catalog.returncode == 2 and "give the folder of an existing one with --catalog" in no_catalog.stderr


def test_defaults_come_from_airflow_config_and_its_environment_variables(tmp_path):
    events, governance = write_shop(tmp_path)
    home = tmp_path / "airflow"
    home.mkdir()
    (home / "airflow.cfg").write_text(f"[lineage_governance]\ngovernance_dir = {governance}\n")
    impact = clean_cli(
        tmp_path, "impact", "sales.customers.email", "--json", AIRFLOW__LINEAGE_GOVERNANCE__EVENTS=str(events)
    )
    assert impact.returncode == 0, impact.stderr
    assert json.loads(impact.stdout)["values"] == ["marts.customer_spend.email"]
    legacy = clean_cli(tmp_path, "impact", "sales.customers.email", LINEAGE_GOVERNANCE_EVENTS=str(events))
    assert legacy.returncode == 0, legacy.stderr
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"sales": {"customers": {"email": "string"}}}))
    sql = tmp_path / "copy.sql"
    sql.write_text("create table marts.copy as select email from sales.customers")
    facet = clean_cli(tmp_path, "lineage", str(sql), "--schema", str(schema), "--json")
    assert facet.returncode == 0, facet.stderr
    assert json.loads(facet.stdout)["fields"]["email"]["inputFields"][0]["namespace"] == "iceberg://shop"
    named = clean_cli(tmp_path, "lineage", str(sql), "--schema", str(schema), "--json", "--namespace", "s3://x")
    assert json.loads(named.stdout)["fields"]["email"]["inputFields"][0]["namespace"] == "s3://x"
