"""The soundness oracle: runs a statement the engine accepts on DuckDB over generated data and checks that its
lineage cannot lie.

- Nothing unseen changes the output: perturbing any source column the lineage names nowhere (in no output
  column's inputs, nor in the rows' dependencies) leaves the output rows unchanged (as a multiset, in order when
  the statement orders its result).
- Values come only from DIRECT sources: every output value carries only the tags of its column's DIRECT inputs.
- The lineage's columns are the columns DuckDB returns, by count, and for a CTAS by name: the names `DESCRIBE`
  gives of the table DuckDB's own CREATE TABLE ... AS writes (DuckDB renames a duplicate there, not in a SELECT).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from airflow_lineage_governance.kinds import EdgeType, StatementKind
from airflow_lineage_governance.lineage import (
    ColumnLineage,
    LineageError,
    column_lineage,
    parse_statement,
    runnable_select,
)
from airflow_lineage_governance.refs import ColumnRef
from tests.support.oracle_data import TABLES, generate, perturbations, tags_in

SCHEMA: dict[str, dict[str, dict[str, str]]] = {}
for _name, _arrow in TABLES.items():
    _db, _table = _name.split(".")
    SCHEMA.setdefault(_db, {})[_table] = {f.name: str(f.type) for f in _arrow}


class DuckDBRejected(Exception):
    """The statement's SELECT does not run on DuckDB (a generated statement to skip, not a lineage fault)."""


@dataclass
class Verdict:
    """What the oracle found for one statement: refused (the LineageError), or the violations of the property."""

    sql: str
    refused: LineageError | None = None
    lineage: ColumnLineage | None = None
    violations: list[str] = field(default_factory=list)


def _normal(value: object) -> object:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return tuple((k, _normal(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_normal(v) for v in value)
    return value


class Runner:
    """One DuckDB connection over the generated tables, each replaceable by a perturbed copy."""

    def __init__(self, tables: dict[str, pa.Table]) -> None:
        self.tables = tables
        self.connection = duckdb.connect(config={"threads": 1})
        for name in tables:
            db, table = name.split(".")
            self.connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{db}"')
            self._register(name, tables[name])
            self.connection.execute(f'CREATE VIEW "{db}"."{table}" AS SELECT * FROM "{self._relation(name)}"')

    @staticmethod
    def _relation(name: str) -> str:
        return "src_" + name.replace(".", "_")

    def _register(self, name: str, table: pa.Table) -> None:
        self.connection.register(self._relation(name), table)

    def run(self, query: str, tables: dict[str, pa.Table] | None = None) -> tuple[list[str], list[tuple]]:
        """Returns the column names and rows of `query` over the tables (a perturbed set when given)."""
        changed = [name for name in (tables or {}) if tables is not None and tables[name] is not self.tables[name]]
        for name in changed:
            self._register(name, tables[name])  # type: ignore[index]
        try:
            relation = self.connection.sql(query)
            return list(relation.columns), relation.fetchall()
        finally:
            for name in changed:
                self._register(name, self.tables[name])

    def created_names(self, query: str) -> list[str]:
        """Returns the column names of the table `CREATE TABLE ... AS <query>` writes, as DESCRIBE gives them."""
        self.connection.execute(f"CREATE OR REPLACE TABLE main.oracle_ctas AS {query}")
        try:
            return [row[0] for row in self.connection.execute("DESCRIBE main.oracle_ctas").fetchall()]
        finally:
            self.connection.execute("DROP TABLE main.oracle_ctas")

    def close(self) -> None:
        self.connection.close()


def _comparable(rows: list[tuple], ordered: bool) -> object:
    normal = [tuple(_normal(v) for v in row) for row in rows]
    return normal if ordered else Counter(map(repr, normal))


def check(sql: str, runner: Runner, schema: dict[str, dict[str, dict[str, str]]] | None = None) -> Verdict:
    """Returns the oracle's verdict on `sql` over the runner's tables (whose schema is `schema`, the harness's
    SCHEMA when not given); raises DuckDBRejected when DuckDB cannot run its SELECT."""
    verdict = Verdict(sql)
    schema = SCHEMA if schema is None else schema
    try:
        statement = parse_statement(sql)
        lineage = column_lineage(statement, schema)
        query = runnable_select(statement, schema, names=[output.name for output in lineage.columns])
    except LineageError as error:
        verdict.refused = error
        return verdict
    verdict.lineage = lineage
    try:
        names, rows = runner.run(query)
    except duckdb.Error as error:
        raise DuckDBRejected(str(error)) from None
    if len(names) != len(lineage.columns):
        verdict.violations.append(f"DuckDB returns {len(names)} columns, the lineage {len(lineage.columns)}")
        return verdict
    if statement.kind == StatementKind.CREATE_TABLE_AS:
        written = [output.name for output in lineage.columns]
        created = runner.created_names(query)
        if written != created:
            verdict.violations.append(
                f"DuckDB's CREATE TABLE ... AS names the columns {created}, the lineage {written}"
            )
        if written != names:  # the operator writes the SELECT's result under the SELECT's names
            verdict.violations.append(f"the SELECT the operator runs names the columns {names}, the lineage {written}")
    ordered = statement.query.args.get("order") is not None
    base = _comparable(rows, ordered)
    named = {dep.source for output in lineage.columns for dep in output.inputs}
    named |= {dep.source for dep in lineage.rows}
    read = {str(ref) for ref in statement.sources} | {str(ref) for ref in lineage.sources}
    for table in sorted(read & set(runner.tables)):
        for column in runner.tables[table].column_names:
            if ColumnRef.parse(f"{table}.{column}") in named:
                continue
            for changed in perturbations(runner.tables, table, column):
                if _comparable(runner.run(query, changed)[1], ordered) != base:
                    verdict.violations.append(
                        f"changing {table}.{column}, which the lineage names nowhere, changes the output"
                    )
                    break
    verdict.violations.extend(untraced_values(lineage, rows))
    return verdict


def untraced_values(lineage, rows) -> list[str]:
    """Returns a sentence for each output column holding tagged values of a column that is not one of its DIRECT
    inputs (values come only from DIRECT sources)."""
    found = []
    for index, output in enumerate(lineage.columns):
        allowed = {str(dep.source) for dep in output.inputs if dep.type == EdgeType.DIRECT}
        seen: set[str] = set()
        for row in rows:
            seen |= tags_in(row[index])
        if seen - allowed:
            found.append(
                f"column {output.name} holds values of {sorted(seen - allowed)}, which are not among its "
                f"DIRECT inputs {sorted(allowed)}"
            )
    return found


_RUNNER: Runner | None = None


def shared_runner() -> Runner:
    """Returns the process's one runner over the seeded data."""
    global _RUNNER
    if _RUNNER is None:
        _RUNNER = Runner(generate())
    return _RUNNER
