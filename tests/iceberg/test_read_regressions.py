"""Reads that once came out wrong, each against DuckDB on a native table holding the same rows: identity partition
values taken from the data files' paths (text where the column is typed, `+` for a space, the string 'null' for
NULL), and row groups holding NaN skipped by a filter DuckDB holds true for NaN."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    BooleanType,
    DecimalType,
    DoubleType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.read import expose_table, lock_down, sandboxed_connection

COPY = "CREATE TABLE shop.copy AS SELECT * FROM shop.orders"


@pytest.fixture
def catalog(tmp_path) -> Catalog:
    made = open_local_catalog(tmp_path)
    made.create_namespace("shop")
    return made


def _orders(
    catalog: Catalog,
    kind: IcebergType,
    duckdb_type: str,
    values: list[Any],
    arrow: pa.DataType,
    partitioned: bool = True,
    properties: dict[str, str] | None = None,
    column: str = "v",
) -> duckdb.DuckDBPyConnection:
    """Writes shop.orders (id, `column`) with pyiceberg, `column` an identity partition when `partitioned`;
    returns a native DuckDB connection holding the same rows in a table of the same name."""
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, column, kind, required=False))
    spec = (
        PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name=column))
        if partitioned
        else UNPARTITIONED_PARTITION_SPEC
    )
    table = catalog.create_table("shop.orders", schema=schema, partition_spec=spec, properties=properties or {})
    rows = pa.table({"id": pa.array(range(1, len(values) + 1), pa.int64()), column: pa.array(values, arrow)})
    table.append(rows)
    native = duckdb.connect()
    native.execute("SET TimeZone = 'UTC'")
    native.execute("CREATE SCHEMA shop")
    native.execute(f"CREATE TABLE shop.orders (id BIGINT, {column} {duckdb_type})")
    native.register("rows_in", rows)
    native.execute("INSERT INTO shop.orders SELECT * FROM rows_in")
    native.unregister("rows_in")
    return native


def _package(catalog: Catalog) -> duckdb.DuckDBPyConnection:
    """The operator's read of shop.orders: a sandboxed connection, the table exposed, then locked down."""
    connection = sandboxed_connection()
    connection.execute("SET TimeZone = 'UTC'")
    read = expose_table(connection, catalog, "shop.orders")
    lock_down(connection, [read])
    return connection


def _copied(connection: duckdb.DuckDBPyConnection) -> tuple[list[str], list[tuple[Any, ...]]]:
    connection.execute(COPY)
    relation = connection.sql("SELECT id, v FROM shop.copy ORDER BY id")
    return [str(kind) for kind in relation.types], relation.fetchall()


def _assert_copy(
    catalog: Catalog, native: duckdb.DuckDBPyConnection, types: list[str], rows: list[tuple[Any, ...]]
) -> None:
    assert _copied(native) == (types, rows)  # what DuckDB itself holds
    assert _copied(_package(catalog)) == (types, rows)


def test_identity_string_partition_values_are_the_written_text(catalog):
    native = _orders(catalog, StringType(), "VARCHAR", ["North America", " lead", None], pa.string())
    _assert_copy(catalog, native, ["BIGINT", "VARCHAR"], [(1, "North America"), (2, " lead"), (3, None)])


def test_identity_boolean_partition_values_are_booleans(catalog):
    native = _orders(catalog, BooleanType(), "BOOLEAN", [True, False, None], pa.bool_())
    _assert_copy(catalog, native, ["BIGINT", "BOOLEAN"], [(1, True), (2, False), (3, None)])


def test_identity_decimal_partition_values_are_decimals(catalog):
    native = _orders(catalog, DecimalType(10, 2), "DECIMAL(10,2)", [Decimal("1.10")], pa.decimal128(10, 2))
    _assert_copy(catalog, native, ["BIGINT", "DECIMAL(10,2)"], [(1, Decimal("1.10"))])


def test_identity_timestamp_partition_values_are_timestamps(catalog):
    moment = dt.datetime(2026, 1, 1, 12, 30, 1)
    native = _orders(catalog, TimestampType(), "TIMESTAMP", [moment], pa.timestamp("us"))
    _assert_copy(catalog, native, ["BIGINT", "TIMESTAMP"], [(1, moment)])


def test_identity_int_partition_values_stay_integer(catalog):
    native = _orders(catalog, IntegerType(), "INTEGER", [7, -2], pa.int32())
    _assert_copy(catalog, native, ["BIGINT", "INTEGER"], [(1, 7), (2, -2)])


def test_nan_rows_are_not_skipped_by_a_filter_nan_passes(catalog):
    # Row groups of 3: pyarrow's min/max leave NaN out, so two row groups say "at most 1000" yet hold a NaN.
    scores = [1.5, math.nan, 3.0, 4.0, 5.0, 6.0, 7.0, math.nan, 9.0, 10.0, 11.0, 1000.0]
    native = _orders(
        catalog,
        DoubleType(),
        "DOUBLE",
        scores,
        pa.float64(),
        partitioned=False,
        properties={"write.parquet.row-group-limit": "3"},
        column="score",
    )
    query = "SELECT id, score FROM shop.orders WHERE score > 1000 ORDER BY id"
    expected = native.sql(query).fetchall()
    assert [row[0] for row in expected] == [2, 8] and all(math.isnan(row[1]) for row in expected)
    got = _package(catalog).sql(query).fetchall()
    assert [row[0] for row in got] == [2, 8] and all(math.isnan(row[1]) for row in got)
