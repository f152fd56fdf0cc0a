"""The lineage corpus: tests/support/corpus.sql and the platform's pipelines."""

from __future__ import annotations

from pathlib import Path

from learning_platform.pipelines import PIPELINES, pipeline_sql

CORPUS_FILE = Path(__file__).with_name("corpus.sql")


def corpus() -> list[str]:
    """Returns every corpus statement, the platform's pipelines first."""
    text = "\n".join(line for line in CORPUS_FILE.read_text().splitlines() if not line.startswith("--"))
    return [pipeline_sql(name) for name in PIPELINES] + [s.strip() for s in text.split(";") if s.strip()]
