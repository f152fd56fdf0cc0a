"""Which data files a MERGE, UPDATE or DELETE can touch: the queries DuckDB answers it with, and the conjuncts a
file's partition values are enough to answer."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.iceberg.bounds import parse_dml
from airflow_lineage_governance.iceberg.touched import partition_files_query, touched_files_query, unstable_functions
from airflow_lineage_governance.refs import TableRef

TARGET = TableRef(("shop",), "orders")
FILE = "__file"


def test_a_merge_is_cut_to_the_conjuncts_over_the_partition_columns():
    parsed = parse_dml(
        "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.day = s.day AND s.flag "
        "WHEN MATCHED THEN DELETE",
        TARGET,
    )
    assert touched_files_query(parsed, FILE) == (
        'SELECT DISTINCT "t"."__file" FROM shop.orders AS t JOIN shop.changes AS s ON t.id = s.id AND t.day = s.day '
        "AND s.flag"
    )
    assert partition_files_query(parsed, FILE, ["day"]) == (
        'SELECT DISTINCT "t"."__file" FROM shop.orders AS t JOIN shop.changes AS s ON t.day = s.day AND s.flag'
    )


@pytest.mark.parametrize(
    "dml",
    [
        "DELETE FROM shop.orders WHERE id > 5",  # no conjunct over the partition column
        "DELETE FROM shop.orders WHERE day > current_date - 3",  # the time of the call
        "DELETE FROM shop.orders WHERE day::VARCHAR < random()::VARCHAR",  # DuckDB calls random volatile
        "DELETE FROM shop.orders WHERE day > DATE '2026-01-01' OR id > 5",  # an OR reading another column
        "DELETE FROM shop.orders",  # no condition: every file
        "MERGE INTO shop.orders USING shop.changes USING (day) WHEN MATCHED THEN DELETE",
    ],
)
def test_a_statement_its_partition_values_cannot_answer_gets_no_query(dml):
    assert partition_files_query(parse_dml(dml, TARGET), FILE, ["day"]) is None


def test_an_unqualified_column_of_a_statement_with_sources_counts_as_the_target_s():
    parsed = parse_dml(
        "UPDATE shop.orders SET note = 'x' FROM shop.changes AS s WHERE day = s.day AND amount > s.amount", TARGET
    )
    assert partition_files_query(parsed, FILE, ["day"]) == (
        'SELECT DISTINCT "shop"."orders"."__file" FROM shop.orders, shop.changes AS s WHERE day = s.day'
    )


def test_the_unstable_functions_are_duckdb_s_own():
    unstable = unstable_functions()
    assert {"random", "uuid", "nextval", "now", "gen_random_uuid"} <= unstable
    assert not {"lower", "abs", "year", "date_trunc"} & unstable
