"""Iceberg tables of known content, one per layout the read path must get right.

Each builder writes its table with pyiceberg itself (never with the package's writer) and returns a Layout: the
table's name and the exact rows it holds, as a pyarrow Table typed as a native DuckDB table would hold them
(`uuid` as `arrow.uuid`, `int` as int32, `timestamptz` as UTC microseconds...). The DuckDB column types follow from
those Arrow types (`duckdb_type`), so the rows alone define the native table the read path is compared with.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
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
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from tests.support.delete_files import add_position_deletes

NAMESPACE = "eq"
UTC = dt.UTC
NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class Kind:
    """One primitive type: as Iceberg declares it, as DuckDB holds it in Arrow, and as pyiceberg takes it to write."""

    iceberg: IcebergType
    arrow: pa.DataType
    write: pa.DataType


KINDS: dict[str, Kind] = {
    "boolean": Kind(BooleanType(), pa.bool_(), pa.bool_()),
    "int": Kind(IntegerType(), pa.int32(), pa.int32()),
    "long": Kind(LongType(), pa.int64(), pa.int64()),
    "float": Kind(FloatType(), pa.float32(), pa.float32()),
    "double": Kind(DoubleType(), pa.float64(), pa.float64()),
    "decimal": Kind(DecimalType(10, 2), pa.decimal128(10, 2), pa.decimal128(10, 2)),
    "date": Kind(DateType(), pa.date32(), pa.date32()),
    "time": Kind(TimeType(), pa.time64("us"), pa.time64("us")),
    "timestamp": Kind(TimestampType(), pa.timestamp("us"), pa.timestamp("us")),
    "timestamptz": Kind(TimestamptzType(), pa.timestamp("us", tz="UTC"), pa.timestamp("us", tz="UTC")),
    "string": Kind(StringType(), pa.string(), pa.string()),
    # pyiceberg groups rows by partition with Arrow kernels that refuse the uuid extension type: it takes 16 bytes.
    "uuid": Kind(UUIDType(), pa.uuid(), pa.binary(16)),
    "binary": Kind(BinaryType(), pa.binary(), pa.binary()),
}


def duckdb_type(kind: pa.DataType) -> str:
    """Returns the DuckDB type a native table holds the Arrow type `kind` in (a struct's field names quoted)."""
    if isinstance(kind, pa.BaseExtensionType) and kind.extension_name == "arrow.uuid":
        return "UUID"
    if pa.types.is_struct(kind):
        fields = ", ".join(f'"{kind.field(i).name}" {duckdb_type(kind.field(i).type)}' for i in range(kind.num_fields))
        return f"STRUCT({fields})"
    if pa.types.is_list(kind):
        return f"{duckdb_type(kind.value_type)}[]"
    if pa.types.is_decimal(kind):
        return f"DECIMAL({kind.precision},{kind.scale})"
    if pa.types.is_timestamp(kind):
        return "TIMESTAMP WITH TIME ZONE" if kind.tz else "TIMESTAMP"
    simple = {
        pa.bool_(): "BOOLEAN",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.date32(): "DATE",
        pa.time64("us"): "TIME",
        pa.string(): "VARCHAR",
        pa.binary(): "BLOB",
    }
    return simple[kind]


@dataclass(frozen=True)
class Layout:
    """One built table: `table` (`eq.<name>`) holds exactly `rows`."""

    name: str
    table: str
    rows: pa.Table

    @property
    def columns(self) -> list[tuple[str, str]]:
        """The native table's columns: (name, DuckDB type), in the table's order."""
        return [(field.name, duckdb_type(field.type)) for field in self.rows.schema]


@dataclass(frozen=True)
class Column:
    """A column of a layout's schema: a name and a primitive kind, or a nested Iceberg and Arrow type."""

    name: str
    kind: str = ""
    iceberg: IcebergType | None = None
    arrow: pa.DataType | None = None

    def iceberg_type(self) -> IcebergType:
        return self.iceberg if self.iceberg is not None else KINDS[self.kind].iceberg

    def arrow_type(self) -> pa.DataType:
        return self.arrow if self.arrow is not None else KINDS[self.kind].arrow

    def write_type(self) -> pa.DataType:
        return self.arrow if self.arrow is not None else KINDS[self.kind].write


Row = dict[str, Any]


def _value(value: Any) -> Any:
    return value.bytes if isinstance(value, uuid.UUID) else value


def _arrow(columns: Sequence[Column], rows: Sequence[Row], *, write: bool) -> pa.Table:
    arrays = {}
    for column in columns:
        kind = column.write_type() if write else column.arrow_type()
        values = [_value(row.get(column.name)) for row in rows]
        if isinstance(kind, pa.BaseExtensionType):
            arrays[column.name] = pa.array(values, kind.storage_type).cast(kind)
        else:
            arrays[column.name] = pa.array(values, kind)
    return pa.table(arrays)


def known_rows(columns: Sequence[Column], rows: Sequence[Row]) -> pa.Table:
    """Returns `rows` as the native DuckDB table holds them (a column a row leaves out is NULL)."""
    return _arrow(columns, rows, write=False)


def _schema(columns: Sequence[Column]) -> Schema:
    # Nested types carry their own field ids from 100 up; top-level columns take 1, 2, ...
    return Schema(*(NestedField(i, c.name, c.iceberg_type(), required=False) for i, c in enumerate(columns, 1)))


def _spec(schema: Schema, fields: Iterable[tuple[str, Transform, str]]) -> PartitionSpec:
    made = [
        PartitionField(source_id=schema.find_field(source).field_id, field_id=1000 + i, transform=transform, name=name)
        for i, (source, transform, name) in enumerate(fields)
    ]
    return PartitionSpec(*made) if made else UNPARTITIONED_PARTITION_SPEC


def _create(
    catalog: Catalog,
    name: str,
    columns: Sequence[Column],
    partition: Iterable[tuple[str, Transform, str]] = (),
    properties: dict[str, str] | None = None,
) -> Table:
    schema = _schema(columns)
    return catalog.create_table(
        f"{NAMESPACE}.{name}", schema=schema, partition_spec=_spec(schema, partition), properties=properties or {}
    )


def _append(table: Table, columns: Sequence[Column], rows: Sequence[Row]) -> None:
    table.append(_arrow(columns, rows, write=True))


def _simple(
    catalog: Catalog,
    name: str,
    columns: Sequence[Column],
    batches: Sequence[Sequence[Row]],
    partition: Iterable[tuple[str, Transform, str]] = (),
    properties: dict[str, str] | None = None,
) -> Layout:
    """One table appended `batches` in turn (a snapshot each); it holds every row of every batch."""
    table = _create(catalog, name, columns, partition, properties)
    for batch in batches:
        _append(table, columns, batch)
    return Layout(name, f"{NAMESPACE}.{name}", known_rows(columns, [row for batch in batches for row in batch]))


def _numbered(values: Sequence[Any], copies: int = 2, extra: Callable[[int], Row] | None = None) -> list[Row]:
    """Rows with ids 1.., each value `copies` times, an `amount` per row, and any `extra` columns."""
    rows = []
    for i, value in enumerate(v for v in values for _ in range(copies)):
        ident = i + 1
        rows.append({"id": ident, "v": value, "amount": ident * 10 - 35, **(extra(ident) if extra else {})})
    return rows


# -- unpartitioned, every primitive type in one table -----------------------------------------------------------

U1, U2, U3 = (
    uuid.UUID("00000000-0000-0000-0000-000000000001"),
    uuid.UUID("6f1d3c1e-0b6a-4a59-9a0e-2f6f3c0d9a11"),
    uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"),
)
PRIMITIVE_VALUES: dict[str, list[Any]] = {
    "boolean": [True, False, None],
    "int": [1, -2, 0, 2147483647, -2147483648, None],
    "long": [1, -2, 2**40, 2**62, -(2**63), None],
    "float": [1.5, -0.25, 1024.0, 0.0, None],
    "double": [1.5, -0.25, 2000.125, 2.0**-20, None],  # dyadic: sums are exact in any order
    "decimal": [Decimal("1.10"), Decimal("-3.00"), Decimal("0.00"), Decimal("99999999.99"), None],
    "date": [dt.date(2026, 1, 1), dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(2000, 2, 29), None],
    "time": [dt.time(12, 30, 1), dt.time(0, 0), dt.time(23, 59, 59, 999999), None],
    "timestamp": [
        dt.datetime(2026, 1, 1, 12, 30, 1),
        dt.datetime(2026, 1, 1, 12, 30, 1, 5),
        dt.datetime(1969, 12, 31, 23, 59, 59),
        None,
    ],
    "timestamptz": [
        dt.datetime(2026, 1, 1, 12, 30, 1, tzinfo=UTC),
        dt.datetime(2026, 1, 1, 0, 0, 0, 5, tzinfo=UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
        None,
    ],
    "string": ["North America", " lead", "", "null", "a+b", None],
    "uuid": [U1, U2, U3, None],
    "binary": [b"a/b", b"", b"\x00\xff", b"null", None],
}
IDENTITY_STRINGS = [
    "North America",
    " lead",
    "trailing ",
    "a+b",
    "100%",
    "%2F",
    "a/b",
    "k=v",
    "x&y",
    "O'Brien",
    "Zürich",
    "東京",
    "",
    "null",
    "NULL",
    None,
]


PRIMITIVE_COLUMNS = [Column("id", "long"), *(Column(f"c_{kind}", kind) for kind in PRIMITIVE_VALUES)]
TYPED = ("uuid", "time", "timestamptz", "binary", "decimal", "date")
"""The types an Arrow reader is likeliest to hand DuckDB differently: the evolved schema carries them too."""


def _primitive_row(ident: int, kinds: Iterable[str]) -> Row:
    row: Row = {}
    for kind in kinds:
        values = PRIMITIVE_VALUES[kind]
        row[f"c_{kind}"] = values[(ident + list(PRIMITIVE_VALUES).index(kind)) % len(values)]
    return row


def _typed(ident: int) -> Row:
    return _primitive_row(ident, TYPED)


def _primitive_rows(start: int, count: int) -> list[Row]:
    return [{"id": i, **_primitive_row(i, PRIMITIVE_VALUES)} for i in range(start, start + count)]


def unpartitioned(catalog: Catalog) -> Layout:
    return _simple(catalog, "unpartitioned", PRIMITIVE_COLUMNS, [_primitive_rows(1, 18)])


def _identity(kind: str, values: Sequence[Any]) -> Callable[[Catalog], Layout]:
    def build(catalog: Catalog) -> Layout:
        columns = [Column("id", "long"), Column("v", kind), Column("amount", "long")]
        rows = _numbered(values)
        return _simple(catalog, f"identity_{kind}", columns, [rows], [("v", IdentityTransform(), "v")])

    return build


# -- transforms ---------------------------------------------------------------------------------------------------

TRANSFORM_COLUMNS = [
    Column("id", "long"),
    Column("ts", "timestamp"),
    Column("tz", "timestamptz"),
    Column("d", "date"),
    Column("s", "string"),
    Column("n", "int"),
    Column("amount", "long"),
]
_MOMENTS = [
    dt.datetime(2026, 1, 1, 0, 0),
    dt.datetime(2026, 1, 1, 23, 59, 59),
    dt.datetime(2026, 1, 2, 0, 0, 1),
    dt.datetime(2025, 12, 31, 23, 0),
    dt.datetime(2024, 2, 29, 12, 30),
    dt.datetime(1969, 12, 31, 23, 59, 59),
    dt.datetime(1970, 1, 1, 0, 0),
    dt.datetime(2026, 3, 15, 7, 45, 0, 123456),
    None,
]
_WORDS = ["apple", "applesauce", "app", "ap", "", "banana", "band", "Zürich", "東京都", None]
_NUMBERS = [0, 1, -1, 2, 3, 10, 11, -11, 1000, None]


def _transform_rows() -> list[Row]:
    rows = []
    for i in range(20):
        moment = _MOMENTS[i % len(_MOMENTS)]
        rows.append(
            {
                "id": i + 1,
                "ts": moment,
                "tz": moment.replace(tzinfo=UTC) if moment else None,
                "d": moment.date() if moment else None,
                "s": _WORDS[i % len(_WORDS)],
                "n": _NUMBERS[(i * 3) % len(_NUMBERS)],
                "amount": (i * 7) % 11 - 5,
            }
        )
    return rows


def _transformed(name: str, *fields: tuple[str, Transform, str]) -> Callable[[Catalog], Layout]:
    def build(catalog: Catalog) -> Layout:
        return _simple(catalog, name, TRANSFORM_COLUMNS, [_transform_rows()], fields)

    return build


# -- several files and snapshots, deletes ---------------------------------------------------------------------------

HISTORY_COLUMNS = [
    Column("id", "long"),
    Column("region", "string"),
    Column("qty", "int"),
    Column("price", "decimal"),
    Column("at", "timestamp"),
]


def _history_rows(start: int, count: int) -> list[Row]:
    regions = ["North America", "EMEA", "APAC", None]
    return [
        {
            "id": i,
            "region": regions[i % 4],
            "qty": (i * 5) % 13 - 3,
            "price": Decimal(i * 37 % 1000) / 10,
            "at": dt.datetime(2026, 1, 1 + i % 28, i % 24, 5),
        }
        for i in range(start, start + count)
    ]


def several_snapshots(catalog: Catalog) -> Layout:
    batches = [_history_rows(1 + 6 * b, 6) for b in range(4)]
    return _simple(catalog, "several_snapshots", HISTORY_COLUMNS, batches)


def position_deletes(catalog: Catalog) -> Layout:
    """Three appends (three data files) of every primitive type, one copy-on-write delete, then position delete
    files on two files."""
    columns = PRIMITIVE_COLUMNS
    table = _create(catalog, "position_deletes", columns)
    rows = _primitive_rows(1, 24)
    for b in range(3):
        _append(table, columns, rows[8 * b : 8 * b + 8])
    table.delete("id = 4")
    gone = {4}
    files = sorted(task.file.file_path for task in table.scan().plan_files())
    for path, positions in zip(files[:2], ([0, 2, 5], [1]), strict=True):
        ids = pq.read_table(path.removeprefix("file://"), columns=["id"]).column("id").to_pylist()
        gone.update(ids[p] for p in positions)
        add_position_deletes(table, path, positions)
    kept = [row for row in rows if row["id"] not in gone]
    return Layout("position_deletes", f"{NAMESPACE}.position_deletes", known_rows(columns, kept))


def evolved_schema(catalog: Catalog) -> Layout:
    """Rows written before and after each change: add, rename, drop, move, int->long, float->double, and a column
    added under a dropped column's name (a reader matching by name would find the old values)."""
    columns = [
        Column("id", "long"),
        Column("qty", "int"),
        Column("ratio", "float"),
        Column("name", "string"),
        Column("old", "string"),
        *(Column(f"c_{kind}", kind) for kind in TYPED),
    ]
    table = _create(catalog, "evolved_schema", columns)
    rows: list[Row] = []
    counter = iter(range(1, 1000))

    def write(make: Callable[[int], Row], count: int = 3) -> None:
        batch = [{"id": i, **_typed(i), **make(i)} for i in (next(counter) for _ in range(count))]
        _append(table, columns, batch)
        rows.extend(batch)

    write(lambda i: {"qty": i - 2, "ratio": i / 4, "name": f"n{i}", "old": f"o{i}"})
    with table.update_schema() as update:
        update.add_column("extra", StringType())
    columns.append(Column("extra", "string"))
    write(lambda i: {"qty": i * 3, "ratio": -i / 8, "name": f"n{i}", "old": f"o{i}", "extra": f"x{i}"})
    with table.update_schema() as update:
        update.rename_column("name", "label")
    columns[3] = Column("label", "string")
    for row in rows:
        row["label"] = row.pop("name")
    write(lambda i: {"qty": -i, "ratio": i * 1.5, "label": f"l{i}", "old": None, "extra": f"x{i}"})
    with table.update_schema() as update:
        update.delete_column("old")
    columns = [c for c in columns if c.name != "old"]
    for row in rows:
        row.pop("old")
    write(lambda i: {"qty": i, "ratio": 0.5, "label": None, "extra": f"y{i}"})
    with table.update_schema() as update:
        update.move_first("label")
        update.move_after("extra", "id")
    names = [c.name for c in columns if c.name != "label"]
    names.insert(0, "label")
    names.remove("extra")
    names.insert(names.index("id") + 1, "extra")
    columns = sorted(columns, key=lambda c: names.index(c.name))
    write(lambda i: {"qty": i * 100, "ratio": -0.0, "label": f"m{i}", "extra": None})
    with table.update_schema() as update:
        update.update_column("qty", LongType())
        update.update_column("ratio", DoubleType())
    columns = [Column(c.name, {"qty": "long", "ratio": "double"}.get(c.name, c.kind)) for c in columns]
    assert [f.name for f in table.schema().fields] == [c.name for c in columns]
    write(lambda i: {"qty": 2**40 + i, "ratio": 1e300, "label": f"p{i}", "extra": "z"})
    with table.update_schema() as update:
        update.add_column("old", StringType())
    columns.append(Column("old", "string"))
    write(lambda i: {"qty": i, "ratio": 2.25, "label": f"q{i}", "extra": "w", "old": f"new{i}"})
    return Layout("evolved_schema", f"{NAMESPACE}.evolved_schema", known_rows(columns, rows))


def spec_evolution(catalog: Catalog) -> Layout:
    """Unpartitioned, then identity(region), then identity(region) and day(at), then day(at) alone."""
    table = _create(catalog, "spec_evolution", HISTORY_COLUMNS)
    rows = _history_rows(1, 24)
    _append(table, HISTORY_COLUMNS, rows[:6])
    with table.update_spec() as update:
        update.add_identity("region")
    _append(table, HISTORY_COLUMNS, rows[6:12])
    with table.update_spec() as update:
        update.add_field("at", DayTransform(), "at_day")
    _append(table, HISTORY_COLUMNS, rows[12:18])
    with table.update_spec() as update:
        update.remove_field("region")
    _append(table, HISTORY_COLUMNS, rows[18:])
    return Layout("spec_evolution", f"{NAMESPACE}.spec_evolution", known_rows(HISTORY_COLUMNS, rows))


# -- floating point specials ----------------------------------------------------------------------------------------

FLOAT_FILES: list[list[float | None]] = [
    [1.5, NAN, 999.5, -0.0, None, 2.0, 3.25, NAN],  # numbers <= 1000 and NaN: min/max without NaN say "<= 999.5"
    [NAN, NAN, NAN, NAN],  # all NaN
    [INF, -INF, 0.0, 3.5, None, -7.75],
    [1000.0, 1000.5, -1000.0, NAN, 12.0, 0.0, -0.0, 4096.0],
    [None, None, None],
]


def floats(catalog: Catalog) -> Layout:
    """DOUBLE and FLOAT columns with NaN, +inf, -inf, -0.0 and NULL over five files of several row groups."""
    columns = [Column("id", "long"), Column("score", "double"), Column("ratio", "float"), Column("grp", "string")]
    batches, ident = [], 0
    for f, values in enumerate(FLOAT_FILES):
        batch = []
        for k, value in enumerate(values):
            ident += 1
            other = FLOAT_FILES[(f + 1) % len(FLOAT_FILES)]
            batch.append({"id": ident, "score": value, "ratio": other[k % len(other)], "grp": "abc"[ident % 3]})
        batches.append(batch)
    return _simple(catalog, "floats", columns, batches, properties={"write.parquet.row-group-limit": "3"})


# -- nested ---------------------------------------------------------------------------------------------------------

POINT = StructType(
    NestedField(101, "x", IntegerType(), required=False), NestedField(102, "label", StringType(), required=False)
)
POINT_ARROW = pa.struct([("x", pa.int32()), ("label", pa.string())])


def nested(catalog: Catalog) -> Layout:
    columns = [
        Column("id", "long"),
        Column("point", iceberg=POINT, arrow=POINT_ARROW),
        Column("tags", iceberg=ListType(103, StringType(), element_required=False), arrow=pa.list_(pa.string())),
        Column("scores", iceberg=ListType(104, LongType(), element_required=False), arrow=pa.list_(pa.int64())),
        Column("kind", "string"),
    ]
    points = [{"x": 1, "label": "a"}, {"x": None, "label": "b"}, {"x": -5, "label": None}, None, {"x": 7, "label": ""}]
    tags = [["red", "blue"], [], None, ["red"], ["", None], ["green", "red", "blue"]]
    scores = [[1, 2, 3], [None], [], None, [10], [-(2**40), 2**40]]
    batches = []
    for b in range(2):
        batch = []
        for i in range(1 + 10 * b, 11 + 10 * b):
            batch.append(
                {
                    "id": i,
                    "point": points[i % 5],
                    "tags": tags[i % 6],
                    "scores": scores[(i * 5) % 6],
                    "kind": ["x", "y", None][i % 3],
                }
            )
        batches.append(batch)
    return _simple(catalog, "nested", columns, batches)


BUILDERS: dict[str, Callable[[Catalog], Layout]] = {
    "unpartitioned": unpartitioned,
    "identity_string": _identity("string", IDENTITY_STRINGS),
    **{
        f"identity_{kind}": _identity(kind, values)
        for kind, values in PRIMITIVE_VALUES.items()
        if kind not in ("string", "float", "double")
    },
    "year_timestamp": _transformed("year_timestamp", ("ts", YearTransform(), "ts_year")),
    "month_timestamp": _transformed("month_timestamp", ("ts", MonthTransform(), "ts_month")),
    "day_timestamp": _transformed("day_timestamp", ("ts", DayTransform(), "ts_day")),
    "hour_timestamp": _transformed("hour_timestamp", ("ts", HourTransform(), "ts_hour")),
    "day_timestamptz": _transformed("day_timestamptz", ("tz", DayTransform(), "tz_day")),
    "year_date": _transformed("year_date", ("d", YearTransform(), "d_year")),
    "month_date": _transformed("month_date", ("d", MonthTransform(), "d_month")),
    "day_date": _transformed("day_date", ("d", DayTransform(), "d_day")),
    "bucket_int": _transformed("bucket_int", ("n", BucketTransform(4), "n_bucket")),
    "bucket_string": _transformed("bucket_string", ("s", BucketTransform(4), "s_bucket")),
    "truncate_string": _transformed("truncate_string", ("s", TruncateTransform(3), "s_trunc")),
    "truncate_int": _transformed("truncate_int", ("n", TruncateTransform(3), "n_trunc")),
    "two_fields": _transformed(
        "two_fields", ("n", BucketTransform(4), "n_bucket"), ("ts", MonthTransform(), "ts_month")
    ),
    "identity_and_day": _transformed(
        "identity_and_day", ("s", IdentityTransform(), "s"), ("ts", DayTransform(), "ts_day")
    ),
    "several_snapshots": several_snapshots,
    "position_deletes": position_deletes,
    "evolved_schema": evolved_schema,
    "spec_evolution": spec_evolution,
    "floats": floats,
    "nested": nested,
}
"""Every layout by name, in the order the tests run them."""


def build_all(catalog: Catalog, names: Iterable[str] | None = None) -> dict[str, Layout]:
    """Builds the named layouts (all by default) in `catalog`; returns them by name."""
    catalog.create_namespace_if_not_exists(NAMESPACE)
    return {name: BUILDERS[name](catalog) for name in (names or BUILDERS)}
