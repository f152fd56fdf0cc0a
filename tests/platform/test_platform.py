"""The demo platform: its eight tables in a real local Iceberg catalog, deterministic, and its SQL files."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from airflow_lineage_governance.iceberg.catalog import lineage_schema, open_local_catalog, table_names
from airflow_lineage_governance.refs import TableRef
from learning_platform.pipelines import PIPELINES, pipeline_sql, sql_folder
from learning_platform.seed import generate, seed_platform
from learning_platform.tables import SOURCE_TABLES

EXPECTED_COLUMNS = {
    "crm.learners": [
        "learner_id",
        "full_name",
        "email",
        "country",
        "marketing_consent",
        "status",
        "date_of_birth",
        "created_at",
    ],
    "learning.courses": ["course_id", "title", "category", "price_usd", "published_at"],
    "learning.enrollments": ["enrollment_id", "learner_id", "course_id", "enrolled_at", "completed_at"],
    "learning.reviews": ["review_id", "course_id", "learner_id", "rating", "body", "created_at"],
    "learning.events": ["event_id", "learner_id", "course_id", "event_type", "occurred_at"],
    "billing.payments": ["payment_id", "learner_id", "course_id", "amount", "status", "paid_at"],
}
EXPECTED_ROWS = {
    "crm.learners": 3000,
    "learning.courses": 60,
    "learning.enrollments": 9000,
    "learning.reviews": 3000,
    "learning.events": 30000,
    "billing.payments": 8000,
    "billing.refunds": 400,
    "support.tickets": 600,
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    catalog = open_local_catalog(tmp_path_factory.mktemp("platform"))
    seed_platform(catalog)
    return catalog


def test_eight_source_tables_with_the_named_columns(catalog):
    names = table_names(catalog)
    assert set(SOURCE_TABLES) <= set(names)
    assert len(SOURCE_TABLES) == 8
    schema = lineage_schema(catalog)
    for table, columns in EXPECTED_COLUMNS.items():
        assert list(schema[TableRef.parse(table)]) == columns


def test_row_counts_are_deterministic(catalog):
    counts = {name: catalog.load_table(name).scan().to_arrow().num_rows for name in SOURCE_TABLES}
    assert counts == EXPECTED_ROWS


def test_same_seed_same_rows_other_seed_other_rows():
    first, again, other = generate(seed=7, scale=0.05), generate(seed=7, scale=0.05), generate(seed=8, scale=0.05)
    assert all(first[name].equals(again[name]) for name in first)
    assert not first["crm.learners"].equals(other["crm.learners"])


def test_scale_multiplies_rows():
    assert generate(scale=0.1)["learning.events"].num_rows == 3000


def test_some_review_bodies_carry_personal_data(catalog):
    bodies = catalog.load_table("learning.reviews").scan().to_arrow().column("body").to_pylist()
    with_email = [b for b in bodies if "@example.com" in b]
    assert 0 < len(with_email) < len(bodies) // 5


def test_incremental_table_exists_empty(catalog):
    assert catalog.load_table("analytics.daily_revenue").scan().to_arrow().num_rows == 0


def test_seeding_again_replaces_rather_than_appends(catalog):
    seed_platform(catalog, scale=0.01)
    assert catalog.load_table("crm.learners").scan().to_arrow().num_rows == 30
    seed_platform(catalog)
    assert catalog.load_table("crm.learners").scan().to_arrow().num_rows == 3000


@pytest.mark.parametrize("name", PIPELINES)
def test_sql_files_parse_as_duckdb(name):
    assert (sql_folder() / f"{name}.sql").is_file()
    statement = sqlglot.parse_one(pipeline_sql(name), read="duckdb")
    assert statement.key in ("create", "insert")


def test_the_seed_command_refuses_a_scale_of_zero(tmp_path, capsys):
    from learning_platform.seed import main

    assert main(["--folder", str(tmp_path / "catalog"), "--scale", "0"]) == 2
    assert capsys.readouterr().err == "learning_platform.seed: --scale must be above 0, not 0.0.\n"
    assert not (tmp_path / "catalog").exists()


def test_the_dag_processor_parses_the_dags_and_skips_the_demo_package():
    from airflow.utils.file import list_py_file_paths

    from tests.support.sandbox import DAGS

    assert sorted(Path(p).name for p in list_py_file_paths(str(DAGS))) == [
        "lineage_governance.py",
        "platform_nightly.py",
    ]
