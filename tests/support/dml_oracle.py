"""The soundness oracle for MERGE, UPDATE and DELETE: runs a statement the engine accepts on DuckDB, on a copy of
the generated target (a real table in a transaction rolled back after each run) and the generated sources, and
checks that its lineage cannot lie.

- Nothing unseen changes the target: perturbing any column of the target or of a table it reads that the lineage
  names nowhere (in no column's inputs, nor in the rows' dependencies) leaves the resulting target table unchanged
  (as a multiset of rows).
- Values come only from DIRECT inputs: every value of each target column after the statement carries only the
  tags of that column's DIRECT inputs (the column itself among them where the lineage says some rows keep it).
- The lineage's columns are the target's columns, by name and in order.
"""

from __future__ import annotations

from collections import Counter

import duckdb
import pyarrow as pa

from airflow_lineage_governance.lineage import LineageError, column_lineage, parse_statement, runnable_statement
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.oracle import SCHEMA, DuckDBRejected, Verdict, _normal, untraced_values
from tests.support.oracle_data import generate, perturbations


class DmlRunner:
    """One DuckDB connection over the generated tables (views over Arrow data, each replaceable by a perturbed
    copy); a statement runs on a real copy of its target, in a transaction rolled back afterwards."""

    def __init__(self, tables: dict[str, pa.Table]) -> None:
        self.tables = tables
        self.connection = duckdb.connect(config={"threads": 1})
        for name, table in tables.items():
            ref = TableRef.parse(name)
            self.connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{ref.namespace_name}"')
            self.connection.register(self._relation(name), table)
            self.connection.execute(f'CREATE VIEW {self._quoted(ref)} AS SELECT * FROM "{self._relation(name)}"')

    @staticmethod
    def _relation(name: str) -> str:
        return "src_" + name.replace(".", "_")

    @staticmethod
    def _quoted(ref: TableRef) -> str:
        return f'"{ref.namespace_name}"."{ref.name}"'

    def run(
        self, sql: str, target: TableRef, tables: dict[str, pa.Table] | None = None
    ) -> tuple[list[str], list[tuple[object, ...]]]:
        """Returns the target's column names and rows after `sql` runs over the tables (a perturbed set when
        given); raises duckdb.Error when DuckDB refuses the statement."""
        given = tables or self.tables
        changed = [name for name in given if given[name] is not self.tables[name]]
        for name in changed:
            self.connection.register(self._relation(name), given[name])
        quoted = self._quoted(target)
        self.connection.execute("BEGIN")
        try:
            self.connection.execute(f"DROP VIEW {quoted}")
            self.connection.execute(f'CREATE TABLE {quoted} AS SELECT * FROM "{self._relation(str(target))}"')
            self.connection.execute(sql)
            relation = self.connection.sql(f"SELECT * FROM {quoted}")
            return list(relation.columns), relation.fetchall()
        finally:
            self.connection.execute("ROLLBACK")
            for name in changed:
                self.connection.register(self._relation(name), self.tables[name])


def _multiset(rows: list[tuple[object, ...]]) -> Counter[str]:
    return Counter(repr(tuple(_normal(value) for value in row)) for row in rows)


def check_dml(
    sql: str, runner: DmlRunner, schema: dict[str, dict[str, dict[str, str]]] | None = None, *, tagged: bool = True
) -> Verdict:
    """Returns the oracle's verdict on a MERGE, UPDATE or DELETE over the runner's tables (whose catalog schema is
    `schema`, the generated tables' when None; `tagged` when their values carry the tags of their columns, as the
    generated tables' do); raises DuckDBRejected when DuckDB cannot run it on the unperturbed data."""
    verdict = Verdict(sql)
    schema = SCHEMA if schema is None else schema
    try:
        statement = parse_statement(sql)
        lineage = column_lineage(statement, schema)
        runnable = runnable_statement(statement, schema)
    except LineageError as error:
        verdict.refused = error
        return verdict
    verdict.lineage = lineage
    target = statement.target
    try:
        names, rows = runner.run(runnable, target)
    except duckdb.Error as error:
        raise DuckDBRejected(str(error).splitlines()[0]) from None
    written = [output.name for output in lineage.columns]
    if written != names:
        verdict.violations.append(f"the target has the columns {names}, the lineage {written}")
        return verdict
    base = _multiset(rows)
    named = {dep.source for output in lineage.columns for dep in output.inputs} | {dep.source for dep in lineage.rows}
    read = {str(ref) for ref in (*statement.tables, *lineage.sources)}
    for table in sorted(read & set(runner.tables)):
        for column in runner.tables[table].column_names:
            if ColumnRef.parse(f"{table}.{column}") in named:
                continue
            for changed in perturbations(runner.tables, table, column):
                try:
                    after = _multiset(runner.run(runnable, target, changed)[1])
                except duckdb.Error as error:
                    verdict.violations.append(
                        f"changing {table}.{column}, which the lineage names nowhere, makes "
                        f"DuckDB refuse the statement ({str(error).splitlines()[0]})"
                    )
                    break
                if after != base:
                    verdict.violations.append(
                        f"changing {table}.{column}, which the lineage names nowhere, changes the target"
                    )
                    break
    if tagged:
        verdict.violations.extend(untraced_values(lineage, rows))
    return verdict


_RUNNER: DmlRunner | None = None


def shared_dml_runner() -> DmlRunner:
    """Returns the process's one DML runner over the seeded data."""
    global _RUNNER
    if _RUNNER is None:
        _RUNNER = DmlRunner(generate())
    return _RUNNER
