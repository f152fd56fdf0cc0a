"""Writing a statement's result into a table's Parquet data files in bounded memory.

The result is streamed as Arrow record batches; the files of a write that did not commit are removed.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
from pyarrow import fs
from pyiceberg.io import FileIO
from pyiceberg.manifest import DataFile
from pyiceberg.table import TableProperties
from pyiceberg.table.metadata import TableMetadata

if TYPE_CHECKING:
    import duckdb

CHUNK_BYTES = 32 * 1024 * 1024
"""The most Arrow bytes of a result held in Python at once: each chunk becomes one data file per partition."""
WRITERS = 2
"""The chunks encoded into Parquet at once, each in a thread of its own, while DuckDB makes the next one."""
BATCH_ROWS = 122_880
"""The rows of each record batch DuckDB hands over (its own row-group size)."""


@dataclass(frozen=True)
class Compression:
    """The Parquet compression of a table's data files: a codec and its level (None: the codec has none)."""

    codec: str
    level: int | None = None


def parquet_compression(metadata: TableMetadata) -> Compression | None:
    """Return the compression the table's properties ask of its data files, as pyiceberg's own writer applies it.

    zstd at the table's `write.parquet.compression-level`, else at the level pyiceberg's writer (pyarrow) takes
    when none is set; another codec as it is.

    Returns:
        The compression, or None when DuckDB cannot write it (a level set for a codec other than zstd, or a level
        that is not a whole number, which pyiceberg's writer refuses in its own words).
    """
    properties = metadata.properties
    codec = str(properties.get(TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT))
    level = properties.get(TableProperties.PARQUET_COMPRESSION_LEVEL)
    zstd = codec.lower() == "zstd"
    if level is None:
        return Compression(codec, pa.Codec.default_compression_level("zstd") if zstd else None)
    try:
        return Compression(codec, int(level)) if zstd else None
    except ValueError:
        return None


@dataclass(frozen=True)
class DuckDBFileWriter:
    """DuckDB writing a result, cast to the table's types, as Parquet files into a staging folder.

    The staging folder of the sandbox is the only folder DuckDB may write to.
    """

    staging: str
    write: Callable[[str, dict[str, int], Compression, int, str, list[str]], None]
    """Writes the result into a folder in `staging` (its first argument), each column with its field id (by
    name), in a compression, rolling to a new file past a size in bytes, the files named by a pattern, in one
    folder per value of the partition columns (none: all in the folder)."""


@dataclass(frozen=True)
class ResultStream:
    """A statement's result as a schema and a function that streams its record batches afresh on each call.

    A retried commit writes its files again.
    """

    schema: pa.Schema
    batches: Callable[[], Iterator[pa.RecordBatch]]
    writer: DuckDBFileWriter | None = None
    """DuckDB's own writer of the result as one Parquet file, when the statement may use it."""
    ordered: Callable[[str], ResultStream] | None = None
    """Returns the same result sorted by DuckDB by ORDER BY keys over its columns; None when it cannot be sorted."""


def write_parquet(
    relation: duckdb.DuckDBPyRelation,
    folder: str,
    field_ids: dict[str, int],
    compression: Compression,
    file_bytes: int,
    pattern: str,
    partition_by: list[str],
) -> None:
    """Have DuckDB write the rows of `relation` as Parquet files into `folder` (a DuckDBFileWriter's `write`).

    Args:
        relation: The rows, in the table's types.
        folder: Where the files go, inside the staging folder.
        field_ids: Each column's field id, by name.
        compression: The compression codec and level (`parquet_compression`).
        file_bytes: The size past which DuckDB starts a new file.
        pattern: How the files are named (DuckDB's `FILENAME_PATTERN`).
        partition_by: The columns whose values get a folder each (`col=value`, the column kept in the files);
            none: every file in `folder`.
    """
    from airflow_lineage_governance.iceberg.types import quoted, text_literal

    ids = ", ".join(f"{text_literal(name)}: {int(field_id)}" for name, field_id in field_ids.items())
    options = [
        "FORMAT parquet",
        f"COMPRESSION {text_literal(compression.codec)}",
        *([f"COMPRESSION_LEVEL {int(compression.level)}"] if compression.level is not None else []),
        f"FIELD_IDS {{{ids}}}",
        f"FILE_SIZE_BYTES {int(file_bytes)}",
        f"FILENAME_PATTERN {text_literal(pattern)}",
    ]
    if partition_by:
        options += [
            f"PARTITION_BY ({', '.join(quoted(name) for name in partition_by)})",
            "WRITE_PARTITION_COLUMNS true",
        ]
    rows = "__iceberg_written_rows"
    relation.query(rows, f"COPY (SELECT * FROM {rows}) TO {text_literal(folder)} ({', '.join(options)})")


def stream_of(table: pa.Table) -> ResultStream:
    """Return `table` as a result stream."""
    return ResultStream(table.schema, lambda: iter(table.to_batches(max_chunksize=BATCH_ROWS)))


def chunk_bytes(metadata: TableMetadata, limit: int = CHUNK_BYTES) -> int:
    """Return the Arrow bytes of each chunk written: the table's target file size, at most `limit`."""
    target = metadata.properties.get(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES)
    return min(int(target), limit) if target else limit


def chunks(batches: Iterable[pa.RecordBatch], limit: int) -> Iterator[pa.Table]:
    """Yield `batches` gathered into tables of at least `limit` Arrow bytes each (the last one smaller).

    Empty batches are left out.
    """
    held: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        held.append(batch)
        size += batch.nbytes
        if size >= limit:
            yield pa.Table.from_batches(held)
            held, size = [], 0
    if held:
        yield pa.Table.from_batches(held)


def write_id(owner: str | None = None) -> uuid.UUID:
    """Return a new write id, the name every file of one write carries.

    Random, or, for a write that `owner` (a task instance's write key) makes, 8 bytes that name the owner followed by 8
    random bytes, so that the files of the owner's earlier writes can be told by their name (`owner_marker`).
    """
    if owner is None:
        return uuid.uuid4()
    return uuid.UUID(bytes=hashlib.sha256(owner.encode()).digest()[:8] + os.urandom(8))


def owner_marker(owner: str) -> str:
    """Return the text that the name of every file of a write of `owner` holds (the start of its write id)."""
    return str(write_id(owner))[:19]


@dataclass
class WrittenFiles:
    """The data files one write put under a table's location (named by its write id), and the rows they hold."""

    write_uuid: uuid.UUID
    files: list[DataFile] = field(default_factory=list)
    rows: int = 0


def write_chunks(
    metadata: TableMetadata, io: FileIO, tables: Iterable[pa.Table], written: WrittenFiles, writers: int = WRITERS
) -> None:
    """Write each of `tables` as data files of the table, split by its current partition spec, with statistics.

    `tables` are rows of the table `metadata` describes, in its Arrow types. Each file is recorded in `written` as soon
    as it is written (so that a failure later leaves it known). `writers` chunks are written at once, each in a thread
    of its own, while the next is taken from `tables` (DuckDB makes the next rows while Parquet encodes the last ones):
    at most `writers` + 1 chunks are held. When taking or writing a chunk fails, the chunks in flight are finished
    first, so no file appears after the error.
    """
    from pyiceberg.io.pyarrow import _dataframe_to_data_files  # pyiceberg's own writer (private in 0.12)

    counter = itertools.count(0)

    def write(table: pa.Table) -> tuple[list[DataFile], int]:
        return list(
            _dataframe_to_data_files(
                table_metadata=metadata, df=table, io=io, write_uuid=written.write_uuid, counter=counter
            )
        ), table.num_rows

    def record(files: list[DataFile], rows: int) -> None:
        written.files.extend(files)
        written.rows += rows

    with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="data-files") as pool:
        pending: deque[Future[tuple[list[DataFile], int]]] = deque()
        for table in tables:
            if len(pending) == writers:
                record(*pending.popleft().result())
            pending.append(pool.submit(write, table))
        while pending:
            record(*pending.popleft().result())


def _filesystem(location: str) -> tuple[fs.FileSystem, str]:
    return fs.FileSystem.from_uri(location)  # type: ignore[no-any-return]


def listed_files(location: str) -> Iterator[fs.FileInfo]:
    """Yield every file under `location` (a table's location, as a URI or a local path).

    None when it does not exist.
    """
    filesystem, root = _filesystem(location)
    try:
        infos = filesystem.get_file_info(fs.FileSelector(root, recursive=True, allow_not_found=True))
    except (FileNotFoundError, NotADirectoryError):
        return
    for info in infos:
        if info.type == fs.FileType.File:
            yield info


def data_location(metadata: TableMetadata) -> str:
    """Return the folder under which the table's data files are written."""
    return metadata.properties.get(TableProperties.WRITE_DATA_PATH) or f"{metadata.location.rstrip('/')}/data"


def remove_written(io: FileIO, metadata: TableMetadata, written: WrittenFiles) -> None:
    """Remove the data files of `written`, and any other file under the table's data location named by its write id.

    One a failed writer left half written.
    """
    for data_file in written.files:
        io.delete(data_file.file_path)
    location = data_location(metadata)
    filesystem, _ = _filesystem(location)
    marker = str(written.write_uuid)
    for info in listed_files(location):
        if marker in info.base_name:
            try:
                filesystem.delete_file(info.path)
            except FileNotFoundError:
                continue
