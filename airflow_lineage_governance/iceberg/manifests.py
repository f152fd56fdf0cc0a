"""A table's manifests read once per statement.

A statement that plans its read of a table and then commits to it opens the same manifest list and manifests in both.
A manifest list or manifest never changes once written, so `ManifestEntries` keeps what it read by path for the
statement's life, and the commit's snapshot producer (`read_manifests_through`) takes its entries from there.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from pyiceberg.avro.codecs import AVRO_CODEC_KEY, CODEC_MAPPING_ICEBERG_TO_AVRO
from pyiceberg.avro.decoder import new_decoder
from pyiceberg.avro.file import MAGIC, META_SCHEMA, SYNC_SIZE, AvroFile, AvroFileHeader, AvroOutputFile
from pyiceberg.avro.reader import Reader
from pyiceberg.avro.resolver import construct_writer, resolve_reader, resolve_writer
from pyiceberg.avro.writer import Writer
from pyiceberg.io import FileIO, InputFile
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_ENTRY_SCHEMAS,
    MANIFEST_LIST_FILE_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriter,
    PartitionFieldSummary,
    _inherit_from_manifest,  # pyiceberg's own sequence-number inheritance (private in 0.12)
)
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, TableProperties
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.typedef import KeyDefaultDict, StructProtocol
from pyiceberg.utils.schema_conversion import AvroSchemaConversion

READERS_KEPT = 64
"""The most Avro readers `ResolvedAvroFile` keeps, one per file schema and kind of record read."""
WRITERS_KEPT = 64
"""The most Avro writers `ResolvedManifestOutput` keeps, one per manifest format and partition type."""

_SCHEMA_KEY = "avro.schema"
_ENTRY_TYPES: dict[int, Callable[..., StructProtocol]] = {-1: ManifestEntry, 2: DataFile}
_ENTRY_ENUMS: dict[int, Callable[..., Any]] = {0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}
_LIST_TYPES: dict[int, Callable[..., StructProtocol]] = {-1: ManifestFile, 508: PartitionFieldSummary}
_LIST_ENUMS: dict[int, Callable[..., Any]] = {517: ManifestContent}

Struct = TypeVar("Struct", bound=StructProtocol)


class ResolvedAvroFile(AvroFile[Struct]):
    """pyiceberg's Avro file, whose schema and reader are resolved once per file schema and kind of record read.

    Every manifest of one partition spec, and every manifest list, carries the same Avro schema; pyiceberg resolves
    it afresh for each file it opens, which costs more than reading a small manifest's records.
    """

    _resolved: OrderedDict[tuple[str, str], tuple[Schema, Reader]] = OrderedDict()
    _lock = threading.Lock()

    def __init__(
        self,
        input_file: InputFile,
        kind: str,
        read_schema: Schema,
        read_types: dict[int, Callable[..., StructProtocol]],
        read_enums: dict[int, Callable[..., Any]],
    ) -> None:
        """Read `input_file` as records of `read_schema`, their kind named by `kind`."""
        super().__init__(input_file, read_schema, read_types, read_enums)
        self.kind = kind
        self.expected = read_schema

    def __enter__(self) -> ResolvedAvroFile[Struct]:
        """Read the file's header and take the reader of its schema (resolved on first sight)."""
        with self.input_file.open() as stream:
            self.decoder = new_decoder(stream.read())
        self.header = self._read_header()
        key = (self.header.meta.get(_SCHEMA_KEY, ""), self.kind)
        with self._lock:
            found = self._resolved.get(key)
            if found is not None:
                self._resolved.move_to_end(key)
        if found is None:
            schema = self.header.get_schema()
            found = (schema, resolve_reader(schema, self.expected, self.read_types, self.read_enums))
            with self._lock:
                self._resolved[key] = found
                while len(self._resolved) > READERS_KEPT:
                    self._resolved.popitem(last=False)
        self.schema, self.reader = found
        return self


class ResolvedManifestOutput(AvroOutputFile[ManifestEntry]):
    """pyiceberg's Avro output file of a manifest, whose writer and schema are resolved once per partition type.

    Every manifest of one format version and partition type has the same Avro schema; pyiceberg builds its schemas,
    resolves its writer and converts it to Avro JSON afresh for each manifest it writes, which costs more than writing
    a small manifest's entries. The file written is the same.
    """

    _resolved: OrderedDict[tuple[str, str], tuple[Schema, Writer, str]] = OrderedDict()
    _lock = threading.Lock()
    _header_writer = construct_writer(META_SCHEMA)
    schema_name = "manifest_entry"

    def __init__(self, manifest: ManifestWriter) -> None:
        """Write `manifest`'s entries to its output file with the writer of its partition type (resolved once)."""
        key = (type(manifest).__qualname__, manifest._spec.partition_type(manifest._schema).model_dump_json())
        with self._lock:
            found = self._resolved.get(key)
            if found is not None:
                self._resolved.move_to_end(key)
        if found is None:
            file_schema = manifest._with_partition(manifest.version)
            writer = resolve_writer(
                record_schema=manifest._with_partition(DEFAULT_READ_VERSION), file_schema=file_schema
            )
            avro = AvroSchemaConversion().iceberg_to_avro(file_schema, schema_name=self.schema_name)
            found = (file_schema, writer, json.dumps(avro))
            with self._lock:
                self._resolved[key] = found
                while len(self._resolved) > WRITERS_KEPT:
                    self._resolved.popitem(last=False)
        self.output_file = manifest._output_file
        self.file_schema, self.writer, self.avro_schema = found
        self.sync_bytes = os.urandom(SYNC_SIZE)
        self.metadata = manifest._meta

    def _write_header(self) -> None:
        codec = self.metadata.get(AVRO_CODEC_KEY, TableProperties.WRITE_AVRO_COMPRESSION_DEFAULT)
        codec = CODEC_MAPPING_ICEBERG_TO_AVRO.get(codec, codec)
        meta = {**self.metadata, _SCHEMA_KEY: self.avro_schema, AVRO_CODEC_KEY: codec}
        self._header_writer.write(self.encoder, AvroFileHeader(MAGIC, meta, self.sync_bytes))


def write_manifests_resolved(producer: Any) -> None:
    """Make a snapshot `producer` write its manifests through `ResolvedManifestOutput`.

    Args:
        producer: the pyiceberg snapshot producer of a commit, before it commits.
    """
    made = producer.new_manifest_writer

    def new_manifest_writer(spec: Any) -> ManifestWriter:
        manifest: ManifestWriter = made(spec)
        manifest.new_writer = lambda: ResolvedManifestOutput(manifest)  # type: ignore[method-assign]
        return manifest

    producer.new_manifest_writer = new_manifest_writer


def manifest_list(snapshot: Snapshot, io: FileIO) -> tuple[ManifestFile, ...]:
    """Return the manifests `snapshot`'s manifest list holds, in its order, read through `io`."""
    read = MANIFEST_LIST_FILE_SCHEMAS[DEFAULT_READ_VERSION]
    with ResolvedAvroFile[ManifestFile](
        io.new_input(snapshot.manifest_list), "manifest list", read, _LIST_TYPES, _LIST_ENUMS
    ) as reader:
        return tuple(reader)


def live_entries(manifest: ManifestFile, io: FileIO) -> list[ManifestEntry]:
    """Return the manifest's added and existing entries, as pyiceberg's `fetch_manifest_entry` reads them."""
    read = MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION]
    with ResolvedAvroFile[ManifestEntry](
        io.new_input(manifest.manifest_path), "manifest", read, _ENTRY_TYPES, _ENTRY_ENUMS
    ) as reader:
        return [
            _inherit_from_manifest(entry, manifest) for entry in reader if entry.status != ManifestEntryStatus.DELETED
        ]


class ManifestEntries:
    """The manifest lists and live manifest entries one statement read from a table, each read once, by path."""

    def __init__(self) -> None:
        """Start with nothing read."""
        self._lists: dict[str, tuple[ManifestFile, ...]] = {}
        self._entries: dict[str, list[ManifestEntry]] = {}

    def manifests(self, snapshot: Snapshot, io: FileIO) -> tuple[ManifestFile, ...]:
        """Return the manifests of `snapshot`'s manifest list, read through the table's `io`."""
        found = self._lists.get(snapshot.manifest_list)
        if found is None:
            found = self._lists.setdefault(snapshot.manifest_list, manifest_list(snapshot, io))
        return found

    def live(self, manifest: ManifestFile, io: FileIO) -> list[ManifestEntry]:
        """Return the manifest's live entries (added and existing), in the order the manifest lists them.

        A manifest whose counts say it holds no live file is not opened.
        """
        found = self._entries.get(manifest.manifest_path)
        if found is None:
            if manifest.has_added_files() or manifest.has_existing_files():
                read = live_entries(manifest, io)
            else:
                read = []
            found = self._entries.setdefault(manifest.manifest_path, read)
        return found

    def scan_tasks(self, snapshot: Snapshot, io: FileIO) -> list[FileScanTask] | None:
        """Return a scan task for each live data file of `snapshot`, or None when it has delete manifests.

        Read through the table's `io`. The tasks are what pyiceberg's scan plans for the whole snapshot when no
        delete file applies; a snapshot with delete files is left to pyiceberg's planner, which matches them to the
        data files.
        """
        manifests = self.manifests(snapshot, io)
        if any(manifest.content != ManifestContent.DATA for manifest in manifests):
            return None
        return [
            FileScanTask(entry.data_file)
            for manifest in manifests
            for entry in self.live(manifest, io)
            if entry.data_file.content == DataFileContent.DATA
        ]


def read_manifests_through(producer: Any, entries: ManifestEntries) -> None:
    """Make an overwrite `producer` read the parent snapshot's manifests through `entries`.

    pyiceberg 0.12's overwrite opens every manifest of the parent snapshot twice when it commits: once for the entries
    it deletes and once for the manifests it keeps or rewrites without them. These two steps do the same as pyiceberg's
    with the entries `entries` holds: a manifest the statement's read already opened is not opened again. A retried
    commit (a concurrent commit elsewhere) reads the new parent's manifests the same way.

    Args:
        producer: the pyiceberg snapshot producer of the commit (its `overwrite()`), before it commits.
        entries: the manifests of the table read so far in the statement.
    """

    def evaluators() -> dict[int, Callable[[ManifestFile], bool]]:
        found: dict[int, Callable[[ManifestFile], bool]] = KeyDefaultDict(producer._build_manifest_evaluator)
        return found

    def deleted_entries() -> list[ManifestEntry]:
        deleted: list[ManifestEntry] = []
        if producer._parent_snapshot_id is not None:
            parent = producer._transaction.table_metadata.snapshot_by_id(producer._parent_snapshot_id)
            if parent is None:
                raise ValueError(f"Could not find the previous snapshot: {producer._parent_snapshot_id}")
            matches = evaluators()
            removed = producer._deleted_data_files
            deleted = [
                _recorded(entry, ManifestEntryStatus.DELETED, producer.snapshot_id)
                for manifest in entries.manifests(parent, producer._io)
                if matches[manifest.partition_spec_id](manifest)
                for entry in entries.live(manifest, producer._io)
                if entry.data_file.content == DataFileContent.DATA and entry.data_file in removed
            ]
        producer._validate_required_deletes(deleted)
        return deleted

    def existing_manifests() -> list[ManifestFile]:
        kept: list[ManifestFile] = []
        snapshot = producer._transaction.table_metadata.snapshot_by_name(name=producer._target_branch)
        if snapshot is None:
            return kept
        matches = evaluators()
        removed = producer._deleted_data_files
        for manifest in entries.manifests(snapshot, producer._io):
            if not matches[manifest.partition_spec_id](manifest):
                kept.append(manifest)
                continue
            live = entries.live(manifest, producer._io)
            remaining = [entry for entry in live if entry.data_file not in removed]
            if len(remaining) == len(live):  # none of its files is deleted: kept as it is
                kept.append(manifest)
                continue
            if not remaining:
                continue
            with producer.new_manifest_writer(producer.spec(manifest.partition_spec_id)) as writer:
                for entry in remaining:
                    writer.add_entry(_recorded(entry, ManifestEntryStatus.EXISTING, entry.snapshot_id))
            kept.append(writer.to_manifest_file())
        return kept

    producer._deleted_entries = deleted_entries
    producer._existing_manifests = existing_manifests


def _recorded(entry: ManifestEntry, status: ManifestEntryStatus, snapshot_id: int | None) -> ManifestEntry:
    """Return `entry`'s data file and sequence numbers as an entry of `status`, recorded by `snapshot_id`."""
    return ManifestEntry.from_args(
        status=status,
        snapshot_id=snapshot_id,
        sequence_number=entry.sequence_number,
        file_sequence_number=entry.file_sequence_number,
        data_file=entry.data_file,
    )
