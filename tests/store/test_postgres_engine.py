"""The PostgreSQL engine's own adaptations, on a real PostgreSQL 15 (the session's, `postgres_url`)."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.store.postgres_engine import PostgresEngine, array_literal
from tests.store.conftest import new_schema

TEXTS = ['say "hi"', "C:\\temp\\", None, "NULL", "", "a,b", "{c}", " padded ", "naïve ☃", 'back\\"slash']


def test_lists_reach_the_database_as_the_arrays_they_are(postgres_url):
    engine = PostgresEngine(new_schema(postgres_url))
    try:
        numbers = [-(2**63), 0, None, 2**63 - 1, 42]
        texts = [text for text in TEXTS if text is not None]
        assert engine.query(
            "SELECT CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BOOLEAN[]), CAST(? AS "
            "TEXT[]), CAST(? AS BIGINT[])",
            [TEXTS, texts, numbers, [True, False, None], ["plain", "words"], []],
        ) == [(TEXTS, texts, numbers, [True, False, None], ["plain", "words"], [])]
        keys = list(range(-30_000, 30_000, 3))
        assert engine.query("SELECT COUNT(*), SUM(k) FROM unnest(CAST(? AS BIGINT[])) AS k", [keys]) == [
            (len(keys), sum(keys))
        ]
    finally:
        engine.close()


def test_an_array_of_another_kind_of_element_is_refused_with_one_sentence():
    assert array_literal([1, 2]) == "{1,2}"
    assert array_literal(["a", "b"]) == '{"a","b"}'
    with pytest.raises(TypeError, match=r"^an array sent to the lineage store's PostgreSQL holds a float$"):
        array_literal([1, 2.5])
