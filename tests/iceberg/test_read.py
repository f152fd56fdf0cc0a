"""The read path: DuckDB scans Parquet files directly where that is right, and pyiceberg reads where it is not."""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.types import LongType, StringType

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.iceberg.errors import IcebergError, NamespaceTooDeepError
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.read import (
    ARROW_READER,
    DIRECT_SCAN,
    expose_table,
    lock_down,
    sandboxed_connection,
)
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.refs import TableRef
from tests.support.delete_files import add_position_deletes


def ids(connection: duckdb.DuckDBPyConnection) -> list[int]:
    return sorted(row[0] for row in connection.execute("select id from a.t").fetchall())


def test_direct_scan_then_delete_file_then_schema_evolution(catalog):
    create_or_replace(catalog, "a.t", pa.table({"id": list(range(10)), "v": list(range(10))}), {})
    connection = duckdb.connect()
    read = expose_table(connection, catalog, "a.t")
    assert read.path == DIRECT_SCAN and ids(connection) == list(range(10))

    table = catalog.load_table("a.t")
    add_position_deletes(table, next(iter(table.scan().plan_files())).file.file_path, [0, 3])
    connection = duckdb.connect()
    read = expose_table(connection, catalog, "a.t")
    assert (read.path, read.reason) == (ARROW_READER, "the snapshot has delete files")
    assert ids(connection) == [1, 2, 4, 5, 6, 7, 8, 9]
    assert read.snapshot_id == catalog.load_table("a.t").current_snapshot().snapshot_id

    with catalog.load_table("a.t").update_schema() as update:
        update.rename_column("v", "value")
    connection = duckdb.connect()
    read = expose_table(connection, catalog, "a.t")
    assert read.reason == "the snapshot has delete files"
    assert connection.execute("select sum(value) from a.t").fetchall() == [(sum(range(10)) - 3,)]


def test_an_evolved_schema_is_read_by_field_id_on_the_direct_scan(catalog):
    create_or_replace(
        catalog, "a.t", pa.table({"id": pa.array([1, 2], pa.int32()), "v": [10.5, 20.5], "gone": ["x", "y"]}), {}
    )
    table = catalog.load_table("a.t")
    with table.update_schema() as update:
        update.rename_column("v", "value")
        update.delete_column("gone")
        update.add_column("gone", StringType())
        update.update_column("id", LongType())
    with table.update_schema() as update:
        update.move_first("value")
    table = catalog.load_table("a.t")
    table.append(pa.table({"value": [30.5], "id": pa.array([3], pa.int64()), "gone": ["new"]}))
    connection = duckdb.connect()
    read = expose_table(connection, catalog, "a.t")
    assert read.path == DIRECT_SCAN
    assert [row[:2] for row in connection.execute("describe a.t").fetchall()] == [
        ("value", "DOUBLE"),
        ("id", "BIGINT"),
        ("gone", "VARCHAR"),
    ]
    assert sorted(connection.execute("select * from a.t").fetchall()) == [
        (10.5, 1, None),
        (20.5, 2, None),
        (30.5, 3, "new"),
    ]


def test_an_empty_table_reads_as_empty(catalog):
    catalog.create_namespace("a")
    catalog.create_table("a.t", schema=pa.schema([("id", pa.int64())]))
    connection = duckdb.connect()
    read = expose_table(connection, catalog, "a.t")
    assert read.snapshot_id is None and ids(connection) == []


def test_a_two_level_namespace_is_exposed_as_catalog_schema_table(catalog):
    create_or_replace(catalog, TableRef(("a", "b"), "events"), pa.table({"id": [1, 2, 3]}), {})
    create_or_replace(catalog, TableRef(("b",), "events"), pa.table({"id": [9]}), {})
    connection = duckdb.connect()
    nested = expose_table(connection, catalog, TableRef(("a", "b"), "events"))
    flat = expose_table(connection, catalog, TableRef(("b",), "events"))
    assert nested.table == TableRef(("a", "b"), "events") and flat.table == TableRef(("b",), "events")
    assert connection.execute("select sum(id) from a.b.events").fetchone() == (6,)
    assert connection.execute("select sum(id) from b.events").fetchone() == (9,)


def test_a_namespace_deeper_than_duckdb_names_is_a_sentence(catalog):
    with pytest.raises(NamespaceTooDeepError) as raised:
        expose_table(duckdb.connect(), catalog, TableRef(("a", "b", "c"), "events"))
    assert str(raised.value) == (
        "a.b.c.events: its namespace has 3 levels, and DuckDB names at most two "
        "(catalog.schema); keep the table in a namespace of one or two levels."
    )
    assert issubclass(NamespaceTooDeepError, IcebergError) and issubclass(IcebergError, LineageGovernanceError)


def _register_file_without_partition_column(table, path, rows: pa.Table, partition: tuple) -> None:
    """Adds a data file written by another writer, one that leaves the identity-partition column out of the file
    (its value lives only in the manifest's partition tuple)."""
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    ids = {f.name: f.field_id for f in table.schema().fields}
    fields = [
        pa.field(name, rows.schema.field(name).type, metadata={"PARQUET:field_id": str(ids[name])})
        for name in rows.column_names
    ]
    pq.write_table(rows.cast(pa.schema(fields)), path)
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=pq.read_metadata(path),
        stats_columns=compute_statistics_plan(table.schema(), table.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(table.schema()),
    )
    data_file = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=f"file://{path}",
        file_format=FileFormat.PARQUET,
        partition=Record(*partition),
        file_size_in_bytes=path.stat().st_size,
        sort_order_id=None,
        spec_id=table.metadata.default_spec_id,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
    with table.transaction() as transaction:
        with transaction.update_snapshot().fast_append() as append:
            append.append_data_file(data_file)


def test_an_identity_partition_column_missing_from_a_file_comes_from_the_manifest(catalog, tmp_path):
    create_or_replace(
        catalog,
        "a.t",
        pa.table({"id": pa.array([1], pa.int64()), "region": ["North America"], "day": [dt.date(2026, 1, 1)]}),
        {},
        partition_by=parse_partition_by(["region", "day"]),
    )
    table = catalog.load_table("a.t")
    _register_file_without_partition_column(
        table,
        tmp_path / "other-writer.parquet",
        pa.table({"id": pa.array([2, 3], pa.int64())}),
        ("Europe & Asia", (dt.date(2026, 1, 2) - dt.date(1970, 1, 1)).days),
    )
    connection = sandboxed_connection()
    read = expose_table(connection, catalog, "a.t")
    lock_down(connection, [read])
    assert read.path == DIRECT_SCAN
    assert sorted(connection.execute("select id, region, day from a.t").fetchall()) == [
        (1, "North America", dt.date(2026, 1, 1)),
        (2, "Europe & Asia", dt.date(2026, 1, 2)),
        (3, "Europe & Asia", dt.date(2026, 1, 2)),
    ]
    assert connection.execute("select count(*) from a.t where region = 'Europe & Asia'").fetchall() == [(2,)]
    assert [row[:2] for row in connection.execute("describe a.t").fetchall()] == [
        ("id", "BIGINT"),
        ("region", "VARCHAR"),
        ("day", "DATE"),
    ]
    reference = sorted((r["id"], r["region"], r["day"]) for r in table.refresh().scan().to_arrow().to_pylist())
    assert reference == sorted(connection.execute("select id, region, day from a.t").fetchall())
