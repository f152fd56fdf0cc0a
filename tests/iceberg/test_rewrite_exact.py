"""MERGE, UPDATE and DELETE change exactly the rows DuckDB changes on a native table holding the same rows, on
every layout: the statement's own DuckDB binding decides (NaN above every number, INTEGER against a decimal
literal, DECIMAL against DOUBLE, COLLATE NOCASE), never a second reading of the condition."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg import rewrite
from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace

ROWS = 60
NAN = float("nan")
COLUMNS = {
    "id": "BIGINT",
    "score": "DOUBLE",
    "qty": "INTEGER",
    "amount": "DECIMAL(10, 2)",
    "country": "VARCHAR",
    "status": "VARCHAR",
    "note": "VARCHAR",
    "day": "DATE",
}


def _orders() -> pa.Table:
    scores = [float(i * 17 % 900) for i in range(ROWS)]
    scores[5], scores[41] = NAN, NAN
    scores[7], scores[8] = -0.0, math.inf
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "score": pa.array(scores, pa.float64()),
            "qty": pa.array([i % 23 for i in range(ROWS)], pa.int32()),
            "amount": pa.array(
                [Decimal(i * 113 % 400) / 4 + Decimal("0.01") * (i % 7) for i in range(ROWS)], pa.decimal128(10, 2)
            ),
            "country": [["de", "DE", "fr", "Fr", "us", "ch", "dE"][i % 7] for i in range(ROWS)],
            "status": ["open"] * ROWS,
            "note": pa.array([None] * ROWS, pa.string()),
            "day": [dt.date(2026, 1, 1 + i % 6) for i in range(ROWS)],
        }
    )


def _changes() -> pa.Table:
    return pa.table({"id": pa.array([5, 6, 41, 200], pa.int64()), "score": pa.array([NAN, 6.0, NAN, 1.0])})


LAYOUTS = {
    "one file": [],
    "several files": None,
    "identity partition": ["country"],
    "identity partitions over a number": ["qty"],
    "identity partitions over two columns": ["country", "amount"],
    "identity partition over a date": ["day"],
    "identity partition added after a first file": "evolved",
    "identity partition holding NULL": ["note"],
    "day partition": ["day(day)"],
    "bucket partition": ["bucket[4](id)"],
}

PLACE_9 = "#" + "9"
"""The ninth column of a statement's FROM, by its place (the first of `shop.changes` after the target's eight)."""

STATEMENTS = [
    "DELETE FROM shop.orders WHERE score > 1000",
    "UPDATE shop.orders SET note = 'big' WHERE score > 1000",
    "UPDATE shop.orders SET status = 'paid' WHERE qty > 19.6",
    "UPDATE shop.orders SET status = 'paid' WHERE qty < 1.4",
    "UPDATE shop.orders SET status = 'paid' WHERE qty < 2.5",
    "UPDATE shop.orders SET status = 'paid' WHERE qty > 3.5",
    "UPDATE shop.orders SET status = 'paid' WHERE qty < 10.4",
    "DELETE FROM shop.orders WHERE id > 59.5",
    "DELETE FROM shop.orders WHERE id > 50.5",
    "UPDATE shop.orders SET status = 'paid' WHERE amount < 2.254::DOUBLE",
    "UPDATE shop.orders SET status = 'paid' WHERE amount > 99.166::DOUBLE",
    "UPDATE shop.orders SET status = 'paid' WHERE amount < 6.76 / 3",
    "UPDATE shop.orders SET status = 'paid' WHERE country = 'de' COLLATE NOCASE",
    "DELETE FROM shop.orders WHERE country > 'de' COLLATE NOCASE",
    "DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.id = s.id AND t.score > 1000",
    "UPDATE shop.orders SET score = 0 WHERE score = 'NaN'::DOUBLE",
    "UPDATE shop.orders SET note = 'zero' WHERE score = 0",
    "DELETE FROM shop.orders WHERE score = 'Infinity'::DOUBLE",
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id AND t.score = s.score "
    "WHEN MATCHED THEN UPDATE SET note = 'matched' WHEN NOT MATCHED THEN INSERT (id, score) VALUES (s.id, s.score)",
    "UPDATE shop.orders SET status = 'late' WHERE day > DATE '2026-01-04'",
    "MERGE INTO shop.orders AS t USING shop.changes AS s USING (id) WHEN MATCHED THEN UPDATE SET note = 'm' "
    "WHEN NOT MATCHED THEN INSERT (id, score) VALUES (id, s.score)",
    "MERGE INTO shop.orders USING shop.changes USING (id) WHEN MATCHED AND id > 5 THEN DELETE",
    "UPDATE shop.orders SET note = 'x', status = DEFAULT WHERE id < 5",
    "UPDATE shop.orders SET (note, status) = (DEFAULT, 'z') WHERE id < 4",
    "MERGE INTO shop.orders AS t USING (SELECT id, score FROM shop.changes UNION ALL SELECT id + 1000, score * 2 "
    "FROM shop.changes) AS s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, score) "
    "VALUES (s.id, s.score)",
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = DEFAULT "
    "WHEN NOT MATCHED THEN INSERT (id, score, status) VALUES (s.id, s.score, DEFAULT)",
    "DELETE FROM shop.orders WHERE day >= TIMESTAMP '2026-01-05 00:00:01'",
    "UPDATE shop.orders AS t SET note = 'kept' WHERE t.qty = 3 AND random() < 2",
    "DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.qty + 0.5 > s.score AND t.id = s.id",
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.score = s.score AND t.qty < 10 "
    "WHEN MATCHED THEN UPDATE SET note = 'nan' WHEN NOT MATCHED THEN INSERT (id, score) VALUES (s.id + 500, s.score)",
    "UPDATE shop.orders SET status = 'in' WHERE country IN ('de', 'FR') AND qty > 3",
    "DELETE FROM shop.orders WHERE qty * 2 + 1 > 40.5 OR country = 'DE'",
    "UPDATE shop.orders SET status = 'not' WHERE NOT (day <> DATE '2026-01-02') AND -qty < -2",
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.qty = s.id - 0.5 + 0.5 AND t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET status = 'q'",
    "UPDATE shop.orders SET status = 'n' WHERE note IS NOT DISTINCT FROM NULL AND qty = 3",
    "DELETE FROM shop.orders WHERE country = 'FR' COLLATE NOCASE OR amount IS NULL",
    "UPDATE shop.orders SET status = 'd' WHERE amount = 2.254::DOUBLE OR amount BETWEEN 0.5 AND 1.01",
    # Forms of MERGE sqlglot would write back otherwise, and a statement's own trailing comment and semicolon.
    "MERGE INTO shop.orders AS t USING (SELECT id + 100 AS id, score, 1 AS qty, 1.5 AS amount, 'zz' AS country, "
    "'new' AS status, 'n' AS note, DATE '2026-01-02' AS day FROM shop.changes) AS s ON t.id = s.id "
    "WHEN NOT MATCHED THEN INSERT BY NAME;",
    "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET note = DEFAULT, "
    "status = 'm' RETURNING t.id -- the default\n",
    # The target read again under another name: every row stays visible to the statement.
    "UPDATE shop.orders SET qty = (SELECT count(*) FROM memory.shop.orders) WHERE id = 0",
    "UPDATE shop.orders SET qty = (SELECT count(*) FROM query_table('shop.orders')) WHERE id = 0",
    "UPDATE shop.orders SET qty = (SELECT * FROM query('SELECT count(*) FROM shop.orders')) WHERE id = 0",
    "MERGE INTO shop.orders AS t USING (SELECT * FROM memory.shop.orders WHERE id < 3) AS s ON t.id = s.id + 100 "
    "WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id + 100)",
    "DELETE FROM shop.orders WHERE id IN (SELECT id + 1 FROM memory.shop.orders WHERE id < 3)",
    # The target's columns and rows as whole values: the statement sees the table's columns only.
    "DELETE FROM shop.orders WHERE qty = (SELECT count(*) FROM pragma_table_info('shop.orders'))",
    "DELETE FROM shop.orders WHERE id < 5 AND (SELECT count(*) FROM information_schema.columns "
    "WHERE table_name = 'orders') = 8",
    "UPDATE shop.orders AS t SET note = 'k' WHERE len(json_keys(to_json(t))) = 8",
    "DELETE FROM shop.orders AS t WHERE len(struct_keys(t)) = 8 AND t.id < 5",
    "UPDATE shop.orders AS t SET note = 'h' WHERE hash(t) % 3 = 0",
    # Text sqlglot writes back meaning something else to DuckDB: NOT's reach, a cast's order, a JSON key with a dot.
    "DELETE FROM shop.orders WHERE id NOT IN (5, 6) >= 0 AND id < 10",
    "UPDATE shop.orders SET note = 'nb' WHERE country NOT BETWEEN 'a' AND 'e' <> -1",
    "DELETE FROM shop.orders WHERE id = CASE WHEN TIMESTAMPTZ '2026-01-01 02:00:00+05'::DATE < DATE '2026-01-01' "
    "THEN 5 ELSE 50 END",
    "UPDATE shop.orders SET note = 'tz' WHERE day < TIMESTAMPTZ '2026-01-03 23:00:00-05'::DATE",
    "DELETE FROM shop.orders WHERE json_extract_string(to_json({'k.x': country}), 'k.x') = 'de'",
    "UPDATE shop.orders SET note = 'jd' WHERE to_json({'k.x': id})->>'k.x' = '3'",
    # A source's column named like the column that carries each target row's data file.
    "UPDATE shop.orders AS t SET note = 'fc' FROM (SELECT id, 'f' AS __iceberg_data_file FROM shop.changes "
    "WHERE id <> 5) AS s WHERE t.id = s.id AND __iceberg_data_file = 'f'",
    # Columns by their places (DuckDB's `#` and a number), which the files' own column would move.
    "DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.id = s.id AND " + PLACE_9 + "::VARCHAR = '6'",
    "UPDATE shop.orders AS t SET note = 'pos' FROM shop.changes AS s WHERE t.id = s.id AND " + PLACE_9 + " = 6",
]


def _native(dml: str) -> list[tuple]:
    """Returns the rows DuckDB leaves in a native table holding the same rows after `dml`."""
    plain = duckdb.connect()
    plain.execute("SET TimeZone = 'UTC'")
    plain.execute("CREATE SCHEMA shop")
    plain.execute("CREATE TABLE shop.orders (" + ", ".join(f"{k} {v}" for k, v in COLUMNS.items()) + ")")
    plain.execute("CREATE TABLE shop.changes (id BIGINT, score DOUBLE)")
    orders, changes = _orders(), _changes()
    plain.register("o", orders)
    plain.register("c", changes)
    plain.execute("INSERT INTO shop.orders SELECT * FROM o")
    plain.execute("INSERT INTO shop.changes SELECT * FROM c")
    plain.execute(dml)
    return _sorted(plain.execute("SELECT * FROM shop.orders").fetchall())


def _sorted(rows: list[tuple]) -> list[tuple]:
    return sorted(
        (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows), key=repr
    )


def _catalog(tmp_path, layout: str):
    catalog = open_local_catalog(tmp_path / "catalog")
    orders = _orders()
    spec = LAYOUTS[layout]
    if spec == "evolved":  # a first file holding every country, then the spec partitions by country
        create_or_replace(catalog, "shop.orders", orders.slice(0, 30), {})
        table = catalog.load_table("shop.orders")
        with table.update_spec() as update:
            update.add_identity("country")
        table.append(orders.slice(30).cast(table.schema().as_arrow()))
    elif spec is None:  # several files: three appends
        create_or_replace(catalog, "shop.orders", orders.slice(0, 20), {})
        table = catalog.load_table("shop.orders")
        table.append(orders.slice(20, 20))
        table.append(orders.slice(40))
    else:
        create_or_replace(catalog, "shop.orders", orders, {}, partition_by=parse_partition_by(spec))
    create_or_replace(catalog, "shop.changes", _changes(), {})
    return catalog


def _iceberg_rows(catalog) -> list[tuple]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.register("t", catalog.load_table("shop.orders").scan().to_arrow())
    return _sorted(connection.execute("SELECT " + ", ".join(COLUMNS) + " FROM t").fetchall())


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dml", STATEMENTS)
def test_the_statement_leaves_what_duckdb_leaves_on_a_native_table(tmp_path, layout, dml):
    catalog = _catalog(tmp_path, layout)
    sources = ["shop.changes"] if "shop.changes" in dml else []
    rewrite_statement(catalog, target="shop.orders", dml=dml, sources=sources, snapshot_properties={WRITE_KEY: "k"})
    assert _iceberg_rows(catalog) == _native(dml)


def test_an_update_keeps_every_type_as_duckdb_does(tmp_path):
    import uuid

    catalog = open_local_catalog(tmp_path / "catalog")
    ids = [uuid.UUID(int=i) for i in range(3)]
    create_or_replace(
        catalog,
        "shop.kinds",
        pa.table(
            {
                "id": pa.array([0, 1, 2], pa.int64()),
                "u": pa.array([u.bytes for u in ids], pa.uuid()),
                "t": pa.array([dt.time(1, 2, 3), dt.time(4, 5, 6), None], pa.time64("us")),
                "ts": pa.array([dt.datetime(2026, 1, 1, 2, tzinfo=dt.UTC)] * 3, pa.timestamp("us", tz="UTC")),
                "b": pa.array([b"\x00\x01", b"", None], pa.binary()),
                "d": pa.array([Decimal("1.10"), Decimal("2.20"), None], pa.decimal128(10, 2)),
            }
        ),
        {},
    )
    dml = "UPDATE shop.kinds SET d = d * 3, t = t + INTERVAL 1 HOUR, ts = ts + INTERVAL 1 DAY WHERE id < 2"
    rewrite_statement(catalog, target="shop.kinds", dml=dml, sources=[], snapshot_properties={WRITE_KEY: "k"})
    table = catalog.load_table("shop.kinds")
    assert [str(f.field_type) for f in table.schema().fields] == [
        "long",
        "uuid",
        "time",
        "timestamptz",
        "binary",
        "decimal(10, 2)",
    ]
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [r["u"] for r in rows] == [u.bytes for u in ids] or [r["u"] for r in rows] == ids
    assert [r["d"] for r in rows] == [Decimal("3.30"), Decimal("6.60"), None]
    assert [r["t"] for r in rows] == [dt.time(2, 2, 3), dt.time(5, 5, 6), None]
    assert [r["ts"] for r in rows] == [dt.datetime(2026, 1, 2, 2, tzinfo=dt.UTC)] * 2 + [
        dt.datetime(2026, 1, 1, 2, tzinfo=dt.UTC)
    ]
    assert [r["b"] for r in rows] == [b"\x00\x01", b"", None]


@pytest.mark.parametrize("layout", ["one file", "identity partition", "bucket partition"])
@pytest.mark.parametrize("dml", [dml for dml in STATEMENTS if "shop.changes" in dml])
def test_a_source_read_at_each_query_leaves_what_duckdb_leaves(tmp_path, monkeypatch, layout, dml):
    # Sources past HELD_SOURCE_ROWS are not read into a DuckDB table first: their files are read at each query.
    monkeypatch.setattr(rewrite, "HELD_SOURCE_ROWS", 0)
    catalog = _catalog(tmp_path, layout)
    rewrite_statement(
        catalog, target="shop.orders", dml=dml, sources=["shop.changes"], snapshot_properties={WRITE_KEY: "k"}
    )
    assert _iceberg_rows(catalog) == _native(dml)


@pytest.mark.parametrize(
    "dml",
    [
        "MERGE INTO shop.people AS t USING shop.moves AS s ON t.region = s.region "
        "WHEN MATCHED THEN UPDATE SET region = s.target "
        "WHEN NOT MATCHED THEN INSERT (id, region) VALUES (s.id, s.target)",
        "UPDATE shop.people AS t SET region = s.target FROM shop.moves AS s WHERE t.region = s.region",
        "DELETE FROM shop.people AS t USING shop.moves AS s WHERE t.region = s.region",
    ],
)
def test_a_source_partitioned_by_identity_joins_on_and_writes_its_own_values(tmp_path, dml):
    catalog = open_local_catalog(tmp_path / "catalog")
    people = pa.table(
        {"id": pa.array([1, 2, 3, 4], pa.int64()), "region": ["North America", " lead", None, "North+America"]}
    )
    moves = pa.table(
        {
            "id": pa.array([10, 11, 12], pa.int64()),
            "region": ["North America", " lead", "null"],
            "target": ["Europe & Asia", "50% off", None],
        }
    )
    create_or_replace(catalog, "shop.people", people, {})
    create_or_replace(catalog, "shop.moves", moves, {}, partition_by=parse_partition_by(["region"]))
    rewrite_statement(
        catalog, target="shop.people", dml=dml, sources=["shop.moves"], snapshot_properties={WRITE_KEY: "k"}
    )
    plain = duckdb.connect()
    plain.execute("CREATE SCHEMA shop")
    plain.register("p", people)
    plain.register("m", moves)
    plain.execute("CREATE TABLE shop.people AS SELECT * FROM p")
    plain.execute("CREATE TABLE shop.moves AS SELECT * FROM m")
    plain.execute(dml)
    expected = sorted(plain.execute("SELECT id, region FROM shop.people").fetchall(), key=repr)
    got = sorted(
        ((r["id"], r["region"]) for r in catalog.load_table("shop.people").scan().to_arrow().to_pylist()), key=repr
    )
    assert got == expected


@pytest.mark.parametrize(
    ("dml", "counts"),
    [
        ("DELETE FROM shop.orders WHERE id IN (33, 34) RETURNING qty", (0, 0, 2)),
        ("UPDATE shop.orders SET note = 'q' WHERE id < 3 RETURNING country", (0, 3, 0)),
        ("DELETE FROM shop.orders AS t USING shop.changes AS s WHERE t.id = s.id RETURNING *", (0, 0, 3)),
    ],
)
def test_an_update_or_delete_with_returning_counts_the_rows_it_changed(tmp_path, dml, counts):
    catalog = _catalog(tmp_path, "several files")
    sources = ["shop.changes"] if "shop.changes" in dml else []
    run = rewrite_statement(
        catalog, target="shop.orders", dml=dml, sources=sources, snapshot_properties={WRITE_KEY: "k"}
    )
    assert (run.write.counts.inserted, run.write.counts.updated, run.write.counts.deleted) == counts
    assert _iceberg_rows(catalog) == _native(dml)


def test_returning_hands_back_the_changed_rows_as_duckdb_renders_them(tmp_path):
    catalog = _catalog(tmp_path, "several files")
    dml = "UPDATE shop.orders SET note = 'r' WHERE id IN (5, 7, 8) RETURNING id, score, amount, day, note, id"
    run = rewrite_statement(catalog, target="shop.orders", dml=dml, sources=[], snapshot_properties={WRITE_KEY: "k"})
    assert run.returned is not None
    assert run.returned.as_json() == {
        "columns": ["id", "score", "amount", "day", "note", "id_1"],
        "rows": [
            [5, "nan", "41.30", "2026-01-06", "r", 5],
            [7, -0.0, "97.75", "2026-01-02", "r", 7],
            [8, "inf", "26.01", "2026-01-03", "r", 8],
        ],
    }
    assert _iceberg_rows(catalog) == _native(dml)


def test_a_merge_returning_hands_back_its_own_columns_and_counts_by_action(tmp_path):
    catalog = _catalog(tmp_path, "one file")
    dml = (
        "MERGE INTO shop.orders AS t USING shop.changes AS s USING (id) WHEN MATCHED THEN UPDATE SET note = 'm' "
        "WHEN NOT MATCHED THEN INSERT (id, score) VALUES (id, s.score) RETURNING merge_action, id, note"
    )
    run = rewrite_statement(
        catalog, target="shop.orders", dml=dml, sources=["shop.changes"], snapshot_properties={WRITE_KEY: "k"}
    )
    assert (run.write.counts.inserted, run.write.counts.updated) == (1, 3)
    assert run.returned is not None and run.returned.columns == ("merge_action", "id", "note")
    assert sorted(run.returned.rows) == [
        ["INSERT", 200, None],
        ["UPDATE", 5, "m"],
        ["UPDATE", 6, "m"],
        ["UPDATE", 41, "m"],
    ]


def test_a_returning_past_its_bound_fails_and_writes_nothing(tmp_path):
    from airflow_lineage_governance.iceberg.errors import IcebergWriteError

    catalog = _catalog(tmp_path, "several files")
    before = catalog.load_table("shop.orders").metadata.current_snapshot_id
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(
            catalog,
            target="shop.orders",
            dml="DELETE FROM shop.orders WHERE id < 9 RETURNING id",
            sources=[],
            snapshot_properties={WRITE_KEY: "k"},
            returning_max_rows=8,
        )
    assert str(raised.value) == (
        "shop.orders: its RETURNING gives 9 rows, more than the 8 the returning_max_rows setting lets a task hand "
        "on; narrow the statement, drop RETURNING, or raise [lineage_governance] returning_max_rows; nothing was "
        "written."
    )
    assert catalog.load_table("shop.orders").metadata.current_snapshot_id == before
    assert len(catalog.load_table("shop.orders").scan().to_arrow()) == ROWS


def test_a_statement_it_cannot_read_fails_with_one_sentence_and_writes_nothing(tmp_path):
    catalog = _catalog(tmp_path, "one file")
    before = catalog.load_table("shop.orders").metadata.current_snapshot_id
    dml = "MERGE INTO shop.orders AS t USING shop.changes AS s ON t.id = s.id WHEN MATCHED THEN UPDATE BY NAME"
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(
            catalog, target="shop.orders", dml=dml, sources=["shop.changes"], snapshot_properties={WRITE_KEY: "k"}
        )
    assert str(raised.value).startswith(
        "shop.orders: the statement could not be read to choose the data files it changes ("
    )
    assert str(raised.value).endswith("; write it in standard SQL; nothing was written.")
    assert catalog.load_table("shop.orders").metadata.current_snapshot_id == before


@pytest.mark.parametrize(
    "dml",
    ["UPDATE shop.orders SET note = 'r' WHERE rowid < 3", "DELETE FROM shop.orders AS t WHERE t.rowid IN (3, 4)"],
)
def test_a_statement_reading_rowid_fails_with_one_sentence_and_writes_nothing(tmp_path, dml):
    # an Iceberg table's rows have no place in DuckDB's storage: on a native table rowid follows the order of insert
    catalog = _catalog(tmp_path, "several files")
    before = catalog.load_table("shop.orders").metadata.current_snapshot_id
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(catalog, target="shop.orders", dml=dml, sources=[], snapshot_properties={WRITE_KEY: "k"})
    assert str(raised.value) == (
        "shop.orders: the statement reads rowid, a row's place in DuckDB's own storage, which the rows of an Iceberg "
        "table do not have; name the rows by their columns; nothing was written."
    )
    assert catalog.load_table("shop.orders").metadata.current_snapshot_id == before


@pytest.mark.parametrize(
    ("dml", "sentence"),
    [
        (
            "DELETE FROM shop.orders WHERE id < 5 AND current_query() LIKE 'DELETE%'",
            "shop.orders: the statement reads current_query(), which gives the text DuckDB runs, not always the "
            "statement's own (the query choosing the data files, or a MERGE counting its rows); leave current_query() "
            "out; nothing was written.",
        ),
        (
            "DELETE FROM shop.orders WHERE " + "(" * 950 + "id = 1" + ")" * 950,
            "shop.orders: the statement nests its expressions too deeply to be read to choose the data files it "
            "changes; nest fewer parentheses or subqueries; nothing was written.",
        ),
    ],
    ids=["current_query", "950 parentheses"],
)
def test_a_statement_it_cannot_choose_files_for_fails_with_one_sentence_and_writes_nothing(tmp_path, dml, sentence):
    catalog = _catalog(tmp_path, "several files")
    before = catalog.load_table("shop.orders").metadata.current_snapshot_id
    with pytest.raises(IcebergWriteError) as raised:
        rewrite_statement(catalog, target="shop.orders", dml=dml, sources=[], snapshot_properties={WRITE_KEY: "k"})
    assert str(raised.value) == sentence
    assert catalog.load_table("shop.orders").metadata.current_snapshot_id == before
