"""Write a statement's whole result as Parquet data files by DuckDB itself.

Used for tables where DuckDB's files are exactly the files pyiceberg would write.
"""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    _check_pyarrow_schema_compatible,  # pyiceberg's own check of a file it adds (private in 0.12)
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.table import TableProperties
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.transforms import IdentityTransform
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

from airflow_lineage_governance.iceberg.data_files import (
    DuckDBFileWriter,
    WrittenFiles,
    chunk_bytes,
    data_location,
    parquet_compression,
)
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
PARTITION_SOURCE_TYPES = (
    BooleanType,
    IntegerType,
    LongType,
    DecimalType,
    DateType,
    TimestampType,
    TimestamptzType,
    StringType,
)
"""The column types an identity partition DuckDB writes may be over: DuckDB tells their values apart exactly as Iceberg
does (not floats, whose -0.0 and 0.0 DuckDB groups together, nor binary values)."""
_DAYS = (-719_162, 2_932_896)
"""The dates a Python date holds (years 1 to 9999), as days since 1970-01-01: the Iceberg writer's range."""
_MICROS = (-62_135_596_800_000_000, 253_402_300_799_999_999)
"""The same range for timestamps, as microseconds since 1970-01-01 00:00:00."""


class NotDirectlyWritable(Exception):
    """Raised when DuckDB's file turns out not to be what the table takes; the caller writes through Arrow."""


def directly_writable(metadata: TableMetadata, columns: list[str], location: str, *, ordered: bool = False) -> bool:
    """Return whether DuckDB may write the result's files itself.

    Args:
        metadata: The table's metadata, as the write's transaction holds it.
        columns: The result's column names, in order.
        location: Where the table's data files go.
        ordered: Whether the rows are sorted by the table's sort order, which the files must keep.

    Returns:
        True when the table is on the local file system, its compression is one DuckDB writes
        (`data_files.parquet_compression`), the result holds exactly its columns, in order, each
        optional (DuckDB writes every column as optional, which pyiceberg refuses for a required one) and of a type
        in DIRECT_TYPES, and the table is unpartitioned or, for rows in no particular order, partitioned only by
        identity over columns of a type in PARTITION_SOURCE_TYPES.
    """
    fields = metadata.schema().fields
    return (
        (metadata.spec().is_unpartitioned() or (not ordered and partition_columns(metadata) is not None))
        and local_path(location) is not None
        and parquet_compression(metadata) is not None
        and [f.name for f in fields] == columns
        and all(isinstance(f.field_type, DIRECT_TYPES) and not f.required for f in fields)
    )


def partition_columns(metadata: TableMetadata) -> list[str] | None:
    """Return the columns DuckDB partitions the files by, in the spec's order; None when DuckDB cannot.

    Empty for an unpartitioned table; None when a partition field is not an identity over a column of a type in
    PARTITION_SOURCE_TYPES.
    """
    schema = metadata.schema()
    names = []
    for spec_field in metadata.spec().fields:
        source = schema.find_field(spec_field.source_id)
        if not isinstance(spec_field.transform, IdentityTransform) or not isinstance(
            source.field_type, PARTITION_SOURCE_TYPES
        ):
            return None
        names.append(source.name)
    return names


def write_directly(metadata: TableMetadata, io: FileIO, writer: DuckDBFileWriter, written: WrittenFiles) -> str | None:
    """Have DuckDB write the result as data files of the table, and record them in `written`.

    DuckDB writes into a folder of the sandbox, one folder per partition of a partitioned table, rolling to a new
    file at the table's chunk size (`chunk_bytes`); each file is checked, then moved under the table's data location
    (into the same partition folder).

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
    compression = parquet_compression(metadata)
    if compression is None:
        raise NotDirectlyWritable(TableProperties.PARQUET_COMPRESSION_LEVEL)
    partitions = partition_columns(metadata) or []
    folder = os.path.join(writer.staging, str(written.write_uuid))
    os.mkdir(folder)
    # A partition's files get a random part in their name: no two files of one write can meet under one name.
    numbered = "{uuid}" if partitions else "{i}"
    try:
        writer.write(
            folder,
            {f.name: f.field_id for f in metadata.schema().fields},
            compression,
            chunk_bytes(metadata),
            f"00000-{numbered}-{written.write_uuid}",
            partitions,
        )
        staged: dict[str, pq.FileMetaData] = {}
        for name in _files_under(folder):
            footer = pq.read_metadata(os.path.join(folder, name))
            refused = _refused(metadata, footer)
            if refused is not None:
                return refused
            if footer.num_rows:
                staged[name] = footer
        location = data_location(metadata)
        target = local_path(location)
        assert target is not None  # directly_writable checked it
        for name in staged:
            os.makedirs(os.path.dirname(os.path.join(target, name)), exist_ok=True)
            shutil.move(os.path.join(folder, name), os.path.join(target, name))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    described = _DataFiles(metadata)
    for name, footer in staged.items():
        path = f"{location.rstrip('/')}/{name}"
        try:
            data_file = described.data_file(path, footer, os.path.getsize(os.path.join(target, name)))
            _check_partition(metadata, footer, data_file)
        except ValueError:
            for moved in staged:
                io.delete(f"{location.rstrip('/')}/{moved}")
            written.files.clear()
            written.rows = 0
            raise NotDirectlyWritable(path) from None
        written.files.append(data_file)
        written.rows += data_file.record_count
    return None


class _DataFiles:
    """Describe the files of one write as data files of the table, as pyiceberg's `parquet_file_to_data_file` does.

    What the files share (the table's statistics plan and column ids, and each distinct file schema's check) is worked
    out once per write, not once per file.
    """

    def __init__(self, metadata: TableMetadata) -> None:
        """Describe files of the table whose metadata is `metadata`."""
        self.metadata = metadata
        self.schema = metadata.schema()
        self.statistics_plan = compute_statistics_plan(self.schema, metadata.properties)
        self.column_ids = parquet_path_to_id_mapping(self.schema)
        self.checked: list[pa.Schema] = []

    def data_file(self, path: str, footer: pq.FileMetaData, size: int) -> DataFile:
        """Return the data file at `path` from its footer as read.

        Raises:
            ValueError: when the file's schema is not one the table takes.
        """
        schema, metadata = self.schema, self.metadata
        arrow = footer.schema.to_arrow_schema()
        if not any(arrow.equals(seen, check_metadata=True) for seen in self.checked):
            _check_pyarrow_schema_compatible(schema, arrow, format_version=metadata.format_version)
            self.checked.append(arrow)
        statistics = data_file_statistics_from_parquet_metadata(
            parquet_metadata=footer, stats_columns=self.statistics_plan, parquet_column_mapping=self.column_ids
        )
        return DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=path,
            file_format=FileFormat.PARQUET,
            partition=statistics.partition(metadata.spec(), schema),
            file_size_in_bytes=size,
            sort_order_id=None,
            spec_id=metadata.default_spec_id,
            equality_ids=None,
            key_metadata=None,
            **statistics.to_serialized_dict(),
        )


def _files_under(folder: str) -> list[str]:
    """Return the files under `folder`, as paths relative to it, in order."""
    found: list[str] = []
    for root, _, names in os.walk(folder):
        found.extend(os.path.relpath(os.path.join(root, name), folder) for name in names)
    return sorted(found)


def _check_partition(metadata: TableMetadata, footer: pq.FileMetaData, data_file: DataFile) -> None:
    """Check the partition pyiceberg read off the file's statistics is the one value its rows hold.

    pyiceberg takes a partition value from a column's minimum and maximum, and takes None when it finds no statistic;
    a None must then be a column of nulls only, and a value a column with no null.

    Raises:
        ValueError: when a partition value is not what the file's rows hold.
    """
    positions = {name: position for position, name in enumerate(footer.schema.names)}
    for index, name in enumerate(partition_columns(metadata) or []):
        nulls = 0
        for group in range(footer.num_row_groups):
            statistics = footer.row_group(group).column(positions[name]).statistics
            if statistics is None or not statistics.has_null_count:
                raise ValueError(name)
            nulls += statistics.null_count
        if (data_file.partition[index] is None) != (nulls == footer.num_rows):
            raise ValueError(name)


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
