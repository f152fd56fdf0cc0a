"""DuckDB writing a statement's result files itself: only where its Parquet file is what the table takes, with
the same rows, field ids and statistics as pyiceberg's writer gives the same rows, and the same refusals."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import create_or_replace
from airflow_lineage_governance.kinds import StatementKind

CTAS, INSERT = StatementKind.CREATE_TABLE_AS, StatementKind.INSERT
EVERY_DIRECT_TYPE = """SELECT range AS id, (range % 3 = 0) AS flag, (range * 7)::INTEGER AS small,
    range / 3 AS ratio, (range / 7)::FLOAT AS single, (range * 1.25)::DECIMAL(12, 2) AS money,
    (range * 1.25)::DECIMAL(30, 4) AS wide, DATE '2026-01-01' + (range % 40)::INTEGER AS day,
    TIMESTAMP '2026-01-01 00:00:00' + to_seconds(range) AS at,
    TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(range) AS at_utc,
    CASE WHEN range % 5 = 0 THEN NULL ELSE md5(range::VARCHAR) END AS text,
    encode(md5(range::VARCHAR)) AS bytes
FROM range(5000)"""


def _created_by(table) -> set[str]:
    return {
        pq.read_metadata(task.file.file_path.removeprefix("file://")).created_by for task in table.scan().plan_files()
    }


def _statistics(table) -> list[tuple]:
    """Returns each data file's counts and bounds, the bounds decoded (a float bound of -0.0 equals 0.0: Parquet
    writers may write either for a zero)."""
    from pyiceberg.conversions import from_bytes

    kinds = {f.field_id: f.field_type for f in table.schema().fields}

    def decoded(bounds: dict[int, bytes]) -> dict[int, object]:
        return {k: from_bytes(kinds[k], v) for k, v in bounds.items()}

    files = sorted(table.scan().plan_files(), key=lambda task: task.file.lower_bounds.get(1, b""))
    return [
        (
            f.file.record_count,
            dict(f.file.value_counts),
            dict(f.file.null_value_counts),
            decoded(f.file.lower_bounds),
            decoded(f.file.upper_bounds),
        )
        for f in files
    ]


DESCRIBED = (
    "file_path",
    "file_format",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "split_offsets",
)
"""What a data file says of its file."""


@pytest.fixture
def seeded(catalog):
    catalog.create_namespace_if_not_exists("out")
    return catalog


def test_a_ctas_of_every_direct_type_is_written_by_duckdb_as_pyiceberg_would(seeded):
    run = run_statement(seeded, kind=CTAS, target="out.direct", query=EVERY_DIRECT_TYPE, sources=[])
    direct = seeded.load_table("out.direct")
    assert run.write.rows == 5000
    assert all(name.startswith("DuckDB") for name in _created_by(direct))
    rows = direct.scan().to_arrow()
    create_or_replace(seeded, "out.arrow", rows, {}, schema=direct.schema())
    through_arrow = seeded.load_table("out.arrow")
    assert not any(name.startswith("DuckDB") for name in _created_by(through_arrow))
    again = through_arrow.scan().to_arrow()
    assert again.equals(rows.cast(again.schema))  # the same values; pyiceberg may read text as large_string
    assert _statistics(direct) == _statistics(through_arrow)
    assert len(direct.snapshots()) == 1
    assert int(direct.current_snapshot().summary["added-records"]) == 5000
    data = Path(direct.location().removeprefix("file://")) / "data"
    assert {p.name for p in data.iterdir()} == {Path(t.file.file_path).name for t in direct.scan().plan_files()}


PARTITIONED_BY_IDENTITY = """SELECT range AS id, (range % 3 = 0) AS flag, (range % 4)::INTEGER AS small,
    range % 5 AS big, (range % 3 * 1.25)::DECIMAL(12, 2) AS money, DATE '2026-01-01' + (range % 3)::INTEGER AS day,
    TIMESTAMP '2026-01-01 00:00:00' + to_seconds(range % 2) AS at,
    CASE WHEN range % 7 = 0 THEN NULL ELSE ['a/b', 'a%2Fb', 'NULL', 'x=y', 'é', ''][range % 6 + 1] END AS text,
    range / 3 AS ratio
FROM range(2000)"""


@pytest.mark.parametrize(
    "partition_by",
    [["text"], ["day", "flag"], ["small", "big", "money"], ["at", "text"]],
    ids=["string", "date-boolean", "integers-decimal", "timestamp-string"],
)
def test_an_identity_partitioned_ctas_is_written_by_duckdb_as_pyiceberg_would(seeded, partition_by):
    name = "out.by_" + "_".join(partition_by)  # a table of its own: a dropped table's files may stay behind
    spec = parse_partition_by(partition_by, name)
    run = run_statement(seeded, kind=CTAS, target=name, query=PARTITIONED_BY_IDENTITY, sources=[], partition_by=spec)
    direct = seeded.load_table(name)
    assert run.write.rows == 2000
    assert all(name.startswith("DuckDB") for name in _created_by(direct))
    rows = direct.scan().to_arrow()
    create_or_replace(seeded, name + "_arrow", rows, {}, schema=direct.schema(), partition_by=spec)
    through_arrow = seeded.load_table(name + "_arrow")
    assert not any(name.startswith("DuckDB") for name in _created_by(through_arrow))
    key = [("id", "ascending")]
    assert (
        through_arrow.scan().to_arrow().sort_by(key).equals(rows.sort_by(key).cast(through_arrow.schema().as_arrow()))
    )

    def files(table) -> dict:
        """Each file's partition, with its rows' ids."""
        return {
            tuple(task.file.partition): sorted(
                pq.read_table(task.file.file_path.removeprefix("file://"), columns=["id"]).column("id").to_pylist()
            )
            for task in table.scan().plan_files()
        }

    assert files(direct) == files(through_arrow)
    assert _statistics(direct) == _statistics(through_arrow)
    for task in direct.scan().plan_files():  # each file described as pyiceberg describes it from the file itself
        theirs = parquet_file_to_data_file(direct.io, direct.metadata, task.file.file_path)
        assert [getattr(task.file, name) for name in DESCRIBED] == [getattr(theirs, name) for name in DESCRIBED]
    assert len(direct.snapshots()) == 1
    text = direct.scan(row_filter="text = 'a/b'").to_arrow() if "text" in partition_by else None
    if text is not None:
        assert sorted(text.column("id").to_pylist()) == [i for i in range(2000) if i % 7 and i % 6 == 0]
    data = Path(direct.location().removeprefix("file://")) / "data"
    assert {str(p.relative_to(data)) for p in data.rglob("*.parquet")} == {
        str(Path(t.file.file_path.removeprefix("file://")).relative_to(data)) for t in direct.scan().plan_files()
    }


@pytest.mark.parametrize(
    "partition_by", [["bucket[4](id)"], ["day(at)"], ["ratio"]], ids=["bucket", "day", "double-identity"]
)
def test_a_table_partitioned_otherwise_goes_through_pyiceberg_s_writer(seeded, partition_by):
    run_statement(
        seeded,
        kind=CTAS,
        target="out.parts",
        query=PARTITIONED_BY_IDENTITY,
        sources=[],
        partition_by=parse_partition_by(partition_by, "out.parts"),
    )
    table = seeded.load_table("out.parts")
    assert not any(name.startswith("DuckDB") for name in _created_by(table))
    assert table.scan().to_arrow().num_rows == 2000


def test_a_table_with_a_required_column_goes_through_pyiceberg_s_writer_and_refuses_a_null(seeded):
    seeded.create_table(
        "out.strict",
        Schema(
            NestedField(1, "id", LongType(), required=True),
            NestedField(2, "name", StringType(), required=False),
        ),
    )
    with pytest.raises(
        IcebergWriteError, match=r"^out\.strict: column id is required \(NOT NULL\), and the SELECT gives it NULL"
    ):
        run_statement(
            seeded,
            kind=INSERT,
            target="out.strict",
            query="SELECT CASE WHEN range = 7 THEN NULL ELSE range END, 'n' FROM range(10)",
            sources=[],
            insert_columns=["id", "name"],
        )
    table = seeded.load_table("out.strict")
    assert table.current_snapshot() is None
    data = Path(table.location().removeprefix("file://")) / "data"
    assert not data.exists() or list(data.iterdir()) == []
    run_statement(
        seeded,
        kind=INSERT,
        target="out.strict",
        query="SELECT range, 'n' FROM range(10)",
        sources=[],
        insert_columns=["id", "name"],
    )
    table = seeded.load_table("out.strict")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == list(range(10))
    assert not any(name.startswith("DuckDB") for name in _created_by(table))  # DuckDB writes no required column


def test_an_empty_result_commits_a_snapshot_with_no_file(seeded):
    run = run_statement(seeded, kind=CTAS, target="out.none", query="SELECT range AS id FROM range(0)", sources=[])
    table = seeded.load_table("out.none")
    assert run.write.rows == 0
    assert list(table.scan().plan_files()) == []
    assert table.scan().to_arrow().num_rows == 0


def test_a_nan_in_an_identity_partition_over_floats_is_refused_in_one_sentence(seeded):
    query = "SELECT range AS id, CASE WHEN range % 3 = 0 THEN 'NaN'::DOUBLE ELSE range % 2 END AS score FROM range(9)"
    with pytest.raises(IcebergWriteError) as raised:
        run_statement(
            seeded,
            kind=CTAS,
            target="out.scores",
            query=query,
            sources=[],
            partition_by=parse_partition_by(["score"], "out.scores"),
        )
    assert str(raised.value) == (
        "out.scores: column score is an identity partition and the rows give it NaN, which the Iceberg writer cannot "
        "file in a partition; replace NaN in the statement (for example with NULL), or partition by another column; "
        "nothing was written."
    )
    assert not seeded.table_exists("out.scores")


def test_a_rewrite_giving_an_identity_partition_over_floats_a_nan_commits_nothing(seeded):
    from airflow_lineage_governance.iceberg.rewrite import rewrite_statement

    run_statement(
        seeded,
        kind=CTAS,
        target="out.scores",
        query="SELECT range AS id, (range % 2)::DOUBLE AS score FROM range(6)",
        sources=[],
        partition_by=parse_partition_by(["score"], "out.scores"),
    )
    before = seeded.load_table("out.scores").current_snapshot().snapshot_id
    with pytest.raises(IcebergWriteError, match=r"^out\.scores: column score is an identity partition .* NaN"):
        rewrite_statement(
            seeded, target="out.scores", dml="UPDATE out.scores SET score = 'NaN'::DOUBLE WHERE id = 1", sources=[]
        )
    table = seeded.load_table("out.scores")
    assert table.current_snapshot().snapshot_id == before
    assert sorted(table.scan().to_arrow().column("score").to_pylist()) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def _file_bytes(table) -> list[int]:
    return sorted(task.file.file_size_in_bytes for task in table.scan().plan_files())


def test_a_rewrite_compresses_at_the_table_s_zstd_level_and_at_pyiceberg_s_default_without_one(seeded):
    from airflow_lineage_governance.iceberg.rewrite import rewrite_statement

    for name, level in (("out.unset", None), ("out.level1", "1"), ("out.level19", "19")):
        run_statement(seeded, kind=CTAS, target=name, query=EVERY_DIRECT_TYPE, sources=[])
        if level is not None:
            with seeded.load_table(name).transaction() as transaction:
                transaction.set_properties({"write.parquet.compression-level": level})
        rewrite_statement(seeded, target=name, dml=f"UPDATE {name} SET small = small + 1", sources=[])
    unset, level1, level19 = (seeded.load_table(n) for n in ("out.unset", "out.level1", "out.level19"))
    assert all(name.startswith("DuckDB") for t in (unset, level1, level19) for name in _created_by(t))
    assert _file_bytes(unset) == _file_bytes(level1)
    assert sum(_file_bytes(level19)) < sum(_file_bytes(level1))
    assert unset.scan().to_arrow().sort_by("id").equals(level19.scan().to_arrow().sort_by("id"))


def test_a_level_set_for_a_codec_duckdb_cannot_level_goes_through_pyiceberg_s_writer(seeded):
    from airflow_lineage_governance.iceberg.rewrite import rewrite_statement

    run_statement(seeded, kind=CTAS, target="out.gzipped", query=EVERY_DIRECT_TYPE, sources=[])
    with seeded.load_table("out.gzipped").transaction() as transaction:
        transaction.set_properties({"write.parquet.compression-codec": "gzip", "write.parquet.compression-level": "9"})
    run = rewrite_statement(seeded, target="out.gzipped", dml="UPDATE out.gzipped SET small = 0", sources=[])
    table = seeded.load_table("out.gzipped")
    assert run.write.counts.updated == 5000
    assert not any(name.startswith("DuckDB") for name in _created_by(table))
    assert {
        pq.read_metadata(task.file.file_path.removeprefix("file://")).row_group(0).column(0).compression
        for task in table.scan().plan_files()
    } == {"GZIP"}
    assert set(table.scan().to_arrow().column("small").to_pylist()) == {0}


def test_a_compression_level_that_is_not_a_number_fails_the_rewrite_in_one_sentence(seeded):
    from airflow_lineage_governance.iceberg.rewrite import rewrite_statement

    run_statement(seeded, kind=CTAS, target="out.unleveled", query=EVERY_DIRECT_TYPE, sources=[])
    with seeded.load_table("out.unleveled").transaction() as transaction:
        transaction.set_properties({"write.parquet.compression-level": "high"})
    before = seeded.load_table("out.unleveled").current_snapshot().snapshot_id
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(seeded, target="out.unleveled", dml="UPDATE out.unleveled SET small = 0", sources=[])
    assert str(raised.value).startswith("out.unleveled: the rewritten rows could not be written (")
    assert "write.parquet.compression-level" in str(raised.value) and "\n" not in str(raised.value)
    assert seeded.load_table("out.unleveled").current_snapshot().snapshot_id == before
