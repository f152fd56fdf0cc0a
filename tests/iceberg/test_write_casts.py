"""Values reach an Iceberg table as DuckDB would store them in a table of its own: an INSERT's values by DuckDB's
cast to the target's column types (rounding, NULL and range errors DuckDB's), a CTAS's columns in the Iceberg
type that holds their DuckDB type (one mapping, `types.iceberg_type`), and a type or value Iceberg cannot hold
refused with one sentence naming the table and column, nothing written. The oracle is DuckDB itself: the same
SELECT inserted into a native table of the same column types, or DuckDB's own CTAS after the mapping."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal

import duckdb
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.read import expose_tables, sandboxed_connection
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.types import (
    NoIcebergTypeError,
    duckdb_type,
    iceberg_type,
    quoted,
    storable_type,
)
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef

INSERT, CTAS = StatementKind.INSERT, StatementKind.CREATE_TABLE_AS
UUID_TEXT = "0193a2b4-1c2d-7e3f-8a9b-0c1d2e3f4a5b"

# A value of every DuckDB type (and some texts DuckDB casts from), by a name for the test ids.
SOURCES = {
    "boolean": "TRUE",
    "tinyint": "-7::TINYINT",
    "smallint": "300::SMALLINT",
    "integer": "70000::INTEGER",
    "bigint": "5000000000::BIGINT",
    "utinyint": "200::UTINYINT",
    "usmallint": "60000::USMALLINT",
    "uinteger": "4000000000::UINTEGER",
    "ubigint": "18446744073709551615::UBIGINT",
    "float": "1.5::FLOAT",
    "double": "2.675::DOUBLE",
    "decimal_literal": "1.005",
    "decimal": "123.456789::DECIMAL(18, 6)",
    "date": "DATE '2026-01-02'",
    "time": "TIME '03:04:05.123456'",
    "timestamp": "TIMESTAMP '2026-01-02 03:04:05.123456'",
    "timestamp_s": "TIMESTAMP_S '2026-01-02 03:04:05'",
    "timestamp_ms": "TIMESTAMP_MS '2026-01-02 03:04:05.123'",
    "timestamptz": "TIMESTAMPTZ '2026-01-02 03:04:05.123456+02'",
    "varchar_number": "'42'",
    "varchar_decimal": "'2.5'",
    "varchar_timestamp": "'2026-01-02 03:04:05'",
    "varchar_true": "'true'",
    "varchar_uuid": f"'{UUID_TEXT}'",
    "varchar_list": "'[1, 2]'",
    "varchar_word": "'lovelace'",
    "enum": "'b'::ENUM('a', 'b')",
    "blob": "'\\xAA\\x00'::BLOB",
    "uuid": f"UUID '{UUID_TEXT}'",
    "struct": "{'a': 1, 'b': 'x'}",
    "list": "[1, 2, NULL]",
    "array": "[1, 2]::INTEGER[2]",
    "map": "MAP {'k': 1}",
    "list_ubigint": "[1::UBIGINT]",
    "null": "NULL",
    "hugeint": "12::HUGEINT",
    "uhugeint": "13::UHUGEINT",
    "bignum": "14::BIGNUM",
    "interval": "INTERVAL 1 DAY",
    "timetz": "TIMETZ '12:34:56+02'",
    "timestamp_ns": "TIMESTAMP_NS '2026-01-02 03:04:05.123456789'",
    "time_ns": "'03:04:05.123456789'::TIME_NS",
    "bit": "'101'::BIT",
    "union": "union_value(k := 1)",
    "huge_double": "1e300",
}

# The Iceberg column types an INSERT writes to, with the DuckDB type of a native table's column of that type.
TARGETS: dict[str, tuple[IcebergType, str]] = {
    "boolean": (BooleanType(), "BOOLEAN"),
    "int": (IntegerType(), "INTEGER"),
    "long": (LongType(), "BIGINT"),
    "float": (FloatType(), "FLOAT"),
    "double": (DoubleType(), "DOUBLE"),
    "decimal": (DecimalType(10, 2), "DECIMAL(10, 2)"),
    "date": (DateType(), "DATE"),
    "time": (TimeType(), "TIME"),
    "timestamp": (TimestampType(), "TIMESTAMP"),
    "timestamptz": (TimestamptzType(), "TIMESTAMPTZ"),
    "string": (StringType(), "VARCHAR"),
    "binary": (BinaryType(), "BLOB"),
    "uuid": (UUIDType(), "UUID"),
    "list": (ListType(10, IntegerType(), element_required=False), "INTEGER[]"),
    "struct": (
        StructType(
            NestedField(11, "a", IntegerType(), required=False), NestedField(12, "b", StringType(), required=False)
        ),
        'STRUCT("a" INTEGER, "b" VARCHAR)',
    ),
    "map": (MapType(13, StringType(), 14, IntegerType(), value_required=False), "MAP(VARCHAR, INTEGER)"),
}

# The documented mapping: a CTAS column of the DuckDB type gets this Iceberg type, its values cast by DuckDB to
# this DuckDB type.
CTAS_MAPPING = {
    "boolean": ("boolean", "BOOLEAN"),
    "tinyint": ("int", "INTEGER"),
    "smallint": ("int", "INTEGER"),
    "integer": ("int", "INTEGER"),
    "utinyint": ("int", "INTEGER"),
    "usmallint": ("int", "INTEGER"),
    "bigint": ("long", "BIGINT"),
    "uinteger": ("long", "BIGINT"),
    "ubigint": ("decimal(20, 0)", "DECIMAL(20, 0)"),
    "float": ("float", "FLOAT"),
    "double": ("double", "DOUBLE"),
    "decimal_literal": ("decimal(4, 3)", "DECIMAL(4, 3)"),
    "decimal": ("decimal(18, 6)", "DECIMAL(18, 6)"),
    "date": ("date", "DATE"),
    "time": ("time", "TIME"),
    "timestamp": ("timestamp", "TIMESTAMP"),
    "timestamp_s": ("timestamp", "TIMESTAMP"),
    "timestamp_ms": ("timestamp", "TIMESTAMP"),
    "timestamptz": ("timestamptz", "TIMESTAMPTZ"),
    "varchar_word": ("string", "VARCHAR"),
    "enum": ("string", "VARCHAR"),
    "blob": ("binary", "BLOB"),
    "uuid": ("uuid", "UUID"),
    "struct": ("struct<a: int, b: string>", 'STRUCT("a" INTEGER, "b" VARCHAR)'),
    "list": ("list<int>", "INTEGER[]"),
    "array": ("list<int>", "INTEGER[]"),
    "map": ("map<string, int>", "MAP(VARCHAR, INTEGER)"),
    "list_ubigint": ("list<decimal(20, 0)>", "DECIMAL(20, 0)[]"),
}

# DuckDB types no Iceberg type holds exactly, and the CAST the refusal advises.
UNHELD = {
    "null": ('"NULL"', "CAST(NULL AS VARCHAR)"),
    "hugeint": ("HUGEINT", "CAST(... AS DECIMAL(38, 0))"),
    "uhugeint": ("UHUGEINT", "CAST(... AS DECIMAL(38, 0))"),
    "bignum": ("BIGNUM", "CAST(... AS VARCHAR)"),
    "interval": ("INTERVAL", "CAST(... AS VARCHAR)"),
    "timetz": ("TIME WITH TIME ZONE", "CAST(... AS VARCHAR)"),
    "timestamp_ns": ("TIMESTAMP_NS", "CAST(... AS TIMESTAMP)"),
    "time_ns": ("TIME_NS", "CAST(... AS TIME)"),
    "bit": ("BIT", "CAST(... AS VARCHAR)"),
    "union": ("UNION(k INTEGER)", "CAST(... AS VARCHAR)"),
    "list_interval": ("INTERVAL[]", "CAST(... AS VARCHAR[])"),
    "struct_hugeint": ("STRUCT(a HUGEINT, b INTEGER)", 'CAST(... AS STRUCT("a" DECIMAL(38, 0), "b" INTEGER))'),
    "map_timetz": ("MAP(VARCHAR, TIME WITH TIME ZONE)", "CAST(... AS MAP(VARCHAR, VARCHAR))"),
    "array_time_ns": ("TIME_NS[2]", "CAST(... AS TIME[2])"),
}
UNHELD_SOURCES = {
    **SOURCES,
    "list_interval": "[INTERVAL 1 DAY]",
    "struct_hugeint": "{'a': 1::HUGEINT, 'b': 2}",
    "map_timetz": "MAP {'k': TIMETZ '12:34:56+02'}",
    "array_time_ns": "['03:04:05'::TIME_NS, '03:04:06'::TIME_NS]::TIME_NS[2]",
}


@pytest.fixture
def local(tmp_path):
    """A local SQL catalog with the namespace shop."""
    catalog = open_local_catalog(tmp_path / "catalog")
    catalog.create_namespace("shop")
    return catalog


def _create(catalog, name: str, columns: dict[str, IcebergType]) -> None:
    ids = iter(range(1000, 2000))
    fields = [NestedField(next(ids), column, kind, required=False) for column, kind in columns.items()]
    catalog.create_table(name, schema=Schema(*fields))


def _native(statements: list[str], select: str) -> tuple[list[tuple], list[str], list[dict]]:
    """Returns what DuckDB stores in a table of its own: the rows, the column types, and the rows as Arrow."""
    connection = duckdb.connect()
    for statement in statements:
        connection.execute(statement)
    relation = connection.sql(select)
    rows, types = relation.fetchall(), [str(kind) for kind in relation.types]
    return rows, types, _plain(connection.sql(select).to_arrow_table().to_pylist())


def _native_insert_fails(connection: duckdb.DuckDBPyConnection, duckdb_column: str, expression: str) -> bool:
    connection.execute(f"CREATE OR REPLACE TABLE n (col {duckdb_column})")
    try:
        connection.execute(f"INSERT INTO n (col) SELECT {expression}")
    except (duckdb.Error, UnicodeDecodeError):  # DuckDB cannot decode a message that quotes a BLOB's bytes
        return True
    return False


def _read_back(catalog, name: str) -> tuple[list[tuple], list[str], list[dict]]:
    """Returns the Iceberg table as DuckDB reads it (rows and types) and as pyiceberg reads it."""
    connection = sandboxed_connection()
    expose_tables(connection, catalog, [name])
    relation = connection.sql(f"SELECT * FROM {name}")
    rows, types = relation.fetchall(), [str(kind) for kind in relation.types]
    connection.close()
    return rows, types, _plain(catalog.load_table(name).scan().to_arrow().to_pylist())


def _plain(rows: list[dict]) -> list[dict]:
    """Returns Arrow's rows with a UUID as its text (DuckDB hands a UUID to Arrow as text, Iceberg as uuid)."""

    def plain(value):
        if isinstance(value, uuid.UUID):
            return str(value)
        if isinstance(value, list):
            return [plain(item) for item in value]
        if isinstance(value, tuple):
            return tuple(plain(item) for item in value)
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        return value

    return [plain(row) for row in rows]


def _bare(kind: str) -> str:
    """Returns an Iceberg type's text without its field ids and optional marks (`struct<a: int>`)."""
    return re.sub(r"\d+: |optional ", "", kind)


def _insert(catalog, query: str, columns: list[str], target: str = "shop.t", table=None):
    loaded = {TableRef.parse(target): table} if table is not None else None
    return run_statement(
        catalog,
        kind=INSERT,
        target=target,
        query=query,
        sources=[],
        insert_columns=columns,
        snapshot_properties={},
        loaded=loaded,
    )


def _ctas(catalog, query: str, target: str = "shop.c"):
    return run_statement(catalog, kind=CTAS, target=target, query=query, sources=[], snapshot_properties={})


def _refused(catalog, run, name: str = "shop.t") -> str:
    with pytest.raises(IcebergWriteError) as raised:
        run()
    message = str(raised.value)
    assert message.startswith(f"{name}: ") and message.endswith("nothing was written."), message
    assert "\n" not in message and "Traceback" not in message
    return message


def _rows_of(catalog, name: str) -> int:
    return len(catalog.load_table(name).scan().to_arrow())


# INSERT: every DuckDB type into every column type, compared with DuckDB inserting the same SELECT natively.


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_an_insert_stores_what_duckdb_stores_in_a_table_of_its_own(local, target):
    kind, duckdb_column = TARGETS[target]
    assert duckdb_type(kind) == duckdb_column
    native = duckdb.connect()
    taken = {name: sql for name, sql in SOURCES.items() if not _native_insert_fails(native, duckdb_column, sql)}
    refused = sorted(set(SOURCES) - set(taken))
    assert "null" in taken  # a bare NULL goes into every column type
    columns = list(taken)
    select = "SELECT " + ", ".join(f'{sql} AS "{name}"' for name, sql in taken.items())
    _create(local, "shop.t", dict.fromkeys(columns, kind))
    _insert(local, select, columns)
    native_rows, native_types, native_arrow = _native(
        [
            f"CREATE TABLE n ({', '.join(f'{quoted(c)} {duckdb_column}' for c in columns)})",
            f"INSERT INTO n ({', '.join(map(quoted, columns))}) {select}",
        ],
        "SELECT * FROM n",
    )
    rows, types, arrow = _read_back(local, "shop.t")
    assert dict(zip(columns, rows[0], strict=True)) == dict(zip(columns, native_rows[0], strict=True))
    assert types == native_types
    assert arrow == native_arrow
    assert [_bare(str(f.field_type)) for f in local.load_table("shop.t").schema().fields] == [_bare(str(kind))] * len(
        columns
    )

    _create(local, "shop.one", {"col": kind})
    one = local.load_table("shop.one")
    for name in refused:
        message = _refused(
            local, lambda name=name: _insert(local, f"SELECT {SOURCES[name]}", ["col"], "shop.one", one), "shop.one"
        )
        assert "column col" in message and "CAST" in message, (name, message)
    assert local.load_table("shop.one").current_snapshot() is None


# CTAS: every DuckDB type Iceberg holds, compared with DuckDB's own CTAS after the documented mapping.


def test_a_ctas_gives_each_duckdb_type_its_iceberg_type_and_duckdbs_values(local):
    columns = list(CTAS_MAPPING)
    select = "SELECT " + ", ".join(f'{SOURCES[name]} AS "{name}"' for name in columns)
    run = _ctas(local, select)
    assert {name: _bare(kind) for name, kind in run.write.columns} == {name: CTAS_MAPPING[name][0] for name in columns}
    cast = ", ".join(f'CAST({SOURCES[name]} AS {CTAS_MAPPING[name][1]}) AS "{name}"' for name in columns)
    native_rows, native_types, native_arrow = _native([f"CREATE TABLE n AS SELECT {cast}"], "SELECT * FROM n")
    rows, types, arrow = _read_back(local, "shop.c")
    assert dict(zip(columns, rows[0], strict=True)) == dict(zip(columns, native_rows[0], strict=True))
    assert types == native_types
    assert types == [str(duckdb.sqltype(CTAS_MAPPING[name][1])) for name in columns]
    assert arrow == native_arrow


@pytest.mark.parametrize("name", sorted(UNHELD))
def test_a_ctas_of_a_type_iceberg_cannot_hold_names_the_column_and_the_cast_that_works(local, name):
    kind, cast = UNHELD[name]
    message = _refused(local, lambda: _ctas(local, f"SELECT 1 AS id, {UNHELD_SOURCES[name]} AS odd"), "shop.c")
    assert message.startswith(f"shop.c: column odd has the type {kind}, which an Iceberg table cannot hold"), message
    assert cast in message, message
    assert not local.table_exists("shop.c")
    written = cast.replace("...", UNHELD_SOURCES[name])
    _ctas(local, f"SELECT 1 AS id, {written} AS odd")  # the advised cast is one DuckDB takes
    assert _rows_of(local, "shop.c") == 1


# Each row of the measured differences is a regression test of its own.


@pytest.mark.parametrize(
    ("kind", "select", "stored"),
    [
        (IntegerType(), "SELECT 1.7 UNION ALL SELECT 2.5", [2, 3]),
        (LongType(), "SELECT 1.5::DOUBLE", [2]),
        (DecimalType(10, 2), "SELECT 1.005", [Decimal("1.01")]),
        (IntegerType(), "SELECT NULL", [None]),
        (DoubleType(), "SELECT 1.7", [1.7]),
        (DecimalType(10, 2), "SELECT 0.125::DOUBLE", [Decimal("0.13")]),
        (StringType(), "SELECT TIMESTAMP '2026-01-02 03:04:05'", ["2026-01-02 03:04:05"]),
    ],
    ids=[
        "decimal-into-int-rounds",
        "double-into-bigint-rounds",
        "decimal-rounds-half-up",
        "null-into-int",
        "decimal-into-double-exact",
        "double-into-decimal-rounds",
        "timestamp-into-string",
    ],
)
def test_an_insert_converts_as_duckdb_does(local, kind, select, stored):
    _create(local, "shop.t", {"col": kind})
    _insert(local, select, ["col"])
    assert (
        sorted(local.load_table("shop.t").scan().to_arrow().column("col").to_pylist(), key=lambda v: (v is None, v))
        == stored
    )


@pytest.mark.parametrize(
    "kind",
    [
        BooleanType(),
        IntegerType(),
        StringType(),
        DateType(),
        TimestamptzType(),
        UUIDType(),
        ListType(5, LongType(), element_required=False),
    ],
    ids=str,
)
def test_a_bare_null_goes_into_any_column_type(local, kind):
    _create(local, "shop.t", {"col": kind})
    _insert(local, "SELECT NULL", ["col"])
    assert local.load_table("shop.t").scan().to_arrow().column("col").to_pylist() == [None]


def test_a_value_out_of_the_columns_range_is_refused_as_duckdb_refuses_it(local):
    _create(local, "shop.t", {"col": FloatType()})
    message = _refused(local, lambda: _insert(local, "SELECT 1e300", ["col"]))
    assert message.startswith("shop.t: column col cannot take the SELECT's DOUBLE values as FLOAT"), message
    assert "CAST" in message and "1e300" not in message and "1e+300" not in message
    assert local.load_table("shop.t").current_snapshot() is None


def test_a_value_that_does_not_cast_is_refused_without_the_value(local):
    _create(local, "shop.t", {"id": LongType(), "col": DateType()})
    message = _refused(local, lambda: _insert(local, "SELECT 1, 'ada.lovelace@example.org'", ["id", "col"]))
    assert message.startswith("shop.t: column col cannot take the SELECT's VARCHAR values as DATE"), message
    assert "lovelace" not in message
    assert local.load_table("shop.t").current_snapshot() is None


def test_a_ctas_keeps_timetz_out_rather_than_drop_its_offset(local):
    message = _refused(local, lambda: _ctas(local, "SELECT TIMETZ '12:34:56+02' AS t"), "shop.c")
    assert message.startswith("shop.c: column t has the type TIME WITH TIME ZONE"), message
    assert not local.table_exists("shop.c")


def test_a_ctas_of_a_list_of_ubigint_declares_and_holds_decimals(local):
    run = _ctas(local, "SELECT [18446744073709551615::UBIGINT, 1::UBIGINT] AS l")
    assert run.write.columns == (("l", "list<decimal(20, 0)>"),)
    assert local.load_table("shop.c").scan().to_arrow().column("l").to_pylist() == [
        [Decimal("18446744073709551615"), Decimal("1")]
    ]


def test_a_ctas_of_an_enum_stores_its_text(local):
    run = _ctas(local, "SELECT 'b'::ENUM('a', 'b') AS e")
    assert run.write.columns == (("e", "string"),)
    assert local.load_table("shop.c").scan().to_arrow().column("e").to_pylist() == ["b"]


@pytest.mark.parametrize(
    "expression",
    [
        "'infinity'::DATE",
        "'-infinity'::DATE",
        "'infinity'::TIMESTAMP",
        "'-infinity'::TIMESTAMPTZ",
        "['infinity'::DATE]",
        "{'at': '-infinity'::TIMESTAMP}",
        "DATE '10000-01-01'",
    ],
)
def test_a_date_or_timestamp_the_writer_cannot_store_names_the_column(local, expression):
    message = _refused(local, lambda: _ctas(local, f"SELECT 1 AS id, {expression} AS at"), "shop.c")
    assert message.startswith("shop.c: column at holds a date or timestamp at infinity"), message
    assert "isinf(at)" in message
    assert not local.table_exists("shop.c")
    _create(local, "shop.t", {"at": DateType()})
    if expression.endswith("::DATE") or expression.startswith("DATE"):
        message = _refused(local, lambda: _insert(local, f"SELECT {expression}", ["at"]))
        assert message.startswith("shop.t: column at holds a date or timestamp at infinity"), message
        assert local.load_table("shop.t").current_snapshot() is None


# The INSERT's columns.


def test_columns_the_insert_does_not_name_are_null_of_their_type(local):
    _create(local, "shop.t", {"id": LongType(), "note": StringType(), "at": TimestamptzType()})
    _insert(local, "SELECT 1.6", ["id"])
    assert local.load_table("shop.t").scan().to_arrow().to_pylist() == [{"id": 2, "note": None, "at": None}]


def test_an_insert_matches_its_columns_by_position_and_names_as_duckdb_does(local):
    _create(local, "shop.t", {"id": LongType(), "note": StringType()})
    _insert(local, "SELECT 'x' AS id, 7 AS id", ["NOTE", "id"])
    assert local.load_table("shop.t").scan().to_arrow().to_pylist() == [{"id": 7, "note": "x"}]


@pytest.mark.parametrize(
    ("select", "columns", "sentence"),
    [
        ("SELECT 1, 2", ["id"], "the INSERT names 1 columns and its SELECT gives 2"),
        ("SELECT 1", ["missing"], "the INSERT names the column missing, which the table does not have"),
        ("SELECT 1, 2", ["id", "id"], "the INSERT names the column id more than once"),
        ("SELECT 'x'", ["note"], "column id is required (NOT NULL), and the INSERT gives it no value"),
        ("SELECT NULL, 'x'", ["id", "note"], "column id is required (NOT NULL), and the SELECT gives it NULL"),
    ],
)
def test_an_insert_that_cannot_fill_the_table_is_refused(local, select, columns, sentence):
    local.create_table(
        "shop.t",
        schema=Schema(
            NestedField(1, "id", LongType(), required=True), NestedField(2, "note", StringType(), required=False)
        ),
    )
    message = _refused(local, lambda: _insert(local, select, columns))
    assert sentence in message, message
    assert local.load_table("shop.t").current_snapshot() is None


def test_an_insert_into_a_table_that_does_not_exist_is_refused(local):
    message = _refused(local, lambda: _insert(local, "SELECT 1", ["id"], "shop.nowhere"), "shop.nowhere")
    assert "does not exist" in message


def test_a_ctas_of_two_columns_of_one_name_is_refused(local):
    message = _refused(local, lambda: _ctas(local, "SELECT 1 AS a, 2 AS a"), "shop.c")
    assert "more than one column the name a" in message
    assert not local.table_exists("shop.c")


# Both catalogs, through the real path.


def test_insert_and_ctas_convert_by_duckdb_in_either_catalog(catalog):
    run = _ctas(catalog, "SELECT 1::UBIGINT AS big, 'a'::ENUM('a') AS e, 1::SMALLINT AS s, 1.25 AS d", target="shop.c")
    assert run.write.columns == (("big", "decimal(20, 0)"), ("e", "string"), ("s", "int"), ("d", "decimal(3, 2)"))
    _insert(catalog, "SELECT 2.5, 'b', 2.5::DOUBLE, 0.125::DOUBLE", ["big", "e", "s", "d"], target="shop.c")
    # DuckDB rounds a DECIMAL half away from zero, a DOUBLE half to even (2.5 to 2), and 0.125 as DOUBLE up
    rows = sorted(catalog.load_table("shop.c").scan().to_arrow().to_pylist(), key=lambda row: row["big"])
    assert rows == [
        {"big": Decimal(1), "e": "a", "s": 1, "d": Decimal("1.25")},
        {"big": Decimal(3), "e": "b", "s": 2, "d": Decimal("0.13")},
    ]


# The mapping itself.


@pytest.mark.parametrize(
    ("duckdb_name", "iceberg", "cast_to"),
    [
        ("UBIGINT[]", "list<decimal(20, 0)>", "DECIMAL(20, 0)[]"),
        ("ENUM('a', 'b')", "string", "VARCHAR"),
        ("SMALLINT", "int", "INTEGER"),
        ("INTEGER[3]", "list<int>", "INTEGER[]"),
        ("MAP(VARCHAR, UINTEGER)", "map<string, long>", "MAP(VARCHAR, BIGINT)"),
        ("TIMESTAMP_MS", "timestamp", "TIMESTAMP"),
        ("JSON", "string", "VARCHAR"),
    ],
)
def test_iceberg_type_maps_a_duckdb_type_and_duckdb_type_maps_it_back(duckdb_name, iceberg, cast_to):
    kind = iceberg_type(duckdb.sqltype(duckdb_name))
    assert _bare(str(kind)) == iceberg
    assert duckdb_type(kind) == cast_to


@pytest.mark.parametrize(
    ("duckdb_name", "held", "cast_to"),
    [
        ("TIME WITH TIME ZONE", "TIME WITH TIME ZONE", "VARCHAR"),
        ("STRUCT(a INTEGER, b TIMESTAMP_NS[])", "TIMESTAMP_NS", 'STRUCT("a" INTEGER, "b" TIMESTAMP[])'),
        ("TIMESTAMPTZ_NS", "TIMESTAMPTZ_NS", "TIMESTAMPTZ"),
        ("VARIANT", "VARIANT", "VARCHAR"),
    ],
)
def test_iceberg_type_refuses_what_no_iceberg_type_holds(duckdb_name, held, cast_to):
    with pytest.raises(NoIcebergTypeError) as raised:
        iceberg_type(duckdb.sqltype(duckdb_name))
    assert (raised.value.held, raised.value.cast_to) == (held, cast_to)
    assert storable_type(duckdb.sqltype(duckdb_name)) == cast_to
