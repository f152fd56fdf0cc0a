"""MERGE, UPDATE and DELETE on an Iceberg table, copy-on-write.

The target's pinned snapshot is exposed to the sandboxed DuckDB with each row's data file; DuckDB answers which files
hold a row the statement can change (iceberg/touched.py), those files' rows become a table, DuckDB runs the statement
there, and one OVERWRITE commit replaces exactly those files with the rewritten rows. The commit is checked against the
pinned snapshot: a concurrent commit that added rows the statement's bounds cover (iceberg/bounds.py), or removed a file
it read, makes it start again from the new snapshot (write.with_retries); a concurrent commit elsewhere in the table is
merged. A retried try that finds its own earlier commit (the write key) does nothing.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import Catalog
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.expressions.visitors import bind
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table
from sqlglot import Dialect, TokenType
from sqlglot.errors import ParseError, TokenError

from airflow_lineage_governance.iceberg.bounds import ParsedDml, parse_dml, row_filter
from airflow_lineage_governance.iceberg.catalog import TableName, as_table
from airflow_lineage_governance.iceberg.data_files import (
    BATCH_ROWS,
    WRITERS,
    DuckDBFileWriter,
    WrittenFiles,
    chunk_bytes,
    chunks,
    data_location,
    write_chunks,
    write_id,
    write_parquet,
)
from airflow_lineage_governance.iceberg.direct_write import NotDirectlyWritable, directly_writable, write_directly
from airflow_lineage_governance.iceberg.errors import IcebergWriteError, NamespaceTooDeepError, without_values
from airflow_lineage_governance.iceberg.manifests import ManifestEntries
from airflow_lineage_governance.iceberg.partition_match import (
    VALUES_TABLE,
    create_partition_values,
    identity_partition_columns,
    partition_match_query,
)
from airflow_lineage_governance.iceberg.partitioned import commit_files, partition_names
from airflow_lineage_governance.iceberg.read import (
    PinnedRead,
    ScanPlan,
    close_in_background,
    duckdb_name,
    expose_planned,
    lock_down,
    plan_scan,
    prepare_sandboxed_connection,
    sandboxed_connection,
)
from airflow_lineage_governance.iceberg.resources import Resources, memory_bytes, spill_folder
from airflow_lineage_governance.iceberg.returning import ReturnedRows, returned_rows
from airflow_lineage_governance.iceberg.run import StatementRun
from airflow_lineage_governance.iceberg.session import SessionSettings
from airflow_lineage_governance.iceberg.sort_order import mark_sorted, sort_plan
from airflow_lineage_governance.iceberg.sql_text import duckdb_text
from airflow_lineage_governance.iceberg.target_reads import (
    binds_alike,
    may_read_beyond,
    reads_beyond,
    reads_own_text,
    reads_rowid,
    reads_whole_rows,
    written_as_is,
)
from airflow_lineage_governance.iceberg.touched import touched_files_query
from airflow_lineage_governance.iceberg.types import facet_fields, quoted, result_type, text_literal
from airflow_lineage_governance.iceberg.write import (
    ROW_COUNT_KEYS,
    WRITE_KEY,
    RowCounts,
    WriteResult,
    aligned_rows,
    check_partition_values,
    check_target_name,
    earlier_write,
    removing_earlier_tries,
    removing_on_failure,
    with_retries,
)
from airflow_lineage_governance.refs import TableRef

COPY_ON_WRITE = "copy-on-write rewrite"
FILE_COLUMN = "__iceberg_data_file"
"""The column of the exposed target that holds each row's data file (dropped before the statement runs)."""
_WHOLE_TARGET = "__iceberg_whole_target"
_MERGE_ACTION = "__iceberg_merge_action"
RETURNING_MAX_ROWS = 1000
"""The most rows a RETURNING hands back unless the caller says otherwise."""
IN_MEMORY_FACTOR = 4
"""About how many times their Parquet size rows take in an in-memory DuckDB table (DuckDB does not compress them)."""
HELD_SOURCE_ROWS = 1_000_000
"""The most rows of a source read once into a DuckDB table (`_held_sources`) instead of at each query."""


@dataclass(frozen=True)
class _Rewritten:
    """One attempt's DuckDB work.

    The files read, the filter that chose them, whether a row changed (the rows after the statement are then written as
    new data files), the counts.
    """

    files: list[DataFile]
    scope: BooleanExpression
    changed: bool
    counts: RowCounts
    reads: list[PinnedRead]
    returned: ReturnedRows | None


def _checked_filter(table: Table, found: BooleanExpression) -> BooleanExpression:
    """Return `found` when it binds to the table's schema, else ALWAYS_TRUE.

    A bound that cannot be checked reads the whole table.
    """
    try:
        bind(table.schema(), found, case_sensitive=False)
    except Exception:  # a literal pyiceberg cannot compare with the column: no bound
        return AlwaysTrue()
    return found


def _returns(parsed: ParsedDml) -> bool:
    """Return whether the statement has a RETURNING of its own."""
    return parsed.tree is not None and parsed.tree.args.get("returning") is not None


def _counted(parsed: ParsedDml, dml: str) -> str:
    """Return the statement as run.

    A MERGE returning `merge_action` first (then its own RETURNING's columns), so each changed row says how. The
    words are put into the statement's own text, which is otherwise run as written: a form of MERGE that sqlglot
    would write back otherwise (`INSERT BY POSITION`, `SET col = DEFAULT`) keeps its meaning.
    """
    if parsed.kind != "MERGE":
        return dml
    action = f"merge_action AS {quoted(_MERGE_ACTION)}"
    depth, last = 0, None
    for token in Dialect.get_or_raise("duckdb").tokenize(dml):
        kind = token.token_type
        depth += (kind is TokenType.L_PAREN) - (kind is TokenType.R_PAREN)
        if depth == 0 and kind is TokenType.RETURNING:
            return f"{dml[: token.end + 1]} {action},{dml[token.end + 1 :]}"
        if kind is not TokenType.SEMICOLON:
            last = token
    end = last.end + 1 if last is not None else len(dml)
    return f"{dml[:end]} RETURNING {action}{dml[end:]}"


def _run_dml(
    connection: duckdb.DuckDBPyConnection, parsed: ParsedDml, dml: str, counted: str
) -> tuple[RowCounts, pa.Table | None]:
    """Run the statement on `connection` (a MERGE as `counted`, its text from `_counted`).

    Returns the rows it inserted, updated and deleted, and the rows its own RETURNING gave (None without one).
    """
    if parsed.kind == "MERGE":
        changed = connection.sql(counted).to_arrow_table()
        actions = pc.value_counts(changed.column(0).cast(pa.string())).to_pylist()
        tally = {str(entry["values"]): int(entry["counts"]) for entry in actions}
        counts = RowCounts(tally.get("INSERT", 0), tally.get("UPDATE", 0), tally.get("DELETE", 0))
        return counts, changed.remove_column(0) if _returns(parsed) else None
    returned = None
    if _returns(parsed):  # DuckDB answers one row per changed row instead of the count
        returned = connection.sql(dml).to_arrow_table()
        count = returned.num_rows
    else:
        answer = connection.execute(dml).fetchone()
        count = int(answer[0]) if answer else 0
    return (RowCounts(updated=count) if parsed.kind == "UPDATE" else RowCounts(deleted=count)), returned


def _touched_files(
    connection: duckdb.DuckDBPyConnection, parsed: ParsedDml, read: PinnedRead, candidates: Sequence[str] | None
) -> list[str]:
    """Return the file column's values of the target's data files the statement can change.

    DuckDB answers over the statement's own read, opening only the `candidates` when given; all of them (all the
    read's files) are returned when nothing bounds the statement.
    """
    if candidates is not None and not candidates:
        return []
    query = touched_files_query(parsed, FILE_COLUMN, candidates)
    if query is None:
        return sorted(candidates if candidates is not None else read.data_files)
    return sorted(str(row[0]) for row in connection.execute(query).fetchall() if row[0] is not None)


def _partition_query(parsed: ParsedDml, table: Table) -> str | None:
    """Return the query over the target's per-file identity-partition values (`_partition_values`).

    None when no conjunct of the statement reads the identity-partition columns alone.
    """
    columns = identity_partition_columns(table)
    return partition_match_query(parsed, columns, FILE_COLUMN) if columns else None


def _partition_values(
    connection: duckdb.DuckDBPyConnection, query: str | None, table: Table, read: PinnedRead
) -> tuple[str, list[str]] | None:
    """Create the target's per-file identity-partition values; return `query` over them and the files left out.

    None when there is no `query` (`_partition_query`) or no data file. Run before the connection is locked down;
    the query after (it holds the statement's own text).
    """
    if query is None or not read.data_files:
        return None
    columns = identity_partition_columns(table)
    left_out = create_partition_values(connection, table, read.data_files, columns, FILE_COLUMN)
    return query, left_out


def _candidate_files(
    connection: duckdb.DuckDBPyConnection, pruning: tuple[str, list[str]] | None, read: PinnedRead
) -> list[str] | None:
    """Return the data files whose identity-partition values can meet the statement, None to read every file.

    A query DuckDB cannot run over the values (a name only a data column has), or values every file meets, read every
    file (with no list of them in the touched-files query).
    """
    if pruning is None:
        return None
    query, left_out = pruning
    try:
        found = {str(row[0]) for row in connection.execute(query).fetchall() if row[0] is not None}
    except duckdb.Error:
        return None
    finally:  # the statement finds only its own tables in the catalog, as on a native database
        connection.execute(f"DROP TABLE IF EXISTS main.{quoted(VALUES_TABLE)}")
    kept = found.union(left_out)
    return None if len(kept) >= len(read.data_files) else sorted(kept)


def _rewrite(
    catalog: Catalog,
    table: Table,
    ref: TableRef,
    dml: str,
    parsed: ParsedDml,
    sources: Sequence[TableName],
    loaded: Mapping[TableRef, Table],
    session: SessionSettings | None,
    returning_max_rows: int,
    written: WrittenFiles,
    resources: Resources | None,
    spill: str,
    closing: list[threading.Thread],
    entries: ManifestEntries,
) -> _Rewritten:
    """Run one attempt of the statement on the rows of the data files it can change, and return what it read.

    Read the table's current snapshot into a sandboxed DuckDB, ask DuckDB which data files the statement can change,
    keep only their rows, run the statement there, and stream the rows after it into new data files (`written`, when a
    row changed). The tables' manifests are read through `entries`, for the commit.
    """
    snapshot = table.current_snapshot()
    limit = memory_bytes((resources or Resources()).resolved().memory_limit)
    database = _work_database(table, limit, spill)
    # Planned while the connection opens in the background (prepare_sandboxed_connection).
    planned = [plan_scan(catalog, name, loaded.get(as_table(name)), entries) for name in sources]
    planned_target = plan_scan(catalog, ref, table, entries)
    columns_read = [f.name for plan in [planned_target, *planned] for f in plan.loaded.schema().fields]
    if reads_rowid(parsed, columns_read):
        raise IcebergWriteError(
            ref,
            "the statement reads rowid, a row's place in DuckDB's own storage, which the rows of an Iceberg table "
            "do not have",
            "name the rows by their columns; nothing was written",
        )
    # So is the statements' text, which needs no connection.
    partition_query = _partition_query(parsed, table)
    counted = _counted(parsed, dml)
    connection = sandboxed_connection(session, resources, spill, database)
    staging = os.path.join(spill, f"result-{uuid.uuid4().hex}")
    os.mkdir(staging)
    try:
        held = _held_sources(planned, database, limit)
        reads = [expose_planned(connection, plan, held=keep) for plan, keep in zip(planned, held, strict=True)]
        if not parsed.unbounded and _must_read_every_file(connection, parsed, dml, planned_target):
            parsed, partition_query = replace(parsed, unbounded=True), None  # every file is read and rewritten
        whole = expose_planned(connection, planned_target, file_column=FILE_COLUMN)
        pruning = _partition_values(connection, partition_query, table, whole)
        lock_down(connection, [whole, *reads], staging)
        scope = _checked_filter(table, row_filter(parsed, connection, table.schema().column_names))
        touched = _touched_files(connection, parsed, whole, _candidate_files(connection, pruning, whole))
        name = duckdb_name(connection, ref)
        kind = "VIEW" if whole.files else "TABLE"
        connection.execute(f"ALTER {kind} {name} RENAME TO {quoted(_WHOLE_TARGET)}")
        whole_name = name.rsplit(".", 1)[0] + "." + quoted(_WHOLE_TARGET)
        columns = ", ".join(quoted(f.name) for f in table.schema().fields)
        listed = ", ".join(text_literal(path) for path in touched) or "NULL"
        connection.execute(
            f"CREATE TABLE {name} AS SELECT {columns} FROM {whole_name} WHERE {quoted(FILE_COLUMN)} IN ({listed})"
        )
        connection.execute(f"DROP {kind} {whole_name}")
        counts, own = _run_dml(connection, parsed, dml, counted)
        returned = returned_rows(connection, own, returning_max_rows, ref) if own is not None else None
        handed = ", ".join(
            f"CAST({quoted(f.name)} AS {result_type(f.field_type)}) AS {quoted(f.name)}" for f in table.schema().fields
        )
        if counts.changed:
            after = connection.sql(f"SELECT {handed} FROM {name}")
            plan = sort_plan(table.schema(), table.sort_order())
            if plan.order_by:
                after = after.order(plan.order_by)
            if not _written_by_duckdb(table, after, staging, written, ordered=bool(plan.order_by)):
                _write_rows(ref, table, after, written, writers=1 if database else WRITERS)
            mark_sorted(written.files, plan.sort_order_id)
    finally:
        if database is None:
            closing.append(close_in_background(connection))
        else:
            connection.close()
            for path in (database, database + ".wal"):
                if os.path.exists(path):
                    os.remove(path)
    total = int((snapshot.summary.get("total-data-files") if snapshot and snapshot.summary else None) or 0)
    counts = RowCounts(counts.inserted, counts.updated, counts.deleted, len(touched), total)
    how = f"{len(touched)} of {total} data files"
    pinned = PinnedRead(ref, snapshot.snapshot_id if snapshot else None, COPY_ON_WRITE, how)
    return _Rewritten(
        [whole.data_files[path] for path in touched], scope, counts.changed > 0, counts, [pinned, *reads], returned
    )


def _must_read_every_file(connection: duckdb.DuckDBPyConnection, parsed: ParsedDml, dml: str, target: ScanPlan) -> bool:
    """Return whether every data file must be read and rewritten: the files the statement touches cannot be chosen.

    It reads more of its target than the rows it changes, or sqlglot's text of it, of which the queries that choose the
    files are made, means something else to DuckDB (`target_reads`). DuckDB is asked over an empty table of the
    target's columns, dropped after: whether the statement reads the target again (when its text does not rule that
    out), and whether it binds sqlglot's text as its own.
    """
    if reads_whole_rows(parsed, target.table, [f.name for f in target.loaded.schema().fields]):
        return True
    if FILE_COLUMN.lower() in dml.lower():  # a source's column of that name would be ambiguous beside the target's
        return True
    if parsed.tree is None:
        return True
    written = duckdb_text(parsed.tree)
    check_reads, check_binding = may_read_beyond(parsed), not written_as_is(dml, written)
    if not check_reads and not check_binding:
        return False
    expose_planned(connection, replace(target, snapshot_id=None, tasks=()))  # an empty table of its columns
    name = duckdb_name(connection, target.table)
    namespace = target.table.namespace
    catalog = (
        namespace[0] if len(namespace) == 2 else str(connection.execute("SELECT current_database()").fetchall()[0][0])
    )
    try:
        if check_reads and reads_beyond(connection, dml, (catalog, namespace[-1], target.table.name)):
            return True
        return check_binding and not binds_alike(connection, dml, written)
    except duckdb.Error:  # DuckDB refuses the statement, and says so when it runs it
        return True
    finally:
        connection.execute(f"DROP TABLE {name}")


def _held_sources(planned: Sequence[ScanPlan], database: str | None, limit: int | None) -> list[bool]:
    """Return, for each planned source, whether it is read once into a DuckDB table: small ones, in memory.

    The statement reads a source several times (the files it can change, the commit's bounds, the statement itself):
    a source of at most HELD_SOURCE_ROWS rows whose Parquet bytes, times IN_MEMORY_FACTOR, take at most an eighth
    of the task's DuckDB memory limit (`limit`, in bytes) together is read once; the others are read at each query.
    """
    held: list[bool] = []
    budget = limit // 8 if database is None and limit is not None else 0
    for plan in planned:
        rows = sum(task.file.record_count for task in plan.tasks)
        stored = sum(task.file.file_size_in_bytes for task in plan.tasks) * IN_MEMORY_FACTOR
        held.append(not plan.fallback and rows <= HELD_SOURCE_ROWS and stored <= budget)
        budget -= stored if held[-1] else 0
    return held


def _work_database(table: Table, limit: int | None, spill: str) -> str | None:
    """Return a new DuckDB database file in `spill` to hold the rewritten rows, or None to hold them in memory.

    In memory while the table's rows (its Parquet bytes, times IN_MEMORY_FACTOR) would take at most half the task's
    DuckDB memory limit (`limit`, in bytes; None: DuckDB's default); else in a database file, whose blocks DuckDB
    evicts to disk to stay within the limit.
    """
    snapshot = table.current_snapshot()
    stored = int((snapshot.summary.get("total-files-size") if snapshot and snapshot.summary else None) or 0)
    if limit is None or stored * IN_MEMORY_FACTOR <= limit // 2:
        return None
    return os.path.join(spill, f"rewrite-{uuid.uuid4().hex}.duckdb")


def _written_by_duckdb(
    table: Table, after: duckdb.DuckDBPyRelation, staging: str, written: WrittenFiles, *, ordered: bool
) -> bool:
    """Return whether DuckDB wrote the rows of `after` as data files of the table itself (recorded in `written`).

    Where the table takes DuckDB's files as they are (`direct_write`); a value the table cannot take leaves the rows
    to `_write_rows`, which names it.
    """
    metadata = table.metadata
    if not directly_writable(metadata, list(after.columns), data_location(metadata), ordered=ordered):
        return False
    try:
        writer = DuckDBFileWriter(staging, functools.partial(write_parquet, after))
        return write_directly(metadata, table.io, writer, written) is None
    except NotDirectlyWritable:
        return False


def _write_rows(
    ref: TableRef, table: Table, after: duckdb.DuckDBPyRelation, written: WrittenFiles, writers: int = WRITERS
) -> None:
    """Stream the rows of `after` into new data files of the table, chunk by chunk, `writers` chunks at once.

    `after` holds the rewritten files' rows after the statement. Raises IcebergWriteError when a value cannot be written
    as its column's type.
    """

    def prepare(chunk: pa.Table) -> pa.Table:
        rows = aligned_rows(ref, table, list(chunk.column_names), chunk)
        check_partition_values(ref, table.metadata, rows)
        return rows

    try:
        rows = chunks(after.to_arrow_reader(BATCH_ROWS), chunk_bytes(table.metadata))
        write_chunks(table.metadata, table.io, (prepare(chunk) for chunk in rows), written, writers)
    except (ValueError, TypeError, pa.ArrowException) as error:
        raise IcebergWriteError(
            ref,
            f"the rewritten rows could not be written ({without_values(str(error))})",
            "cast the statement's values to the table's types; nothing was written",
        ) from None


def rewrite_statement(
    catalog: Catalog,
    *,
    target: TableName,
    dml: str,
    sources: Sequence[TableName],
    snapshot_properties: Mapping[str, str] | None = None,
    loaded: Mapping[TableRef, Table] | None = None,
    session: SessionSettings | None = None,
    returning_max_rows: int = RETURNING_MAX_ROWS,
    resources: Resources | None = None,
) -> StatementRun:
    """Run a MERGE, UPDATE or DELETE on an Iceberg table copy-on-write and commit it in one OVERWRITE snapshot.

    The sources are pinned to their current snapshots. A statement that changes no row commits nothing. The
    rewritten rows stream into new data files, and a failed rewrite removes them. When a snapshot of the target
    already carries the WRITE_KEY of `snapshot_properties`, the rewrite writes nothing and returns that commit; a
    later try removes the files its earlier tries left uncommitted once that commit is in
    (`removing_earlier_tries`).

    Args:
        catalog: The catalog holding the tables.
        target: The table the statement changes.
        dml: The statement, its tables named as DuckDB finds them.
        sources: The tables the statement reads.
        snapshot_properties: Properties the snapshot carries beside the row counts.
        loaded: Tables already loaded, by ref.
        session: DuckDB session settings for the statement.
        returning_max_rows: The most rows of a RETURNING kept.
        resources: The limits DuckDB runs within, spilling only to a folder of its own removed when the
            statement ends.

    Returns:
        What was read and written (`write.counts`: rows inserted, updated, deleted; `returned`: the rows of its
        RETURNING, None without one or when an earlier try wrote it).

    Raises:
        IcebergWriteError: The statement cannot be read, DuckDB rejects it, or the rows cannot be written (nothing is
            written then).
        CommitConflictError: Concurrent writers kept changing the same rows.
    """
    prepare_sandboxed_connection()
    ref = as_table(target)
    check_target_name(ref)
    properties = dict(snapshot_properties or {})
    try:
        parsed = parse_dml(dml, ref)
    except RecursionError:
        raise IcebergWriteError(
            ref,
            "the statement nests its expressions too deeply to be read to choose the data files it changes",
            "nest fewer parentheses or subqueries; nothing was written",
        ) from None
    except (ParseError, TokenError, ValueError) as error:
        problem = without_values(str(error)) or type(error).__name__
        raise IcebergWriteError(
            ref,
            f"the statement could not be read to choose the data files it changes ({problem})",
            "write it in standard SQL; nothing was written",
        ) from None
    if reads_own_text(parsed):
        raise IcebergWriteError(
            ref,
            "the statement reads current_query(), which gives the text DuckDB runs, not always the statement's own "
            "(the query choosing the data files, or a MERGE counting its rows)",
            "leave current_query() out; nothing was written",
        )
    known = dict(loaded or {})
    timings: dict[str, float] = {}
    entries = ManifestEntries()  # the tables' manifests, read once for every attempt's reads and commit
    run: list[StatementRun] = []

    def attempt() -> WriteResult:
        prepare_sandboxed_connection()
        table = known.pop(ref) if ref in known else catalog.load_table(ref.identifier)
        earlier = earlier_write(table, ref, properties)
        if earlier is not None:
            run.append(StatementRun([], earlier, timings))
            return earlier
        written = WrittenFiles(write_id(properties.get(WRITE_KEY)))

        def rewrite() -> WriteResult:
            started = time.perf_counter()
            try:
                done = _rewrite(
                    catalog,
                    table,
                    ref,
                    dml,
                    parsed,
                    sources,
                    known,
                    session,
                    returning_max_rows,
                    written,
                    resources,
                    spill,
                    closing,
                    entries,
                )
            except NamespaceTooDeepError as error:
                raise IcebergWriteError(
                    ref,
                    f"it reads {error.table}, whose namespace DuckDB cannot name",
                    "keep the table in a namespace of one or two levels",
                ) from None
            except duckdb.Error as error:
                raise IcebergWriteError(
                    ref,
                    f"DuckDB could not run the statement ({without_values(str(error))})",
                    "fix the statement; nothing was written",
                ) from None
            known.clear()  # a retry reads every table afresh
            timings["query"] = time.perf_counter() - started
            started = time.perf_counter()
            write = _commit(table, ref, done, written, properties, entries)
            timings["write"] = time.perf_counter() - started
            results.append(done)
            return write

        results: list[_Rewritten] = []
        write = removing_on_failure(table.io, lambda: table.metadata, written, rewrite)
        done = results[-1]
        run.append(StatementRun(done.reads, write, timings, done.returned))
        return write

    closing: list[threading.Thread] = []  # the attempts' DuckDB databases being closed in the background
    with spill_folder(resources or Resources()) as spill:
        try:
            with_retries(attempt, ref)
        finally:
            for thread in closing:  # before their spill folder goes, and before the statement returns
                thread.join()
    done_run = run[-1]
    cleaned = removing_earlier_tries(catalog, ref, properties, done_run.write)
    return done_run if cleaned is done_run.write else replace(done_run, write=cleaned)


def _commit(
    table: Table,
    ref: TableRef,
    done: _Rewritten,
    written: WrittenFiles,
    properties: dict[str, str],
    entries: ManifestEntries,
) -> WriteResult:
    """Commit the rewritten rows' data files (`written`) in place of the files read, and return the write.

    Nothing is committed when no row changed. The manifests the read opened (`entries`) are not opened again. Raises
    ValidationException (retried) when a concurrent commit conflicts.
    """
    columns = facet_fields(table.schema())
    counts = done.counts
    if not done.changed:
        return WriteResult(ref, done.reads[0].snapshot_id, 0, columns=columns, counts=counts)
    added = written.files
    summary = {**properties, **{key: str(getattr(counts, name)) for name, key in ROW_COUNT_KEYS.items()}}
    replaced = list(done.files)
    commit_files(table, replaced, added, done.scope, summary, written.write_uuid, entries)
    snapshot = table.current_snapshot()
    spec = table.spec()
    records = [f.partition for f in replaced if f.spec_id == spec.spec_id] + [f.partition for f in added]
    return WriteResult(
        ref,
        snapshot.snapshot_id if snapshot else None,
        counts.changed,
        replaced=True,
        columns=columns,
        partitions=partition_names(spec, table.schema(), records),
        counts=counts,
    )
