"""Partitioned tables: partition_by read without pyiceberg, CTAS with a spec, partitioned appends, and
overwrite of exactly the partitions an INSERT's rows fall in."""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.partitions import (
    PartitionField,
    PartitionSpecError,
    check_write_mode,
    parse_partition_by,
    parse_partition_field,
)
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from airflow_lineage_governance.kinds import StatementKind


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("country", PartitionField("identity", "country")),
        ("identity(Country)", PartitionField("identity", "country")),
        ("day(paid_at)", PartitionField("day", "paid_at")),
        ("days(paid_at)", PartitionField("day", "paid_at")),
        ("YEAR(paid_at)", PartitionField("year", "paid_at")),
        ("month(paid_at)", PartitionField("month", "paid_at")),
        ("hour(paid_at)", PartitionField("hour", "paid_at")),
        ("bucket[16](learner_id)", PartitionField("bucket", "learner_id", 16)),
        ("bucket(16, learner_id)", PartitionField("bucket", "learner_id", 16)),
        ("truncate[4](email)", PartitionField("truncate", "email", 4)),
    ],
)
def test_partition_entries_are_read(text, field):
    assert parse_partition_field(text) == field
    assert parse_partition_field(str(field)) == field


@pytest.mark.parametrize("text", ["week(paid_at)", "bucket[0](id)", "day()", "a b", "bucket[x](id)", ""])
def test_a_bad_entry_is_one_sentence_naming_it(text):
    with pytest.raises(PartitionSpecError) as raised:
        parse_partition_field(text, "analytics.daily_revenue")
    message = str(raised.value)
    assert message.startswith("analytics.daily_revenue: ") and repr(text) in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_field_twice_and_a_bad_write_mode_are_refused():
    with pytest.raises(PartitionSpecError, match="partition field paid_at_day twice"):
        parse_partition_by(["day(paid_at)", "days(paid_at)"])
    with pytest.raises(PartitionSpecError, match="write_mode 'upsert' is not one of"):
        check_write_mode("upsert")
    assert parse_partition_by("country") == (PartitionField("identity", "country"),)


def _payments(days: list[int], country: str = "FR") -> pa.Table:
    return pa.table(
        {
            "paid_at": [dt.datetime(2026, 1, day, 12) for day in days],
            "country": [country] * len(days),
            "amount": [float(day) for day in days],
        }
    )


@pytest.fixture
def catalog(tmp_path):
    return open_local_catalog(tmp_path)


def _rows(catalog, name="a.revenue"):
    return sorted(
        catalog.load_table(("a", name.split(".")[1])).scan().to_arrow().to_pylist(),
        key=lambda r: (r["paid_at"], r["country"], r["amount"]),
    )


def test_ctas_creates_the_spec_and_partitioned_files(catalog):
    fields = parse_partition_by(["day(paid_at)", "country"])
    write = create_or_replace(catalog, "a.revenue", _payments([1, 2, 2]), {}, partition_by=fields)
    table = catalog.load_table(("a", "revenue"))
    assert [str(f.transform) for f in table.spec().fields] == ["day", "identity"]
    assert write.partitions == ("paid_at_day=2026-01-01/country=FR", "paid_at_day=2026-01-02/country=FR")
    assert len(list(table.scan().plan_files())) == 2
    # A replace without partition_by keeps the spec; with another one sets it.
    create_or_replace(catalog, "a.revenue", _payments([3]), {})
    assert [f.name for f in catalog.load_table(("a", "revenue")).spec().fields] == ["paid_at_day", "country"]
    again = create_or_replace(
        catalog, "a.revenue", _payments([3, 4]), {}, partition_by=parse_partition_by(["month(paid_at)"])
    )
    assert [f.name for f in catalog.load_table(("a", "revenue")).spec().fields] == ["paid_at_month"]
    assert again.partitions == ("paid_at_month=2026-01",)


def test_a_partition_column_the_result_lacks_is_refused_before_writing(catalog):
    with pytest.raises(PartitionSpecError, match="names the column paid_on"):
        create_or_replace(catalog, "a.revenue", _payments([1]), {}, partition_by=parse_partition_by(["day(paid_on)"]))
    assert not catalog.table_exists(("a", "revenue"))


def _insert(catalog, query, mode, key):
    return run_statement(
        catalog,
        kind=StatementKind.INSERT,
        target="a.revenue",
        query=query,
        sources=["a.staged"],
        insert_columns=["paid_at", "country", "amount"],
        write_mode=mode,
        snapshot_properties={WRITE_KEY: key},
    )


def test_insert_appends_partitioned_files_and_overwrite_replaces_exactly_its_partitions(catalog):
    create_or_replace(catalog, "a.revenue", _payments([1, 2, 3]), {}, partition_by=parse_partition_by(["day(paid_at)"]))
    create_or_replace(catalog, "a.staged", _payments([2, 2]).set_column(2, "amount", pa.array([20.0, 21.0])), {})
    query = "SELECT paid_at, country, amount FROM a.staged"
    appended = _insert(catalog, query, "append", "k1")
    assert appended.write.partitions == ("paid_at_day=2026-01-02",)
    assert [r["amount"] for r in _rows(catalog)] == [1.0, 2.0, 20.0, 21.0, 3.0]
    before = _rows(catalog)
    replaced = _insert(catalog, query, "overwrite_partitions", "k2")
    assert replaced.write.partitions == ("paid_at_day=2026-01-02",) and replaced.write.replaced
    after = _rows(catalog)
    assert [r["amount"] for r in after] == [1.0, 20.0, 21.0, 3.0]
    # Day 1 and day 3 are untouched; a retried try of the same overwrite changes nothing.
    assert [r for r in after if r["paid_at"].day != 2] == [r for r in before if r["paid_at"].day != 2]
    _insert(catalog, query, "overwrite_partitions", "k2")
    assert _rows(catalog) == after
    # The same overwrite as DuckDB would do it on a plain copy: delete the day, insert the rows.
    plain = duckdb.connect()
    plain.register("before", pa.Table.from_pylist(before))
    plain.register("staged", catalog.load_table(("a", "staged")).scan().to_arrow())
    expected = (
        plain.sql(
            "SELECT * FROM before WHERE paid_at::DATE <> DATE '2026-01-02' UNION ALL "
            "SELECT * FROM staged ORDER BY paid_at, country, amount"
        )
        .to_arrow_table()
        .to_pylist()
    )
    assert after == expected


def test_overwrite_of_an_unpartitioned_table_is_one_sentence(catalog):
    create_or_replace(catalog, "a.revenue", _payments([1]), {})
    create_or_replace(catalog, "a.staged", _payments([2]), {})
    with pytest.raises(Exception, match="needs a partitioned table"):
        _insert(catalog, "SELECT paid_at, country, amount FROM a.staged", "overwrite_partitions", "k")
