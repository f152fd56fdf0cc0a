"""Iceberg types as DuckDB names them: the one mapping every read and every cast of this layer uses."""

from __future__ import annotations

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
    BooleanType: "BOOLEAN", IntegerType: "INTEGER", LongType: "BIGINT", FloatType: "FLOAT", DoubleType: "DOUBLE",
    DateType: "DATE", TimeType: "TIME", TimestampType: "TIMESTAMP", TimestamptzType: "TIMESTAMPTZ",
    TimestampNanoType: "TIMESTAMP_NS", TimestamptzNanoType: "TIMESTAMPTZ", StringType: "VARCHAR",
    UUIDType: "UUID", BinaryType: "BLOB", FixedType: "BLOB",
}


def quoted(name: str) -> str:
    """Returns `name` as a DuckDB identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


def duckdb_type(kind: IcebergType) -> str:
    """Returns the DuckDB type that holds the values of the Iceberg type `kind` exactly.

    Args:
        kind: an Iceberg type of the table's schema (primitive or nested).

    Returns:
        The DuckDB type's name, nested types spelt out (`STRUCT("a" INTEGER, "b" VARCHAR[])`).

    Raises:
        TypeError: when `kind` is a type this mapping does not know (a newer format version's type).
    """
    if isinstance(kind, DecimalType):
        return f"DECIMAL({kind.precision}, {kind.scale})"
    if isinstance(kind, StructType):
        return "STRUCT(" + ", ".join(f"{quoted(f.name)} {duckdb_type(f.field_type)}" for f in kind.fields) + ")"
    if isinstance(kind, ListType):
        return f"{duckdb_type(kind.element_type)}[]"
    if isinstance(kind, MapType):
        return f"MAP({duckdb_type(kind.key_type)}, {duckdb_type(kind.value_type)})"
    for iceberg, duckdb in _PRIMITIVES.items():
        if isinstance(kind, iceberg):
            return duckdb
    raise TypeError(f"no DuckDB type is known for the Iceberg type {kind}")
