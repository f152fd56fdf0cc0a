"""Write a statement's whole result as one Parquet data file by DuckDB itself.

Used for tables where DuckDB's file is exactly the file pyiceberg would write.
"""

from __future__ import annotations

import os
import shutil

import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.table import TableProperties
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)

from airflow_lineage_governance.iceberg.data_files import DuckDBFileWriter, WrittenFiles, chunk_bytes, data_location
from airflow_lineage_governance.iceberg.read import local_path

DIRECT_TYPES = (
    BooleanType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    DecimalType,
    DateType,
    TimestampType,
    TimestamptzType,
    StringType,
    BinaryType,
)
"""The column types whose Parquet form DuckDB writes as Iceberg reads it."""
_DAYS = (-719_162, 2_932_896)
"""The dates a Python date holds (years 1 to 9999), as days since 1970-01-01: the Iceberg writer's range."""
_MICROS = (-62_135_596_800_000_000, 253_402_300_799_999_999)
"""The same range for timestamps, as microseconds since 1970-01-01 00:00:00."""


class NotDirectlyWritable(Exception):
    """Raised when DuckDB's file turns out not to be what the table takes; the caller writes through Arrow."""


def directly_writable(metadata: TableMetadata, columns: list[str], location: str) -> bool:
    """Return whether DuckDB may write the result's file itself.

    Args:
        metadata: The table's metadata, as the write's transaction holds it.
        columns: The result's column names, in order.
        location: Where the table's data files go.

    Returns:
        True when the table is unpartitioned and on the local file system, and the result holds exactly its
        columns, in order, each optional (DuckDB writes every column as optional, which pyiceberg refuses for a
        required one) and of a type in DIRECT_TYPES.
    """
    fields = metadata.schema().fields
    return (
        metadata.spec().is_unpartitioned()
        and local_path(location) is not None
        and [f.name for f in fields] == columns
        and all(isinstance(f.field_type, DIRECT_TYPES) and not f.required for f in fields)
    )


def write_directly(metadata: TableMetadata, io: FileIO, writer: DuckDBFileWriter, written: WrittenFiles) -> str | None:
    """Have DuckDB write the result as data files of the table, and record them in `written`.

    DuckDB writes into a folder of the sandbox, rolling to a new file at the table's chunk size (`chunk_bytes`);
    each file is checked, then moved under the table's data location.

    Args:
        metadata: The table's metadata, as the write's transaction holds it.
        io: The table's file IO.
        writer: DuckDB's writer of the result.
        written: The files of this write; each is recorded in it once it is under the table's location.

    Returns:
        None when the files were written; else the first column holding a date or timestamp outside the years 1
        to 9999, which the table cannot store: nothing is written then.

    Raises:
        NotDirectlyWritable: when DuckDB's files are not what the table takes (nothing is written then).
    """
    folder = os.path.join(writer.staging, str(written.write_uuid))
    os.mkdir(folder)
    codec = metadata.properties.get(TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT)
    try:
        writer.write(
            folder,
            {f.name: f.field_id for f in metadata.schema().fields},
            str(codec),
            chunk_bytes(metadata),
            f"00000-{{i}}-{written.write_uuid}",
        )
        staged = []
        for name in sorted(os.listdir(folder)):
            footer = pq.read_metadata(os.path.join(folder, name))
            refused = _refused(metadata, footer)
            if refused is not None:
                return refused
            if footer.num_rows:
                staged.append(name)
        location = data_location(metadata)
        target = local_path(location)
        assert target is not None  # directly_writable checked it
        os.makedirs(target, exist_ok=True)
        for name in staged:
            shutil.move(os.path.join(folder, name), os.path.join(target, name))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for name in staged:
        path = f"{location.rstrip('/')}/{name}"
        try:
            data_file = parquet_file_to_data_file(io, metadata, path)
        except ValueError:
            for moved in staged:
                io.delete(f"{location.rstrip('/')}/{moved}")
            written.files.clear()
            written.rows = 0
            raise NotDirectlyWritable(path) from None
        written.files.append(data_file)
        written.rows += data_file.record_count
    return None


def _refused(metadata: TableMetadata, footer: pq.FileMetaData) -> str | None:
    """Return the first column holding a date or timestamp the table cannot store, from the file's statistics.

    Raises:
        NotDirectlyWritable: when a statistic the check needs is missing.
    """
    fields = metadata.schema().fields
    for group in range(footer.num_row_groups):
        row_group = footer.row_group(group)
        for position, field in enumerate(fields):
            statistics = row_group.column(position).statistics
            limits = _limits(field.field_type)
            if limits is None or row_group.num_rows == 0:
                continue
            if statistics is None or not statistics.has_null_count:
                raise NotDirectlyWritable(field.name)
            if statistics.null_count == row_group.num_rows:
                continue
            if not statistics.has_min_max:
                raise NotDirectlyWritable(field.name)
            low, high = _raw(statistics.min_raw), _raw(statistics.max_raw)
            if low < limits[0] or high > limits[1]:
                return field.name
    return None


def _limits(kind: IcebergType) -> tuple[int, int] | None:
    if isinstance(kind, DateType):
        return _DAYS
    if isinstance(kind, TimestampType | TimestamptzType):
        return _MICROS
    return None


def _raw(value: object) -> int:
    if isinstance(value, int):
        return value
    raise NotDirectlyWritable(repr(type(value)))
