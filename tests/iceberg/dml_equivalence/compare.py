"""One statement two ways: through rewrite_statement on an Iceberg layout, and by DuckDB on native tables holding
the same rows. The table after it is compared as a multiset of rows (NaN equals NaN, as DuckDB holds it), and so
are the counts (inserted, updated, deleted): DuckDB's returned count for UPDATE and DELETE (the rows they return,
with RETURNING), `RETURNING merge_action` for MERGE. A statement DuckDB refuses natively must make
rewrite_statement raise an IcebergError and commit nothing; any other exception from it is an error."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from airflow_lineage_governance.iceberg.errors import IcebergError
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY
from tests.iceberg.dml_equivalence.layouts import CHANGE_COLUMNS, ORDER_COLUMNS, SOURCE, TARGET, Layout, changes
from tests.iceberg.dml_equivalence.lineage import LineageVerdict
from tests.iceberg.dml_equivalence.statements import Statement
from tests.iceberg.equivalence.compare import canonical_rows

Counts = tuple[int, int, int]


@dataclass(frozen=True)
class Outcome:
    layout: str
    statement: Statement
    equal_rows: bool
    equal_counts: bool
    error: str = ""
    """The exception rewrite_statement raised that is no IcebergError (its type and first line)."""
    description: str = ""
    files_rewritten: int = 0
    files_in_table: int = 0
    rejected: bool = False
    """DuckDB refused the statement natively (and the operator raised an IcebergError, committing nothing)."""
    lineage: LineageVerdict = LineageVerdict()
    """What the lineage oracle found on the statement."""

    @property
    def equal(self) -> bool:
        return self.equal_rows and self.equal_counts and not self.error

    def message(self) -> str:
        found = "; ".join(part for part in (self.error or self.description, self.lineage.message()) if part)
        return (
            f"layout {self.layout}, statement {self.statement.index} ({self.statement.kind}): "
            f"{found}\n  {self.statement.sql}"
        )


def _create(connection: duckdb.DuckDBPyConnection, name: str, columns: dict[str, str], rows: pa.Table) -> None:
    connection.execute(f"CREATE TABLE {name} (" + ", ".join(f"{k} {v}" for k, v in columns.items()) + ")")
    connection.register("__rows", rows)
    try:
        connection.execute(f"INSERT INTO {name} SELECT * FROM __rows")
    finally:
        connection.unregister("__rows")


def native(layout: Layout, statement: Statement) -> tuple[Counter[tuple[str, ...]], Counts] | str:
    """Returns the rows and counts DuckDB gives running the statement on native tables holding the layout's rows,
    or the error it raised."""
    connection = duckdb.connect()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        connection.execute("CREATE SCHEMA shop")
        _create(connection, TARGET, ORDER_COLUMNS, layout.rows)
        _create(connection, SOURCE, CHANGE_COLUMNS, changes())
        try:
            if statement.kind == "merge":
                counted = (
                    statement.sql.replace(" RETURNING ", " RETURNING merge_action, ")
                    if " RETURNING " in statement.sql
                    else statement.sql + " RETURNING merge_action"
                )
                tally = Counter(str(row[0]) for row in connection.execute(counted).fetchall())
                counts = (tally.get("INSERT", 0), tally.get("UPDATE", 0), tally.get("DELETE", 0))
            elif " RETURNING " in statement.sql:  # one row per changed row
                number = len(connection.execute(statement.sql).fetchall())
                counts = (0, number, 0) if statement.kind.startswith("update") else (0, 0, number)
            else:
                changed = connection.execute(statement.sql).fetchone()
                number = int(changed[0]) if changed else 0
                counts = (0, number, 0) if statement.kind.startswith("update") else (0, 0, number)
        except duckdb.Error as error:
            return f"{type(error).__name__}: {str(error).splitlines()[0]}"
        return canonical_rows(connection.execute(f"SELECT * FROM {TARGET}").fetchall()), counts
    finally:
        connection.close()


def iceberg_rows(layout: Layout) -> Counter[tuple[str, ...]]:
    """Returns the rows `shop.orders` holds now, as pyiceberg's own reader reads them."""
    scanned = layout.catalog.load_table(TARGET).scan().to_arrow()
    connection = duckdb.connect()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        connection.register("scanned", scanned)
        return canonical_rows(connection.execute("SELECT " + ", ".join(ORDER_COLUMNS) + " FROM scanned").fetchall())
    finally:
        connection.close()


def _difference(got: Counter[tuple[str, ...]], want: Counter[tuple[str, ...]]) -> str:
    only_got, only_want = got - want, want - got
    first_got = next(iter(sorted(only_got)), None)
    first_want = next(iter(sorted(only_want)), None)
    return (
        f"{sum(only_got.values())} rows only in the Iceberg table, {sum(only_want.values())} only in the "
        f"native table; first: {first_got} / {first_want}"
    )


def compare(layout: Layout, statement: Statement) -> Outcome:
    """Runs the statement both ways and returns how they compared; the layout is reset afterwards."""
    expected = native(layout, statement)
    table = layout.catalog.load_table(TARGET)
    before = table.metadata.current_snapshot_id
    try:
        run = rewrite_statement(
            layout.catalog,
            target=TARGET,
            dml=statement.sql,
            sources=statement.sources,
            snapshot_properties={WRITE_KEY: f"{layout.name}:{statement.index}:{before}"},
        )
    except IcebergError as error:
        after = layout.catalog.load_table(TARGET).metadata.current_snapshot_id
        layout.reset()
        if isinstance(expected, str) and after == before:
            return Outcome(layout.name, statement, True, True, rejected=True)
        if isinstance(expected, str):
            return Outcome(layout.name, statement, False, True, description="raised, but committed a snapshot")
        return Outcome(
            layout.name,
            statement,
            False,
            False,
            description=f"raised {type(error).__name__} ({error}); DuckDB ran it natively",
        )
    except Exception as error:  # any other exception is an error of the operator
        layout.reset()
        return Outcome(layout.name, statement, False, False, error=f"{type(error).__name__}: {error}")
    try:
        if isinstance(expected, str):
            return Outcome(
                layout.name, statement, False, False, description=f"ran, but DuckDB refuses it natively ({expected})"
            )
        counts = run.write.counts
        assert counts is not None
        got_counts = (counts.inserted, counts.updated, counts.deleted)
        got_rows = iceberg_rows(layout)
        rows, want_counts = expected
        description = []
        if got_rows != rows:
            description.append(_difference(got_rows, rows))
        if got_counts != want_counts:
            description.append(f"counts {got_counts}, native {want_counts}")
        return Outcome(
            layout.name,
            statement,
            got_rows == rows,
            got_counts == want_counts,
            description="; ".join(description),
            files_rewritten=counts.files_rewritten,
            files_in_table=counts.files_in_table,
        )
    finally:
        layout.reset()
