"""IcebergSqlOperator.

One CTAS, INSERT … SELECT, MERGE, UPDATE or DELETE over an Iceberg catalog, run on DuckDB, with exact OpenLineage column
lineage read before anything is written.

Importing this module loads no pyiceberg, DuckDB, pyarrow, sqlglot or OpenLineage client (DAG parsing stays
cheap): the work's modules are imported when a task runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from airflow_lineage_governance.hooks.iceberg import IcebergHook
from airflow_lineage_governance.iceberg.partitions import APPEND, check_write_mode, parse_partition_by
from airflow_lineage_governance.operators.assets import declared_target, table_asset

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from airflow.sdk import Asset, Context
    from jinja2 import Environment
    from openlineage.client.event_v2 import Dataset
    from openlineage.client.facet_v2 import JobFacet, RunFacet
    from pyiceberg.table import Table

    from airflow_lineage_governance.iceberg.partitions import PartitionField
    from airflow_lineage_governance.iceberg.resources import Resources
    from airflow_lineage_governance.iceberg.run import StatementRun
    from airflow_lineage_governance.iceberg.session import SessionSettings
    from airflow_lineage_governance.lineage import ColumnLineage, LineageError, Statement
    from airflow_lineage_governance.refs import TableRef

    OpenLineageFacets = OperatorLineage[Dataset, RunFacet | JobFacet]

DEFAULT_MAX_EDGES = 4096
"""The default bound of column-lineage edges an event carries (lineage.facet.DEFAULT_MAX_EDGES)."""


@dataclass(frozen=True)
class LineageRead:
    """What one try read before running the statement.

    The parsed statement, the tables loaded (once), their schema, the lineage and what DuckDB runs: the SELECT of a CTAS
    or INSERT, the whole MERGE, UPDATE or DELETE.
    """

    statement: Statement
    tables: Mapping[TableRef, Table]
    schema: Mapping[TableRef, Mapping[str, str]]
    lineage: ColumnLineage
    query: str


class IcebergSqlOperator(BaseOperator):
    """Runs one CTAS, INSERT … SELECT, MERGE, UPDATE or DELETE over an Iceberg catalog on DuckDB.

    One `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] … AS SELECT`, `INSERT INTO … SELECT`, `MERGE INTO`, `UPDATE` or
    `DELETE FROM` over the tables of an Iceberg catalog, its result written back to the catalog in one commit (a MERGE,
    UPDATE or DELETE copy-on-write: the data files it can touch are rewritten).

    The statement's column lineage is read first, against the catalog's current schema; a statement whose
    lineage cannot be read exactly fails the task before anything is written. The rendered statement is parsed
    once per try, the catalog opened once, and each table it names loaded once.

    :param sql: the statement, or a path to a `.sql` file (templated).
    :param iceberg_conn_id: the `iceberg_catalog` connection.
    :param lineage_namespace: the OpenLineage dataset namespace; default: the connection's.
    :param max_lineage_edges: past this many column-lineage edges the event's facet is cut, and a
        `lineageTruncation` run facet says so (default 4,096).
    :param target: the table the statement writes (`db.table`), declared as the task's outlet asset; default:
        read from the statement's text (or its .sql file) when the DAG is parsed, without a SQL parser. Given,
        a statement that writes another table fails the task before anything is written.
    :param partition_by: the Iceberg partition spec of a CREATE TABLE … AS target, e.g. `["day(paid_at)",
        "country"]` (a column, year/month/day/hour(col), bucket[N](col), truncate[N](col)); a bad entry fails the
        DAG file's parse with one sentence. A replaced table keeps its spec when none is given.
    :param write_mode: for an INSERT, `append` (default) or `overwrite_partitions`: replace exactly the
        partitions of a partitioned table that the INSERT's rows fall in.
    """

    template_fields: Sequence[str] = ("sql",)
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql"}
    ui_color = "#cfe8ff"

    def __init__(
        self,
        *,
        sql: str,
        iceberg_conn_id: str = IcebergHook.default_conn_name,
        lineage_namespace: str | None = None,
        max_lineage_edges: int = DEFAULT_MAX_EDGES,
        target: str | None = None,
        partition_by: Sequence[str] | None = None,
        write_mode: str = APPEND,
        duckdb_memory_limit: str | None = None,
        duckdb_threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.duckdb_memory_limit = duckdb_memory_limit
        self.duckdb_threads = duckdb_threads
        shown = target or f"the task {kwargs.get('task_id', '')}"
        self.partition_fields: tuple[PartitionField, ...] = parse_partition_by(partition_by, shown)
        self.partition_by = [str(field) for field in self.partition_fields]
        self.write_mode = check_write_mode(write_mode, shown)
        self.max_lineage_edges = max_lineage_edges
        self.sql = sql
        self.iceberg_conn_id = iceberg_conn_id
        self.lineage_namespace = lineage_namespace
        self._parsed: tuple[str, Statement | LineageError] | None = None
        self._read: tuple[str, LineageRead | LineageError] | None = None
        self._run: StatementRun | None = None
        self._seconds: dict[str, float] = {}
        self.target = target
        # Airflow's has_dag() carries no annotations.
        dag = self.dag if self.has_dag() else None  # type: ignore[no-untyped-call]
        self.declared_target = declared_target(sql, target, self.template_ext, dag)
        if self.declared_target is not None:
            self.outlets = [*self.outlets, self.outlet_asset()]

    def outlet_asset(self) -> Asset:
        """Return the asset of the declared target.

        `<lineage namespace>/<db>/<table>`, the namespace being the operator's `lineage_namespace`, else
        `iceberg://<connection id>` (no connection is read at parse time). Raises ValueError when no target is declared.
        """
        if self.declared_target is None:
            raise ValueError(f"the task {self.task_id} declares no target table: give target='db.table'")
        return table_asset(self.lineage_namespace or f"iceberg://{self.iceberg_conn_id}", self.declared_target)

    @cached_property
    def hook(self) -> IcebergHook:
        """Return the hook of the operator's connection (one per operator: the catalog is opened once)."""
        return IcebergHook(self.iceberg_conn_id)

    def render_template_fields(self, context: Context, jinja_env: Environment | None = None) -> None:
        """Render `sql`, then read its lineage and import the modules the facet methods use.

        The OpenLineage listener builds the START facets in a fork of the task's process, made after rendering: the
        fork inherits the lineage read here, and `execute()` uses the same read, so a try reads its lineage once.
        A read that fails on the catalog is not kept: `execute()` reads again and says why.
        """
        super().render_template_fields(context, jinja_env)
        _import_lineage_modules()
        with suppress(Exception):  # execute() and the facets report why the lineage cannot be read
            self.lineage_read()

    def statement(self) -> Statement:
        """Return the rendered statement, parsed once (again only if `sql` changes).

        Raises LineageError, the same one on every call, when it cannot be read.
        """
        if self._parsed is None or self._parsed[0] != self.sql:
            from airflow_lineage_governance.lineage import LineageError, parse_statement

            parsed: Statement | LineageError
            started = time.perf_counter()
            try:
                parsed = parse_statement(self.sql)
            except LineageError as error:
                parsed = error
            self._seconds["parse"] = time.perf_counter() - started
            self._parsed = (self.sql, parsed)
        parsed = self._parsed[1]
        if isinstance(parsed, Exception):
            raise parsed
        return parsed

    def lineage_read(self) -> LineageRead:
        """Return the try's lineage read (made on first use: when the template is rendered, or by the first caller).

        The statement, its tables loaded once, their schema, the lineage and the runnable SELECT. Raises LineageError
        when the lineage cannot be read exactly, other errors when the catalog cannot.
        """
        if self._read is None or self._read[0] != self.sql:
            from airflow_lineage_governance.iceberg.catalog import catalog_tables, load_tables, table_columns
            from airflow_lineage_governance.lineage import (
                LineageError,
                column_lineage,
                runnable_select,
                runnable_statement,
            )

            read: LineageRead | LineageError
            started, parsed_before = time.perf_counter(), self._parsed
            try:
                statement = self.statement()
                catalog = self.hook.get_conn()
                tables = load_tables(catalog, catalog_tables(catalog) if statement.unplaced else statement.tables)
                schema = {ref: table_columns(table) for ref, table in tables.items()}
                lineage = column_lineage(statement, schema)
                if statement.reads_target:
                    runnable = runnable_statement(statement, schema)
                else:  # a CTAS's duplicates renamed x_1, as DuckDB does
                    runnable = runnable_select(statement, schema, names=[column.name for column in lineage.columns])
                read = LineageRead(statement, tables, schema, lineage, runnable)
            except LineageError as error:
                read = error
            # a statement parsed on the way counts as parse, not lineage
            parsed_here = self._seconds.get("parse", 0.0) if self._parsed is not parsed_before else 0.0
            self._seconds["lineage"] = time.perf_counter() - started - parsed_here
            self._read = (self.sql, read)
        read = self._read[1]
        if isinstance(read, Exception):
            raise read
        return read

    def execute(self, context: Context) -> dict[str, Any]:
        """Reads the lineage, runs the statement, writes the result.

        Returns the table, snapshot id, row count, partitions written and, for a MERGE, UPDATE or DELETE, the rows
        inserted, updated and deleted (XCom). Raises AirflowFailException, with the engine's sentence, when lineage is
        unreadable, and AirflowException (retried when the task has retries) naming the catalog when a REST catalog does
        not answer.
        """
        from airflow_lineage_governance.iceberg.errors import CatalogUnreachableError, IcebergError
        from airflow_lineage_governance.iceberg.read import prepare_sandboxed_connection
        from airflow_lineage_governance.lineage import LineageError
        from airflow_lineage_governance.lineage.errors import UNREADABLE
        from airflow_lineage_governance.operators.summary import (
            lineage_summary,
            overhead_line,
            phase_seconds,
            run_result,
        )

        # DuckDB opens the statement's connection while the lineage is read (the facet methods, which run nothing,
        # open none).
        prepare_sandboxed_connection()
        try:
            read = self.lineage_read()
        except LineageError as error:
            self.log.error("%s, so nothing was written: %s", UNREADABLE, error)
            raise AirflowFailException(f"{UNREADABLE}: {error}") from None
        except CatalogUnreachableError as error:  # a REST catalog down or slow: the task may be retried
            self.log.error("%s", error)
            raise AirflowException(str(error)) from None
        lineage = read.lineage
        if self.target is not None and self.declared_target != lineage.target:
            raise AirflowFailException(
                f"the statement writes {lineage.target}, not its declared target "
                f"{self.target}, so nothing was written: fix target= or the statement"
            )
        self._check_options(read.statement)
        try:
            self._run = self._write(read, self._snapshot_properties(context))
        except CatalogUnreachableError as error:
            self.log.error("%s", error)
            raise AirflowException(str(error)) from None
        except IcebergError as error:
            self.log.error("%s", error)
            raise AirflowFailException(str(error)) from None
        for line in lineage_summary(lineage, self._run):
            self.log.info("%s", line)
        self._seconds.update(phase_seconds(self._run))
        self.log.info("%s", overhead_line(self._seconds, ("parse", "lineage", "run", "commit")))
        write = self._run.write
        self._record_asset_event(
            context, write.table, {"snapshot_id": write.snapshot_id, "rows": write.rows, "table": str(write.table)}
        )
        return run_result(self._run)

    def _check_options(self, statement: Statement) -> None:
        """Raise AirflowFailException when partition_by or write_mode does not apply to the statement's kind."""
        from airflow_lineage_governance.kinds import StatementKind

        if self.partition_fields and statement.kind is not StatementKind.CREATE_TABLE_AS:
            raise AirflowFailException(
                f"{statement.target}: partition_by applies to CREATE TABLE ... AS only, and "
                f"this statement is a {statement.kind} (the table's own spec partitions what "
                "it writes); remove partition_by, nothing was written"
            )
        if self.write_mode != APPEND and statement.kind is not StatementKind.INSERT:
            raise AirflowFailException(
                f"{statement.target}: write_mode={self.write_mode!r} applies to INSERT only, "
                f"and this statement is a {statement.kind}; remove write_mode, nothing was "
                "written"
            )

    @staticmethod
    def _snapshot_properties(context: Context) -> dict[str, str]:
        """Return the snapshot-summary properties of the try's commit: the task instance and its write key."""
        from airflow_lineage_governance.iceberg.write import TRY_NUMBER, WRITE_KEY, write_key

        ti = context["ti"]
        logical_date = context.get("logical_date")
        logical = logical_date.isoformat() if logical_date else None
        return {
            "airflow.dag_id": ti.dag_id,
            "airflow.run_id": ti.run_id,
            "airflow.task_id": ti.task_id,
            "airflow.map_index": str(ti.map_index),
            TRY_NUMBER: str(ti.try_number),
            "airflow.logical_date": logical or "",
            WRITE_KEY: write_key(ti.dag_id, ti.task_id, ti.map_index, logical, ti.run_id),
        }

    @cached_property
    def session(self) -> SessionSettings:
        """Return the DuckDB session settings the statement runs under, from the provider's config section."""
        from airflow_lineage_governance.iceberg.session import CONFIG_OPTIONS, SessionSettings
        from airflow_lineage_governance.settings import setting

        return SessionSettings(**{key: setting(option) or "" for key, option in CONFIG_OPTIONS.items()})

    @cached_property
    def duckdb_resources(self) -> Resources:
        """Returns the DuckDB memory limit, threads and spill root the statement runs within.

        The operator's own, else the provider's config section, else the task's default share of the machine.
        """
        from airflow_lineage_governance.iceberg.resources import CONFIG_OPTIONS, Resources
        from airflow_lineage_governance.settings import setting, thread_count

        threads = self.duckdb_threads
        if threads is None and setting(CONFIG_OPTIONS["threads"]):
            threads = thread_count(CONFIG_OPTIONS["threads"])
        return Resources(
            self.duckdb_memory_limit or setting(CONFIG_OPTIONS["memory_limit"]) or "",
            threads or 0,
            setting(CONFIG_OPTIONS["spill_root"]) or "",
        )

    def _write(self, read: LineageRead, properties: dict[str, str]) -> StatementRun:
        """Run the statement: a MERGE, UPDATE or DELETE copy-on-write, a CTAS or INSERT through its SELECT."""
        lineage, statement = read.lineage, read.statement
        if statement.reads_target:
            sources = [ref for ref in lineage.sources if ref != lineage.target]
            from airflow_lineage_governance.iceberg.rewrite import rewrite_statement

            return rewrite_statement(
                self.hook.get_conn(),
                target=lineage.target,
                dml=read.query,
                sources=sources,
                snapshot_properties=properties,
                loaded=read.tables,
                session=self.session,
                returning_max_rows=_returning_max_rows(),
                resources=self.duckdb_resources,
            )
        from airflow_lineage_governance.iceberg.run import run_statement

        return run_statement(
            self.hook.get_conn(),
            kind=lineage.kind,
            target=lineage.target,
            query=read.query,
            sources=list(lineage.sources),
            insert_columns=[c.name for c in lineage.columns],
            snapshot_properties=properties,
            loaded=read.tables,
            replace=statement.replace,
            partition_by=self.partition_fields,
            write_mode=self.write_mode,
            if_not_exists=statement.if_not_exists,
            session=self.session,
            resources=self.duckdb_resources,
        )

    def _record_asset_event(self, context: Context, written: TableRef, extra: dict[str, Any]) -> None:
        """Put the snapshot id and row count on the outlet asset's event, when the table written is the one declared."""
        if self.declared_target is None:
            return
        if written != self.declared_target:
            self.log.warning(
                "The statement wrote %s, not %s as read when the DAG was parsed; its asset event carries no snapshot",
                written,
                self.declared_target,
            )
            return
        context["outlet_events"][self.outlet_asset()].extra = extra

    # OpenLineage: called by the provider's listener in the task's process (or a fork of it).

    def get_openlineage_facets_on_start(self) -> OpenLineageFacets:
        """Return the inputs (with schemas) and the output the statement will write.

        The output with the schema it will have (`_planned_output`).
        """
        return self._facets(complete=False)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> OpenLineageFacets:
        """Return the inputs with the snapshots read, and the output.

        The output with schema, column lineage, version and row count.
        """
        started = time.perf_counter()
        facets = self._facets(complete=self._run is not None)
        if self._run is not None:
            from airflow_lineage_governance.operators.summary import overhead_line

            self._seconds["event"] = time.perf_counter() - started
            self.log.info("%s", overhead_line(self._seconds, ("event",)))
        return facets

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> OpenLineageFacets:
        """Return what START returned and, when the lineage could not be read, the `extractionError` run facet.

        The facet carries the engine's sentence; the provider adds the task's error.
        """
        return self._facets(complete=False, failed=True)

    def _facets(self, complete: bool, failed: bool = False) -> OpenLineageFacets:
        from airflow.providers.openlineage.extractors import OperatorLineage
        from openlineage.client.facet_v2 import sql_job

        from airflow_lineage_governance.lineage import LineageError, redacted_sql
        from airflow_lineage_governance.lineage.datasets import input_dataset, output_dataset
        from airflow_lineage_governance.lineage.facet import (
            LineageTruncationRunFacet,
            bounded,
            extraction_error_facet,
        )

        try:
            shown: Statement | str = self.statement()
        except LineageError:
            shown = self.sql
        job_facets: dict[str, RunFacet | JobFacet] = {"sql": sql_job.SQLJobFacet(query=redacted_sql(shown))}
        namespace = self.lineage_namespace or "iceberg://unknown"
        run_facets: dict[str, RunFacet | JobFacet] = {}
        with suppress(Exception):  # a setting DuckDB refuses fails the task in execute(), with its sentence
            from airflow_lineage_governance.operators.facets import duckdb_session_facet

            run_facets["duckdbSession"] = duckdb_session_facet(self.session)
        try:
            namespace = self.lineage_namespace or self.hook.lineage_namespace
            read = self.lineage_read()
        except Exception as error:  # lineage must never fail the task from here; execute() will say why
            self.log.warning("OpenLineage facets carry no lineage for this statement: %s", error)
            if failed and isinstance(error, LineageError):
                run_facets["extractionError"] = extraction_error_facet(error)  # it names the target
            # No event names an output with no schema: a backend (Marquez) stores one as a new, empty version.
            return OperatorLineage(inputs=[], outputs=[], run_facets=run_facets, job_facets=job_facets)
        lineage = read.lineage
        pinned = {r.table: r.snapshot_id for r in self._run.reads} if complete and self._run else {}
        inputs: list[Dataset] = [
            input_dataset(namespace, ref, _fields(read.tables, ref), pinned.get(ref)) for ref in lineage.sources
        ]
        outputs: list[Dataset]
        if complete and self._run and self._run.write.untouched:
            # CREATE TABLE IF NOT EXISTS found the table: nothing was written, so no lineage reached it.
            write = self._run.write
            outputs = [output_dataset(namespace, lineage.target, list(write.columns), None, write.snapshot_id)]
        elif complete and self._run:
            write = self._run.write
            sent, edges = bounded(lineage, self.max_lineage_edges)
            if edges > self.max_lineage_edges:
                self.log.warning(
                    "The column lineage of %s has %d edges; the event carries the first %d",
                    lineage.target,
                    edges,
                    sent.edge_count,
                )
                run_facets["lineageTruncation"] = LineageTruncationRunFacet(
                    edges=edges, kept=sent.edge_count, limit=self.max_lineage_edges, target=str(lineage.target)
                )
            output = output_dataset(namespace, lineage.target, list(write.columns), sent, write.snapshot_id, write.rows)
            if write.counts is not None:
                from airflow_lineage_governance.operators.facets import row_changes_facet

                output.outputFacets = {**(output.outputFacets or {}), "rowChanges": row_changes_facet(write.counts)}
            outputs = [output]
        else:
            outputs = self._planned_output(namespace, read)
        return OperatorLineage(inputs=inputs, outputs=outputs, run_facets=run_facets, job_facets=job_facets)

    def _planned_output(self, namespace: str, read: LineageRead) -> list[Any]:
        """Return the output that START (and FAIL) name.

        The target with the schema it has after the statement, each field typed as COMPLETE types it, or nothing when
        that schema is not known without running the statement. Never an output without a schema, or with a field
        untyped or typed otherwise than COMPLETE types it: a backend (Marquez) keeps a dataset's fields by name and
        type, and its column lineage breaks on a field it holds twice.

        An INSERT, MERGE, UPDATE or DELETE keeps the target's schema (the catalog's); a CREATE TABLE ... AS gives
        it the schema DuckDB bound its SELECT to when the lineage was read (`bound_result_schema`: nothing read,
        no connection opened), named only when the target does not exist or already has that schema (a CREATE
        TABLE IF NOT EXISTS of an existing table: the table's).
        """
        from airflow_lineage_governance.iceberg.errors import IcebergError
        from airflow_lineage_governance.iceberg.result_schema import bound_result_schema
        from airflow_lineage_governance.iceberg.types import facet_fields
        from airflow_lineage_governance.kinds import StatementKind
        from airflow_lineage_governance.lineage.datasets import output_dataset

        target = read.lineage.target
        existing = read.tables.get(target)
        fields = facet_fields(existing.schema()) if existing is not None else None
        if read.statement.kind is StatementKind.CREATE_TABLE_AS and not (read.statement.if_not_exists and fields):
            try:
                bound = facet_fields(bound_result_schema(read.lineage, read.schema))
            except IcebergError as error:  # execute() fails too, and says why
                self.log.warning("The OpenLineage event names no output: %s", error)
                return []
            fields = bound if fields is None or fields == bound else None
        if not fields:
            return []
        return [output_dataset(namespace, target, list(fields))]


def _import_lineage_modules() -> None:
    """Import the modules the lineage read and, when OpenLineage's listener is loaded, the facet methods use.

    Called when the template is rendered, before the OpenLineage listener forks the task's process for the START event:
    the fork inherits them instead of importing them while the task waits. Without the listener (OpenLineage off),
    nothing calls the facet methods and the OpenLineage client is not imported.
    """
    import airflow_lineage_governance.iceberg.catalog  # noqa: F401
    import airflow_lineage_governance.operators.summary  # noqa: F401

    if "airflow.providers.openlineage.plugins.listener" not in sys.modules:
        return
    import airflow.providers.openlineage.extractors  # noqa: F401
    import openlineage.client.facet_v2  # noqa: F401

    import airflow_lineage_governance.iceberg.result_schema  # noqa: F401
    import airflow_lineage_governance.lineage.datasets  # noqa: F401
    import airflow_lineage_governance.operators.facets  # noqa: F401


def _returning_max_rows() -> int:
    """Return the most rows a RETURNING hands to XCom, from the provider's config section."""
    from airflow_lineage_governance.settings import whole_number

    return whole_number("returning_max_rows")


def _fields(tables: Mapping[TableRef, Table], ref: TableRef) -> list[tuple[str, str]]:
    """Return the input's schema facet fields: the table's columns as loaded, typed as every event types them."""
    from airflow_lineage_governance.iceberg.types import facet_fields

    table = tables.get(ref)
    return list(facet_fields(table.schema())) if table is not None else []
