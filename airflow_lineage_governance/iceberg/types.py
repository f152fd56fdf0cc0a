"""Iceberg types as DuckDB names them, DuckDB's types as Iceberg holds them, and as OpenLineage names them.

The last are Iceberg types as the OpenLineage schema facet names them: the mappings every read, every write, every cast
and every event uses.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from duckdb.sqltypes import DuckDBPyType
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

_PRIMITIVES: dict[type[IcebergType], str] = {
    BooleanType: "BOOLEAN",
    IntegerType: "INTEGER",
    LongType: "BIGINT",
    FloatType: "FLOAT",
    DoubleType: "DOUBLE",
    DateType: "DATE",
    TimeType: "TIME",
    TimestampType: "TIMESTAMP",
    TimestamptzType: "TIMESTAMPTZ",
    TimestampNanoType: "TIMESTAMP_NS",
    TimestamptzNanoType: "TIMESTAMPTZ",
    StringType: "VARCHAR",
    BinaryType: "BLOB",
    FixedType: "BLOB",
}


def quoted(name: str) -> str:
    """Return `name` as a DuckDB identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


def text_literal(value: str) -> str:
    """Return `value` as a DuckDB string literal in single quotes."""
    return "'" + value.replace("'", "''") + "'"


def _spelt(kind: IcebergType, uuid: str) -> str:
    """Return the DuckDB type of `kind`, a UUID (nested ones too) spelt `uuid`."""
    if isinstance(kind, UUIDType):
        return uuid
    if isinstance(kind, DecimalType):
        return f"DECIMAL({kind.precision}, {kind.scale})"
    if isinstance(kind, StructType):
        return "STRUCT(" + ", ".join(f"{quoted(f.name)} {_spelt(f.field_type, uuid)}" for f in kind.fields) + ")"
    if isinstance(kind, ListType):
        return f"{_spelt(kind.element_type, uuid)}[]"
    if isinstance(kind, MapType):
        return f"MAP({_spelt(kind.key_type, uuid)}, {_spelt(kind.value_type, uuid)})"
    for iceberg, duckdb in _PRIMITIVES.items():
        if isinstance(kind, iceberg):
            return duckdb
    raise TypeError(f"no DuckDB type is known for the Iceberg type {kind}")


def duckdb_type(kind: IcebergType) -> str:
    """Return the DuckDB type that holds the values of the Iceberg type `kind` exactly.

    Args:
        kind: an Iceberg type of the table's schema (primitive or nested).

    Returns:
        The DuckDB type's name, nested types spelt out (`STRUCT("a" INTEGER, "b" VARCHAR[])`).

    Raises:
        TypeError: when `kind` is a type this mapping does not know (a newer format version's type).
    """
    return _spelt(kind, "UUID")


def facet_type(kind: IcebergType) -> str:
    """Return the type of a schema facet's field of the Iceberg type `kind`.

    Iceberg's own name of it, nested types without field ids or optional marks, so that every event names a column's
    type alike.

    Args:
        kind: an Iceberg type of the table's schema (primitive or nested).

    Returns:
        The type's name: `long`, `decimal(10, 2)`, `timestamptz`, `struct<a: string, b: list<int>>`.
    """
    if isinstance(kind, StructType):
        return "struct<" + ", ".join(f"{f.name}: {facet_type(f.field_type)}" for f in kind.fields) + ">"
    if isinstance(kind, ListType):
        return f"list<{facet_type(kind.element_type)}>"
    if isinstance(kind, MapType):
        return f"map<{facet_type(kind.key_type)}, {facet_type(kind.value_type)}>"
    return str(kind)


def facet_fields(schema: Schema) -> tuple[tuple[str, str], ...]:
    """Return each column of `schema` with its `facet_type`, in order: the fields of the table's schema facet.

    Args:
        schema: the table's Iceberg schema.

    Returns:
        (column, type) pairs.
    """
    return tuple((field.name, facet_type(field.field_type)) for field in schema.fields)


def result_type(kind: IcebergType) -> str:
    """Return the DuckDB type in which a result hands the Iceberg type `kind` to Arrow exactly.

    Its DuckDB type, but a UUID as its 16 bytes (BLOB), which Arrow takes as Iceberg's uuid; DuckDB hands a UUID to
    Arrow as text.

    Args:
        kind: an Iceberg type of the table's schema (primitive or nested).

    Returns:
        The DuckDB type's name, nested types spelt out.

    Raises:
        TypeError: when `kind` is a type this mapping does not know.
    """
    return _spelt(kind, "BLOB")


_ICEBERG_PRIMITIVES: dict[str, PrimitiveType] = {
    "boolean": BooleanType(),
    "tinyint": IntegerType(),
    "smallint": IntegerType(),
    "integer": IntegerType(),
    "utinyint": IntegerType(),
    "usmallint": IntegerType(),
    "bigint": LongType(),
    "uinteger": LongType(),
    "ubigint": DecimalType(20, 0),
    "float": FloatType(),
    "double": DoubleType(),
    "date": DateType(),
    "time": TimeType(),
    "timestamp": TimestampType(),
    "timestamp_s": TimestampType(),
    "timestamp_ms": TimestampType(),
    "timestamp with time zone": TimestamptzType(),
    "varchar": StringType(),
    "enum": StringType(),
    "blob": BinaryType(),
    "uuid": UUIDType(),
}
"""DuckDB's primitive types (by type id) that an Iceberg type holds exactly, and that type."""

_CAST_INSTEAD: dict[str, str] = {
    "time with time zone": "VARCHAR",
    "hugeint": "DECIMAL(38, 0)",
    "uhugeint": "DECIMAL(38, 0)",
    "bignum": "VARCHAR",
    "interval": "VARCHAR",
    "timestamp_ns": "TIMESTAMP",
    "timestamptz_ns": "TIMESTAMPTZ",
    "time_ns": "TIME",
    "bit": "VARCHAR",
    "union": "VARCHAR",
    "null": "VARCHAR",
    "variant": "VARCHAR",
    "geometry": "VARCHAR",
}
"""DuckDB's types (by type id) that no Iceberg type holds exactly, and the DuckDB type to cast them to; a type
missing from both mappings is cast to VARCHAR."""


class NoIcebergTypeError(TypeError):
    """Raised when no Iceberg type holds the values of a DuckDB type (or of a type nested in it) exactly.

    Attributes:
        duckdb_name: the DuckDB type as DuckDB spells it (`INTERVAL[]`).
        held: the DuckDB type within it that no Iceberg type holds (`INTERVAL`).
        cast_to: the DuckDB type to cast the whole value to instead (`VARCHAR[]`).
        column: the result column of that type, when known.
    """

    def __init__(self, duckdb_name: str, held: str, cast_to: str, column: str | None = None) -> None:
        self.duckdb_name, self.held, self.cast_to, self.column = duckdb_name, held, cast_to, column
        super().__init__(f"no Iceberg type holds the DuckDB type {held} exactly; cast it to {cast_to}")


class _Unheld(Exception):
    def __init__(self, held: str) -> None:
        self.held = held
        super().__init__(held)


def _child(kind: DuckDBPyType, position: int) -> DuckDBPyType:
    child = kind.children[position][1]
    if not isinstance(child, DuckDBPyType):
        raise TypeError(f"the DuckDB type {kind} has no type at position {position}")
    return child


def _fields(kind: DuckDBPyType) -> list[tuple[str, DuckDBPyType]]:
    return [(name, _child(kind, position)) for position, (name, _) in enumerate(kind.children)]


def _iceberg(kind: DuckDBPyType, ids: Iterator[int]) -> IcebergType:
    """Return the Iceberg type holding `kind` (its nested fields numbered from `ids`).

    Raises _Unheld naming the DuckDB type no Iceberg type holds.
    """
    name = str(kind.id)
    if name == "decimal":
        precision, scale = (value for _, value in kind.children)
        return DecimalType(int(str(precision)), int(str(scale)))
    if name == "struct":
        return StructType(
            *(NestedField(next(ids), field, _iceberg(child, ids), required=False) for field, child in _fields(kind))
        )
    if name in ("list", "array"):
        return ListType(next(ids), _iceberg(_child(kind, 0), ids), element_required=False)
    if name == "map":
        key_id, value_id = next(ids), next(ids)
        return MapType(
            key_id, _iceberg(_child(kind, 0), ids), value_id, _iceberg(_child(kind, 1), ids), value_required=False
        )
    if name in _ICEBERG_PRIMITIVES:
        return _ICEBERG_PRIMITIVES[name]
    raise _Unheld(str(kind))


def storable_type(kind: DuckDBPyType) -> str:
    """Return the DuckDB type to cast a value of `kind` to for an Iceberg table to hold it.

    `kind` itself, with every type within it that no Iceberg type holds replaced by one that is (`INTERVAL[]` becomes
    `VARCHAR[]`).

    Args:
        kind: a DuckDB type of a result column.

    Returns:
        The DuckDB type's name, nested types spelt out.
    """
    name = str(kind.id)
    if name == "struct":
        return "STRUCT(" + ", ".join(f"{quoted(field)} {storable_type(child)}" for field, child in _fields(kind)) + ")"
    if name == "list":
        return f"{storable_type(_child(kind, 0))}[]"
    if name == "array":
        return f"{storable_type(_child(kind, 0))}[{kind.children[1][1]}]"
    if name == "map":
        return f"MAP({storable_type(_child(kind, 0))}, {storable_type(_child(kind, 1))})"
    if name in _ICEBERG_PRIMITIVES or name == "decimal":
        return str(kind)
    return _CAST_INSTEAD.get(name, "VARCHAR")


def iceberg_type(kind: DuckDBPyType, ids: Iterator[int] | None = None) -> IcebergType:
    """Return the Iceberg type that holds the values of the DuckDB type `kind` exactly.

    `UBIGINT` as decimal(20, 0), `ENUM` as string, `SMALLINT` as int; `duckdb_type` of it is the DuckDB type to cast to.

    Args:
        kind: a DuckDB type of a result column (primitive or nested).
        ids: the ids to number nested fields with (from 1 when not given).

    Returns:
        The Iceberg type, nested fields optional.

    Raises:
        NoIcebergTypeError: when no Iceberg type holds `kind`, or a type nested in it, exactly (TIMETZ, HUGEINT,
            INTERVAL, TIMESTAMP_NS, a bare NULL, …); it names the DuckDB type to cast to instead.
    """
    try:
        return _iceberg(kind, ids if ids is not None else itertools.count(1))
    except _Unheld as unheld:
        raise NoIcebergTypeError(str(kind), unheld.held, storable_type(kind)) from None


def iceberg_schema(columns: Sequence[tuple[str, DuckDBPyType]]) -> Schema:
    """Return the Iceberg schema of a result's columns, all optional.

    Each column is of the Iceberg type `iceberg_type` maps its DuckDB type to.

    Args:
        columns: each result column's name and DuckDB type, in order.

    Returns:
        The schema, its fields numbered from 1 (a catalog numbers them afresh when it creates the table).

    Raises:
        NoIcebergTypeError: naming the first column no Iceberg type holds (its `column`).
    """
    ids = itertools.count(len(columns) + 1)
    fields = []
    for position, (name, kind) in enumerate(columns, start=1):
        try:
            fields.append(NestedField(position, name, iceberg_type(kind, ids), required=False))
        except NoIcebergTypeError as error:
            raise NoIcebergTypeError(error.duckdb_name, error.held, error.cast_to, name) from None
    return Schema(*fields)
