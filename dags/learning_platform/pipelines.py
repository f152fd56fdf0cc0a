"""The platform's pipelines: one SQL file each in `dags/sql/`, rendered as Airflow renders them."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from airflow_lineage_governance.templating import render_sql

NIGHTLY = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)
"""The nominal logical date of the demo's nightly run."""

PIPELINES = (
    "course_performance",
    "learner_activity",
    "marketing_audience",
    "review_corpus",
    "birthday_offers",
    "daily_revenue",
)


def sql_folder() -> Path:
    """Returns the folder of the pipeline SQL files: $LINEAGE_GOVERNANCE_SQL_DIR, else the dags folder's sql/."""
    configured = os.environ.get("LINEAGE_GOVERNANCE_SQL_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[1] / "sql"


def pipeline_sql(name: str, logical_date: datetime = NIGHTLY) -> str:
    """Returns the pipeline's statement rendered for `logical_date` (the `ds` and `logical_date` that Airflow
    passes); raises FileNotFoundError naming the file when the pipeline does not exist."""
    path = sql_folder() / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"no pipeline {name}: {path} does not exist")
    return render(path.read_text(), logical_date, str(path))


def render(text: str, logical_date: datetime = NIGHTLY, name: str = "the SQL template") -> str:
    """Returns the SQL text with Airflow's template variables for `logical_date` filled in, in Jinja's sandbox;
    raises TemplateRenderError naming `name` for a template that cannot be rendered safely."""
    return render_sql(text, logical_date, name)
