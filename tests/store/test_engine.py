"""What both engines offer alike (`Engine`), on a DuckDB file and a real PostgreSQL 15."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.errors import StoreError
from airflow_lineage_governance.store.postgres_engine import packed_columns

NUMBERS = [-(2**63), -1, 0, 1, 42, 2**63 - 1]


def test_a_query_of_numbers_comes_back_as_its_columns(store_location):
    engine = open_engine(store_location)
    try:
        texts = ["it's", "100%", "a?b", '"quoted"', "naïve ☃", "C:\\temp\\", "{x,y}"]  # bound in the statement on PG
        columns = engine.integer_columns(
            "SELECT CAST(n AS BIGINT) AS n, CAST(-(n % 1000) AS BIGINT) AS m, CAST(length(array_to_string(CAST(? AS "
            "TEXT[]), '|')) AS BIGINT) AS t FROM unnest(CAST(? AS BIGINT[])) AS u(n) WHERE ? AND length(?) = 9 "
            "ORDER BY n",
            [texts, NUMBERS, True, "it's 100%"],
            3,
        )
        assert [column.tolist() for column in columns] == [
            NUMBERS,
            [-(n % 1000) if n >= 0 else -(n % -1000) for n in NUMBERS],
            [len("|".join(texts))] * len(NUMBERS),
        ]
        none = engine.integer_columns("SELECT CAST(n AS BIGINT) AS n FROM unnest(CAST(? AS BIGINT[])) AS u(n)", [[]], 1)
        assert [column.tolist() for column in none] == [[]]
    finally:
        engine.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT CAST(NULL AS BIGINT) AS n UNION ALL SELECT CAST(1 AS BIGINT)",
        "SELECT CAST(1 AS BIGINT) AS n, CAST(2 AS BIGINT) AS m",
        "SELECT CAST(1 AS INTEGER) AS n",
    ],
    ids=["a NULL", "two columns", "an INTEGER"],
)
def test_a_query_of_numbers_that_reads_anything_else_is_refused_with_one_sentence(store_location, sql):
    engine = open_engine(store_location)
    try:
        with pytest.raises(StoreError, match=r": a query of 1 numbers read something else; ask again\.?$"):
            engine.integer_columns(sql, [], 1)
    finally:
        engine.close()


def test_packed_numbers_of_anything_but_the_rows_asked_are_read_as_nothing():
    def packed(*rows: tuple[int, ...]) -> bytes:
        return b"".join(n.to_bytes(8, "big", signed=True) for row in rows for n in row)

    assert [column.tolist() for column in packed_columns(packed((7, -7), (2**63 - 1, -(2**63))), 2, 2) or []] == [
        [7, 2**63 - 1],
        [-7, -(2**63)],
    ]
    assert [column.tolist() for column in packed_columns(None, 0, 2) or []] == [[], []]  # no rows: NULL
    for data, rows, count in [
        (packed((7, -7)), 2, 2),  # a row holding a NULL: packed as nothing
        (None, 1, 1),  # the one row's NULL
        (packed((7, -7)), 1, 1),  # two columns read as one
        (packed((7, -7))[:12], 1, 1),  # not whole numbers
    ]:
        assert packed_columns(data, rows, count) is None


def test_a_query_started_returns_the_value_of_its_rows_when_waited_for(store_location):
    engine = open_engine(store_location)
    try:
        started = engine.start_query(
            "SELECT n, ? FROM unnest(CAST(? AS BIGINT[])) AS u(n) ORDER BY n", ["a?b", NUMBERS], lambda rows: rows[::-1]
        )
        assert engine.query("SELECT CAST(? AS BIGINT)", [7]) == [(7,)]
        assert started() == [(n, "a?b") for n in reversed(NUMBERS)]
    finally:
        engine.close()
