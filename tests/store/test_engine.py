"""What both engines offer alike (`Engine`), on a DuckDB file and a real PostgreSQL 15."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.errors import StoreError
from airflow_lineage_governance.store.postgres_engine import binary_columns

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
    ],
    ids=["a NULL", "two columns"],
)
def test_a_query_of_numbers_that_reads_anything_else_is_refused_with_one_sentence(store_location, sql):
    engine = open_engine(store_location)
    try:
        with pytest.raises(StoreError, match=r": a query of 1 numbers read something else; ask again\.?$"):
            engine.integer_columns(sql, [], 1)
    finally:
        engine.close()


def test_binary_output_of_anything_but_bigint_columns_is_read_as_nothing():
    header = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
    row = (2).to_bytes(2, "big") + b"".join((8).to_bytes(4, "big") + n.to_bytes(8, "big", signed=True) for n in (7, -7))
    end = b"\xff\xff"
    assert [column.tolist() for column in binary_columns(header + row + row + end, 2) or []] == [[7, 7], [-7, -7]]
    assert [column.tolist() for column in binary_columns(header + end, 2) or []] == [[], []]
    null = (
        (2).to_bytes(2, "big") + (8).to_bytes(4, "big") + (7).to_bytes(8, "big") + (-1).to_bytes(4, "big", signed=True)
    )
    narrow = (1).to_bytes(2, "big") + (4).to_bytes(4, "big") + (7).to_bytes(4, "big")
    for data, count in [
        (header + row + null + end, 2),  # a NULL: no value after its length
        (header + row + end, 1),  # two columns read as one
        (header + narrow * 2 + end, 1),  # an INTEGER's four bytes
        (header + row, 2),  # no end
        (b"PGCOPY" + row + end, 2),  # not the binary format
    ]:
        assert binary_columns(data, count) is None
