"""IcebergSqlOperator: one CTAS or INSERT … SELECT over an Iceberg catalog, run on DuckDB, with exact
OpenLineage column lineage read before anything is written."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_lineage_governance.hooks.iceberg import IcebergHook
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.run import StatementRun, run_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, write_key
from airflow_lineage_governance.lineage import ColumnLineage, LineageError, column_lineage, redacted_sql
from airflow_lineage_governance.lineage.errors import UNREADABLE
from airflow_lineage_governance.lineage.facet import DEFAULT_MAX_EDGES, LineageTruncationRunFacet, bounded
from airflow_lineage_governance.lineage.runnable import runnable_select
from airflow_lineage_governance.lineage.statement import referenced_tables, target_of
from airflow_lineage_governance.operators.summary import lineage_summary

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from airflow.sdk import Context


class IcebergSqlOperator(BaseOperator):
    """Runs one `CREATE [OR REPLACE] TABLE … AS SELECT` or `INSERT INTO … SELECT` over the tables of an
    Iceberg catalog on DuckDB, and writes the result back to the catalog in one commit.

    The statement's column lineage is read first, against the catalog's current schema; a statement whose
    lineage cannot be read exactly fails the task before anything is written.

    :param sql: the statement, or a path to a `.sql` file (templated).
    :param iceberg_conn_id: the `iceberg_catalog` connection.
    :param lineage_namespace: the OpenLineage dataset namespace; default: the connection's.
    :param max_lineage_edges: past this many column-lineage edges the event's facet is cut, and a
        `lineageTruncation` run facet says so (seed 002's bound: 4,096).
    """

    template_fields: Sequence[str] = ("sql",)
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql"}
    ui_color = "#cfe8ff"

    def __init__(self, *, sql: str, iceberg_conn_id: str = IcebergHook.default_conn_name,
                 lineage_namespace: str | None = None, max_lineage_edges: int = DEFAULT_MAX_EDGES,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_lineage_edges = max_lineage_edges
        self.sql = sql
        self.iceberg_conn_id = iceberg_conn_id
        self.lineage_namespace = lineage_namespace
        self._lineage: ColumnLineage | None = None
        self._schema: dict[str, dict[str, dict[str, str]]] = {}
        self._run: StatementRun | None = None
        self._written_fields: list[tuple[str, str]] = []
        self.lineage_seconds = 0.0  # time execute() spent reading lineage (benchmarks/operator_overhead.py)

    @property
    def hook(self) -> IcebergHook:
        """Returns the hook of the operator's connection."""
        return IcebergHook(self.iceberg_conn_id)

    def _namespace(self, hook: IcebergHook) -> str:
        return self.lineage_namespace or hook.lineage_namespace

    def _read_lineage(self, hook: IcebergHook) -> ColumnLineage:
        names, unplaced = referenced_tables(self.sql)
        self._schema = hook.get_lineage_schema(None if unplaced else names)
        self._lineage = column_lineage(self.sql, self._schema)
        return self._lineage

    def execute(self, context: Context) -> dict[str, Any]:
        """Reads the lineage, runs the statement, writes the result; returns the table, snapshot id and row
        count (XCom). Raises AirflowFailException, with the engine's sentence, when lineage is unreadable."""
        hook = self.hook
        started = time.perf_counter()
        try:
            lineage = self._read_lineage(hook)
            query = runnable_select(self.sql, self._schema)
        except LineageError as error:
            self.log.error("%s, so nothing was written: %s", UNREADABLE, error)
            raise AirflowFailException(f"{UNREADABLE}: {error}") from None
        self.lineage_seconds = time.perf_counter() - started
        ti = context["ti"]
        logical_date = context.get("logical_date")
        logical = logical_date.isoformat() if logical_date else None
        properties = {
            "airflow.dag_id": ti.dag_id, "airflow.run_id": ti.run_id, "airflow.task_id": ti.task_id,
            "airflow.map_index": str(ti.map_index), "airflow.try_number": str(ti.try_number),
            "airflow.logical_date": logical or "",
            WRITE_KEY: write_key(ti.dag_id, ti.task_id, ti.map_index, logical, ti.run_id),
        }
        try:
            self._run = run_statement(
                hook.get_conn(), kind=lineage.kind, target=lineage.target, query=query,
                sources=list(lineage.sources), insert_columns=[c.name for c in lineage.columns],
                snapshot_properties=properties)
        except IcebergWriteError as error:
            self.log.error("%s", error)
            raise AirflowFailException(str(error)) from None
        written = hook.get_conn().load_table(lineage.target).schema()
        self._written_fields = [(f.name, str(f.field_type)) for f in written.fields]
        for line in lineage_summary(lineage, self._run):
            self.log.info("%s", line)
        write = self._run.write
        return {"table": write.table, "snapshot_id": write.snapshot_id, "rows": write.rows,
                "already_written": write.already_written}

    # OpenLineage: called by the provider's listener in the task's process.

    def get_openlineage_facets_on_start(self) -> OperatorLineage:
        """Returns the inputs (with schemas) and the output the statement will write."""
        return self._facets(complete=False)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> OperatorLineage:
        """Returns the inputs with the snapshots read, and the output with schema, column lineage, version
        and row count."""
        return self._facets(complete=self._run is not None)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> OperatorLineage:
        """Returns what START returned; the provider adds the error."""
        return self._facets(complete=False)

    def _facets(self, complete: bool) -> OperatorLineage:
        from airflow.providers.openlineage.extractors import OperatorLineage
        from openlineage.client.facet_v2 import sql_job

        from airflow_lineage_governance.lineage.datasets import input_dataset, output_dataset

        job_facets = {"sql": sql_job.SQLJobFacet(query=redacted_sql(self.sql))}
        hook = self.hook
        namespace = self.lineage_namespace or "iceberg://unknown"
        try:
            namespace = self._namespace(hook)
            lineage = self._lineage or self._read_lineage(hook)
        except Exception as error:  # lineage must never fail the task from here; execute() will say why
            self.log.warning("OpenLineage facets carry no lineage for this statement: %s", error)
            target = target_of(self.sql)
            outputs = [output_dataset(namespace, target)] if target else []
            return OperatorLineage(inputs=[], outputs=outputs, job_facets=job_facets)
        pinned = {read.table: read.snapshot_id for read in self._run.reads} if complete and self._run else {}
        inputs = [input_dataset(namespace, name, _fields(self._schema, name), pinned.get(name))
                  for name in lineage.sources]
        run_facets = {}
        if complete and self._run:
            write = self._run.write
            sent, edges = bounded(lineage, self.max_lineage_edges)
            if edges > self.max_lineage_edges:
                self.log.warning("The column lineage of %s has %d edges; the event carries the first %d",
                                 lineage.target, edges, sent.edge_count)
                run_facets["lineageTruncation"] = LineageTruncationRunFacet(
                    edges=edges, kept=sent.edge_count, limit=self.max_lineage_edges, target=lineage.target)
            outputs = [output_dataset(namespace, lineage.target, self._written_fields, sent,
                                      write.snapshot_id, write.rows)]
        else:
            outputs = [output_dataset(namespace, lineage.target, _fields(self._schema, lineage.target))]
        return OperatorLineage(inputs=inputs, outputs=outputs, run_facets=run_facets, job_facets=job_facets)


def _fields(schema: dict[str, dict[str, dict[str, str]]], name: str) -> list[tuple[str, str]]:
    db, table = name.split(".", 1)
    return list(schema.get(db, {}).get(table, {}).items())
