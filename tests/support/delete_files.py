"""Makes a real Iceberg positional delete file with pyiceberg's own writers. pyiceberg 0.12's `delete()` is
copy-on-write (it rewrites data files and never writes a delete file), so the read path's delete-file branch
needs one made by hand: a Parquet file of (file_path, pos) and a DELETES manifest in a new snapshot."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

FILE_PATH_ID, POS_ID = b"2147483546", b"2147483545"  # the reserved field ids of a position delete file


class _DeletesManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _AddDeleteFiles(_FastAppendFiles):
    def new_manifest_writer(self, spec):
        return _DeletesManifestWriter(
            spec, self.schema(), self.new_manifest_output(), self._snapshot_id, self._compression
        )


def add_position_deletes(table: Table, data_file: str, positions: list[int]) -> str:
    """Commits a position delete file that deletes `positions` of `data_file`; returns its path."""
    location = table.location().removeprefix("file://")
    path = f"{location}/data/deletes-{uuid.uuid4()}.parquet"
    schema = pa.schema(
        [
            pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": FILE_PATH_ID}),
            pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": POS_ID}),
        ]
    )
    pq.write_table(pa.table({"file_path": [data_file] * len(positions), "pos": positions}, schema=schema), path)
    size = pa.OSFile(path).size()
    delete_file = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=f"file://{path}",
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=len(positions),
        file_size_in_bytes=size,
    )
    delete_file.spec_id = table.metadata.default_spec_id
    with table.transaction() as transaction:
        producer = _AddDeleteFiles(operation=Operation.DELETE, transaction=transaction, io=table.io)
        producer.append_data_file(delete_file)
        producer.commit()
    return path
