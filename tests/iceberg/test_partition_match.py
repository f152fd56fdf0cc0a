"""A MERGE, UPDATE or DELETE whose condition bounds the target's identity-partition columns opens no data file of a
partition it cannot touch: DuckDB evaluates the conjuncts that read those columns alone over each file's partition
values. Conjuncts that call a function, read a subquery or another column of the target are left out."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo

from airflow_lineage_governance.iceberg.bounds import parse_dml
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.partition_match import usable_conjuncts
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from airflow_lineage_governance.refs import TableRef

DAYS = 6
TOUCHED = dt.date(2026, 1, 2)
TARGET = TableRef.parse("shop.orders")


def _orders() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(60), pa.int64()),
            "day": [dt.date(2026, 1, 1 + i % DAYS) for i in range(60)],
            "amount": [float(i) for i in range(60)],
        }
    )


def _changes() -> pa.Table:
    return pa.table({"id": pa.array([7, 13, 1000], pa.int64()), "day": [TOUCHED] * 3, "amount": [1.5, 2.5, 3.5]})


STATEMENTS = {
    "merge on the partition column": (
        "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.day = s.day "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount "
        "WHEN NOT MATCHED THEN INSERT (id, day, amount) VALUES (s.id, s.day, s.amount)",
        (1, 2, 0),
    ),
    "merge using the partition column": (
        "MERGE INTO shop.orders USING shop.changes USING (id, day) WHEN MATCHED THEN DELETE",
        (0, 0, 2),
    ),
    "update from": (
        "UPDATE shop.orders AS t SET amount = s.amount FROM shop.changes AS s WHERE t.id = s.id AND t.day = s.day",
        (0, 2, 0),
    ),
    "update by a constant": (
        "UPDATE shop.orders SET amount = -amount WHERE day = DATE '2026-01-02' AND id < 30",
        (0, 5, 0),
    ),
    "delete by a list and a range": (
        "DELETE FROM shop.orders WHERE (day IN (DATE '2026-01-02', DATE '2026-03-01') OR day > DATE '2027-01-01') "
        "AND amount > 40",
        (0, 0, 3),
    ),
    "delete using": (
        "DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.day = s.day AND t.id > 50",
        (0, 0, 1),
    ),
}


def _catalog(tmp_path: Path):
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "shop.orders", _orders(), {}, partition_by=parse_partition_by(["day"]))
    create_or_replace(catalog, "shop.changes", _changes(), {})
    return catalog


def _on_plain_copy(dml: str) -> list[tuple]:
    plain = duckdb.connect()
    plain.execute("CREATE SCHEMA shop")
    for name, rows in (("orders", _orders()), ("changes", _changes())):
        plain.register(f"_{name}", rows)
        plain.execute(f"CREATE TABLE shop.{name} AS SELECT * FROM _{name}")
    plain.execute(dml)
    return plain.execute("SELECT * FROM shop.orders WHERE day = DATE '2026-01-02' ORDER BY id").fetchall()


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_a_statement_bounded_by_partition_values_opens_no_file_of_another_partition(tmp_path, name):
    dml, counted = STATEMENTS[name]
    catalog = _catalog(tmp_path)
    table = catalog.load_table(TARGET.identifier)
    for task in table.scan().plan_files():
        if table.spec().partition_to_path(task.file.partition, table.schema()) != f"day={TOUCHED}":
            Path(task.file.file_path.removeprefix("file://")).write_bytes(b"not a parquet file")
    sources = ["shop.changes"] if "shop.changes" in dml else []
    run = rewrite_statement(
        catalog, target="shop.orders", dml=dml, sources=sources, snapshot_properties={WRITE_KEY: "k"}
    )
    counts = run.write.counts
    assert (counts.inserted, counts.updated, counts.deleted) == counted
    assert (counts.files_rewritten, counts.files_in_table) == (1, DAYS)
    after = catalog.load_table(TARGET.identifier).scan(row_filter=EqualTo("day", TOUCHED)).to_arrow()
    assert sorted(tuple(row.values()) for row in after.to_pylist()) == _on_plain_copy(dml)


def test_a_condition_a_partition_value_cannot_decide_opens_every_file(tmp_path):
    catalog = _catalog(tmp_path)
    table = catalog.load_table(TARGET.identifier)
    first = next(iter(table.scan(row_filter=EqualTo("day", dt.date(2026, 1, 5))).plan_files()))
    Path(first.file.file_path.removeprefix("file://")).write_bytes(b"not a parquet file")
    dml = "UPDATE shop.orders SET amount = 0 WHERE dayofmonth(day) = 2"
    with pytest.raises(Exception, match="shop.orders"):
        rewrite_statement(catalog, target="shop.orders", dml=dml, sources=[], snapshot_properties={WRITE_KEY: "k"})


@pytest.mark.parametrize(
    ("dml", "used"),
    [
        (
            "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.day = s.day "
            "WHEN MATCHED THEN DELETE",
            ["t.day = s.day"],
        ),
        (
            "UPDATE shop.orders SET amount = 0 WHERE day = DATE '2026-01-02' AND amount > 3",
            ["day = CAST('2026-01-02' AS DATE)"],
        ),
        ("UPDATE shop.orders SET amount = 0 WHERE day + 1 > DATE '2026-01-02' OR NOT day IS NULL", None),
        ("DELETE FROM shop.orders WHERE dayofmonth(day) = 2", []),
        ("DELETE FROM shop.orders WHERE day IN (SELECT day FROM shop.changes)", []),
        ("DELETE FROM shop.orders WHERE day = DATE '2026-01-02' OR amount > 3", []),
        ("DELETE FROM shop.orders AS t USING shop.changes AS s WHERE day = s.day", []),
        ("DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.day = s.day", ["t.day = s.day"]),
        (
            "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.day = s.day AND day = s.day "
            "WHEN MATCHED THEN DELETE",
            ["t.day = s.day"],
        ),
        ("UPDATE shop.orders SET amount = 0 WHERE s.x.day = 1", []),
    ],
)
def test_only_conjuncts_made_of_partition_columns_constants_and_operators_are_used(dml, used):
    parsed = parse_dml(dml, TARGET)
    found = [conjunct.sql(dialect="duckdb") for conjunct in usable_conjuncts(parsed, {"day"})]
    assert found == (used if used is not None else [parsed.condition.sql(dialect="duckdb")])
