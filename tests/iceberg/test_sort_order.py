"""A table's sort order: every data file a write makes holds its rows in the order the table declares, strings byte by
byte, -0.0 before 0.0 and NaN after every number, nulls where the order says, and records that order's id."""

from __future__ import annotations

import math
from datetime import UTC
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType, TimestamptzType

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.kinds import StatementKind

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "country", StringType()),
    NestedField(3, "score", DoubleType()),
    NestedField(4, "at", TimestampType()),
)
COUNTRIES = ["de", "DE", "fr", "é", "e", "ä", None, "", "zz"]
SCORES = [float("nan"), -0.0, 0.0, float("-inf"), float("inf"), None, 1.5, -2.25, 1e300]
ROWS = 250_000
SOME = "WHERE e.id % 25 = 0"
"""A 25th of the rows, for the tests that need no more than one file's worth."""
BY_COUNTRY_DESC_THEN_DAY_THEN_SCORE = SortOrder(
    SortField(2, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
    SortField(4, DayTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
    SortField(3, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
)


def _sql_list(values: list) -> str:
    def one(value) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, float):
            return f"'{value!r}'::DOUBLE"
        return "'" + value + "'"

    return "[" + ", ".join(one(v) for v in values) + "]"


@pytest.fixture
def catalog(tmp_path: Path):
    catalog = open_local_catalog(tmp_path / "catalog")
    rows = duckdb.sql(  # shuffled: the order of the source is not the order of any file
        f"""SELECT k AS id, {_sql_list(COUNTRIES)}[k % {len(COUNTRIES)} + 1] AS country,
                   {_sql_list(SCORES)}[(k // 3) % {len(SCORES)} + 1] AS score,
                   CASE WHEN k % 97 <> 0 THEN TIMESTAMP '2026-01-01' + to_hours((k * 13) % 2000) END AS at
            FROM (SELECT (range * 7919) % {ROWS} AS k FROM range({ROWS}))"""
    ).to_arrow_table()
    create_or_replace(catalog, "src.events", rows, {})
    return catalog


def _create(catalog, name: str, order: SortOrder, **kwargs) -> None:
    catalog.create_namespace_if_not_exists("out")
    table = catalog.create_table(name, schema=SCHEMA, sort_order=order, **kwargs)
    with table.transaction() as transaction:  # small files: the write rolls several
        transaction.set_properties({"write.target-file-size-bytes": str(24 * 1024)})


def _key(value, kind: str):
    """Iceberg's order of one value: strings by their UTF-8 bytes, -0.0 before 0.0, NaN after every number."""
    if kind == "string":
        return value.encode()
    if kind == "double":
        return (math.isnan(value), 0.0 if math.isnan(value) else value, not math.copysign(1, value) < 0)
    if kind == "day":
        return value.date()
    if kind == "utc_day":
        return value.astimezone(UTC).date()
    return value


def _in_order(first: tuple, second: tuple, fields: list[tuple[str, str, bool, bool]]) -> bool:
    """Whether row `first` may come before row `second` under `fields` (name, kind, descending, nulls first)."""
    for (value_a, value_b), (_, kind, descending, nulls_first) in zip(
        zip(first, second, strict=True), fields, strict=True
    ):
        if value_a is None or value_b is None:
            if value_a is None and value_b is None:
                continue
            return (value_a is None) == nulls_first
        a, b = _key(value_a, kind), _key(value_b, kind)
        if a == b:
            continue
        return (a > b) if descending else (a < b)
    return True


def _files(catalog, name: str):
    return [task.file for task in catalog.load_table(name).scan().plan_files()]


def _assert_each_file_sorted(catalog, name: str, fields: list[tuple[str, str, bool, bool]]) -> int:
    """Assert every data file's rows follow `fields`, file order; return the number of files."""
    files = _files(catalog, name)
    for data_file in files:
        rows = pq.read_table(data_file.file_path.removeprefix("file://"), columns=[f[0] for f in fields])
        values = list(zip(*(rows.column(f[0]).to_pylist() for f in fields), strict=True))
        for first, second in zip(values, values[1:], strict=False):
            assert _in_order(first, second, fields), f"{data_file.file_path}: {first!r} before {second!r}"
    return len(files)


COUNTRY_DAY_SCORE = [
    ("country", "string", True, False),
    ("at", "day", False, True),
    ("score", "double", False, True),
]


def _insert(catalog, name: str, where: str = "") -> None:
    run_statement(
        catalog,
        kind=StatementKind.INSERT,
        target=name,
        query=f"SELECT e.id, e.country, e.score, e.at FROM src.events e {where}",
        sources=["src.events"],
        insert_columns=["id", "country", "score", "at"],
    )


def test_an_insert_into_a_sorted_table_writes_every_file_in_the_tables_order_and_records_it(catalog):
    _create(catalog, "out.sorted", BY_COUNTRY_DESC_THEN_DAY_THEN_SCORE)
    _insert(catalog, "out.sorted")
    order_id = catalog.load_table("out.sorted").sort_order().order_id
    assert _assert_each_file_sorted(catalog, "out.sorted", COUNTRY_DAY_SCORE) > 1
    assert {f.sort_order_id for f in _files(catalog, "out.sorted")} == {order_id}
    assert catalog.load_table("out.sorted").scan().to_arrow().num_rows == ROWS


def test_the_order_holds_under_a_session_collation_that_folds_case(catalog):
    from airflow_lineage_governance.iceberg.session import SessionSettings

    _create(catalog, "out.sorted", BY_COUNTRY_DESC_THEN_DAY_THEN_SCORE)
    run_statement(
        catalog,
        kind=StatementKind.INSERT,
        target="out.sorted",
        query=f"SELECT e.id, e.country, e.score, e.at FROM src.events e {SOME}",
        sources=["src.events"],
        insert_columns=["id", "country", "score", "at"],
        session=SessionSettings(default_collation="nocase"),
    )
    _assert_each_file_sorted(catalog, "out.sorted", COUNTRY_DAY_SCORE)


def test_a_partitioned_sorted_table_gets_each_partitions_files_in_order(catalog):
    _create(
        catalog,
        "out.parts",
        SortOrder(SortField(3, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST)),
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "country")),
    )
    _insert(catalog, "out.parts", SOME)
    files = _files(catalog, "out.parts")
    assert len({f.partition[0] for f in files}) == len(COUNTRIES)
    _assert_each_file_sorted(catalog, "out.parts", [("score", "double", True, False)])
    assert {f.sort_order_id for f in files} == {catalog.load_table("out.parts").sort_order().order_id}


def test_a_merge_rewrites_its_files_in_the_tables_order(catalog):
    _create(catalog, "out.sorted", BY_COUNTRY_DESC_THEN_DAY_THEN_SCORE)
    _insert(catalog, "out.sorted", "WHERE e.id % 50 = 0")
    before = {f.file_path for f in _files(catalog, "out.sorted")}
    rewrite_statement(
        catalog,
        target="out.sorted",
        sources=["src.events"],
        dml=(
            "MERGE INTO out.sorted AS t USING src.events AS s ON t.id = s.id "
            "WHEN MATCHED AND s.id % 3 = 0 THEN UPDATE SET score = -s.score "
            "WHEN NOT MATCHED AND s.id % 25 = 1 THEN INSERT VALUES (s.id, s.country, s.score, s.at)"
        ),
    )
    files = _files(catalog, "out.sorted")
    assert {f.file_path for f in files} - before, "the MERGE rewrote no file"
    _assert_each_file_sorted(catalog, "out.sorted", COUNTRY_DAY_SCORE)
    order_id = catalog.load_table("out.sorted").sort_order().order_id
    assert {f.sort_order_id for f in files if f.file_path not in before} == {order_id}
    assert catalog.load_table("out.sorted").scan().to_arrow().num_rows == ROWS // 50 + ROWS // 25


def test_an_order_with_a_bucket_sorts_by_the_fields_before_it_and_claims_no_order(catalog):
    _create(
        catalog,
        "out.bucketed",
        SortOrder(
            SortField(2, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
            SortField(1, BucketTransform(4), SortDirection.ASC, NullOrder.NULLS_FIRST),
            SortField(3, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
        ),
    )
    _insert(catalog, "out.bucketed", SOME)
    _assert_each_file_sorted(catalog, "out.bucketed", [("country", "string", False, True)])
    assert {f.sort_order_id for f in _files(catalog, "out.bucketed")} == {None}


def test_an_unsorted_table_records_no_order_on_its_files(catalog):
    _create(catalog, "out.plain", SortOrder())
    _insert(catalog, "out.plain", SOME)
    assert {f.sort_order_id for f in _files(catalog, "out.plain")} == {None}


def test_a_day_of_a_timestamp_with_time_zone_sorts_by_its_utc_day_whatever_the_session_time_zone(catalog):
    from airflow_lineage_governance.iceberg.session import SessionSettings

    catalog.create_namespace_if_not_exists("out")
    catalog.create_table(
        "out.zoned",
        schema=Schema(NestedField(1, "at", TimestamptzType()), NestedField(2, "score", DoubleType())),
        sort_order=SortOrder(
            SortField(1, DayTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
            SortField(2, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
        ),
    )
    run_statement(
        catalog,
        kind=StatementKind.INSERT,
        target="out.zoned",
        query=f"SELECT CAST(e.at AS TIMESTAMPTZ), e.score FROM src.events e {SOME}",
        sources=["src.events"],
        insert_columns=["at", "score"],
        session=SessionSettings(time_zone="America/Los_Angeles"),
    )
    order = [("at", "utc_day", False, True), ("score", "double", True, False)]
    _assert_each_file_sorted(catalog, "out.zoned", order)
    order_id = catalog.load_table("out.zoned").sort_order().order_id
    assert {f.sort_order_id for f in _files(catalog, "out.zoned")} == {order_id}
