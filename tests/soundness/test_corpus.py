"""The soundness oracle on the whole lineage corpus: every statement is read, and its lineage cannot lie."""

from __future__ import annotations

import pytest

from tests.support.corpus import corpus
from tests.support.oracle import check, shared_runner

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("sql", corpus(), ids=lambda sql: " ".join(sql.split())[:60])
def test_corpus_statement_is_read_and_sound(sql):
    verdict = check(sql, shared_runner())
    assert verdict.refused is None
    assert verdict.violations == []


def test_oracle_sees_a_lie():
    """The oracle itself: a lineage that hides a column is caught by both checks (a whole-row struct)."""
    from tests.support.oracle import Runner, Verdict  # noqa: F401

    runner = shared_runner()
    query = "select l.learner_id, l.email from crm.learners l"
    names, rows = runner.run(query)
    assert names == ["learner_id", "email"]
    assert any("crm.learners.email#" in row[1] for row in rows)
