"""The PostgreSQL engine's own adaptations, on a real PostgreSQL 15 (the session's, `postgres_url`)."""

from __future__ import annotations

import secrets
import threading

import psycopg
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


def test_a_query_started_beside_runs_on_a_second_connection_while_the_first_answers(postgres_url):
    name = f"beside-{secrets.token_hex(4)}"
    # a lock waited for ten seconds at most: a query that did not run beside would fail, not hang
    url = f"{new_schema(postgres_url)}%20-clock_timeout%3D10000&application_name={name}"
    engine = PostgresEngine(url)
    try:
        engine.query("SELECT pg_advisory_lock(?)", [LOCK_KEY])
        waiting = engine.start_query(
            "SELECT pg_advisory_lock(?), pg_backend_pid(), ?",
            [LOCK_KEY, "it's 100%"],
            lambda rows: (rows, threading.current_thread() is threading.main_thread()),
        )
        assert engine.query("SELECT ?", ["answered meanwhile"]) == [("answered meanwhile",)]
        first = engine.query("SELECT pg_backend_pid()")[0][0]
        engine.query("SELECT pg_advisory_unlock(?)", [LOCK_KEY])
        [(_, second, text)], on_the_callers_thread = waiting()
        assert (second != first, text, on_the_callers_thread) == (True, "it's 100%", False)
        assert _connections(postgres_url, name) == 2
    finally:
        engine.close()
    assert _connections(postgres_url, name) == 0


LOCK_KEY = 4242


def _connections(postgres_url: str, name: str) -> int:
    """Return how many connections of the application name the server has."""
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [name]
        ).fetchone()
    return int(found[0]) if found else -1


def test_a_query_started_when_the_server_refuses_a_second_connection_runs_on_the_first(postgres_url):
    url = new_schema(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        found = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = 'lineage'").fetchone()
        admin.execute(f"ALTER DATABASE lineage CONNECTION LIMIT {int(found[0]) + 1 if found else 0}")
        try:
            engine = PostgresEngine(url)
            try:
                first = engine.query("SELECT pg_backend_pid()")[0][0]
                waiting = engine.start_query("SELECT pg_backend_pid(), ?", ["twice"], list)
                assert engine.query("SELECT ?", ["answered first"]) == [("answered first",)]
                assert waiting() == [(first, "twice")]
                assert engine.start_query("SELECT pg_backend_pid()", [], list)() == [(first,)]
            finally:
                engine.close()
        finally:
            admin.execute("ALTER DATABASE lineage CONNECTION LIMIT -1")
