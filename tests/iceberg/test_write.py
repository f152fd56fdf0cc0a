"""The write path's own rules: bounded retries with a sentence, types Iceberg has no place for, appends once."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.iceberg.catalog import catalog_tables, open_catalog
from airflow_lineage_governance.iceberg.errors import CommitConflictError, IcebergError, IcebergWriteError
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import (
    WRITE_KEY,
    WriteResult,
    append_once,
    create_or_replace,
    with_retries,
    writable,
)
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef


def test_conflicts_are_retried_a_bounded_number_of_times_then_one_sentence():
    calls = []

    def always_conflicts() -> WriteResult:
        calls.append(1)
        raise CommitFailedException("someone else committed")

    with pytest.raises(CommitConflictError) as raised:
        with_retries(always_conflicts, "analytics.daily_revenue", attempts=3, base_delay=0.001)
    assert len(calls) == 3
    assert str(raised.value) == (
        "analytics.daily_revenue: 3 commits in a row conflicted with concurrent writers; "
        "retry the task, or stagger the tasks that write this table."
    )


def test_a_conflict_then_success_returns_the_write():
    outcomes = [CommitFailedException("x"), WriteResult(TableRef.parse("a.b"), 1, 2)]

    def flaky() -> WriteResult:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert with_retries(flaky, "a.b", base_delay=0.001) == WriteResult(TableRef.parse("a.b"), 1, 2)


def test_unsigned_and_large_types_become_ones_iceberg_has():
    table = pa.table(
        {"u": pa.array([1], pa.uint32()), "big": pa.array([1], pa.uint64()), "s": pa.array(["x"], pa.large_string())}
    )
    assert writable(table).schema.types == [pa.int64(), pa.decimal128(20, 0), pa.string()]


def test_append_once_by_write_key_and_a_sentence_for_a_bad_cast(catalog):
    create_or_replace(catalog, "a.t", pa.table({"day": pa.array([], pa.date32()), "n": pa.array([], pa.int64())}), {})
    rows = pa.table({"x": ["2026-10-01"], "y": [3]})
    first = append_once(
        catalog,
        "a.t",
        ["day", "n"],
        rows.cast(pa.schema([("x", pa.date32()), ("y", pa.int64())])),
        {WRITE_KEY: "dag/task/-1/2026-10-01"},
    )
    again = append_once(
        catalog,
        "a.t",
        ["day", "n"],
        rows.cast(pa.schema([("x", pa.date32()), ("y", pa.int64())])),
        {WRITE_KEY: "dag/task/-1/2026-10-01"},
    )
    assert not first.already_written and again.already_written and again.snapshot_id == first.snapshot_id
    assert catalog.load_table("a.t").scan().to_arrow().num_rows == 1
    with pytest.raises(
        IcebergWriteError, match=r"a.t: column day cannot take the SELECT's string values as date32"
    ) as raised:
        append_once(catalog, "a.t", ["day", "n"], pa.table({"x": ["not a date"], "y": [1]}), {})
    assert "not a date" not in str(raised.value) and "'?'" in str(raised.value)
    assert catalog.load_table("a.t").scan().to_arrow().num_rows == 1


def test_a_statement_reads_and_writes_a_two_level_namespace(catalog):
    source, out = TableRef(("a", "b"), "src"), TableRef(("a", "b"), "out")
    create_or_replace(catalog, source, pa.table({"id": [1, 2, 3], "v": [10, 20, 30]}), {})
    run = run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target=out,
        sources=[source],
        query="select s.id, s.v * 2 as v from a.b.src s where s.id > 1",
    )
    assert run.reads[0].table == source and run.write.table == out
    assert run.write.columns == (("id", "long"), ("v", "long"))
    assert catalog.load_table(("a", "b", "out")).scan().to_arrow().to_pylist() == [
        {"id": 2, "v": 40},
        {"id": 3, "v": 60},
    ]
    again = run_statement(
        catalog,
        kind=StatementKind.INSERT,
        target=out,
        sources=[source],
        insert_columns=["id", "v"],
        query="select s.id, s.v from a.b.src s where s.id = 1",
        snapshot_properties={WRITE_KEY: "k"},
    )
    assert (again.write.rows, again.write.already_written) == (1, False)
    assert sorted(r["id"] for r in catalog.load_table(("a", "b", "out")).scan().to_arrow().to_pylist()) == [1, 2, 3]
    assert TableRef(("a", "b"), "out") in catalog_tables(catalog)


def test_write_errors_share_the_package_root():
    assert issubclass(IcebergWriteError, IcebergError) and issubclass(IcebergError, LineageGovernanceError)


def test_a_namespace_another_task_makes_at_the_same_moment_is_written_into(
    catalog, empty_catalog_properties, catalog_kind, monkeypatch
):
    other = open_catalog("platform", empty_catalog_properties)  # another task's catalog, on the same store
    looked_up = catalog.namespace_exists
    made: list[object] = []

    def made_right_after(namespace):  # the other task makes the namespace between this one's look-up and its insert
        found = looked_up(namespace)
        if not made:
            other.create_namespace(namespace)
            made.append(namespace)
        return found

    monkeypatch.setattr(catalog, "namespace_exists", made_right_after)
    create_or_replace(catalog, "marketing.t", pa.table({"n": [1, 2]}), {})
    assert catalog.load_table("marketing.t").scan().to_arrow().column("n").to_pylist() == [1, 2]
    assert bool(made) == (catalog_kind == "sql")  # a REST server makes it or answers that it exists, in one call
