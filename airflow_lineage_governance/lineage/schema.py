"""The catalog schema as the engine reads it: table -> {column: type}, names folded to lower case.

And placing the tables a query names in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from sqlglot import exp

from airflow_lineage_governance.lineage.errors import UnknownTableError, UnplaceableSourceError
from airflow_lineage_governance.lineage.statement import table_ref
from airflow_lineage_governance.refs import TableRef

CatalogSchema = Mapping[TableRef, Mapping[str, str]]
"""What the engine takes: each catalog table with its columns and their types, in column order."""
NestedSchema = Mapping[str, Mapping[str, Mapping[str, str]]]
"""The JSON form of a schema (the CLI's `--schema` file): `{namespace: {table: {column: type}}}`."""
Schema = dict[TableRef, dict[str, str]]


def schema_from_nested(nested: NestedSchema) -> dict[TableRef, dict[str, str]]:
    """Return the schema of the JSON form `{namespace: {table: {column: type}}}` (a nested namespace written `a.b`).

    Raises InvalidNameError for an empty name.
    """
    return {
        TableRef.parse(f"{namespace}.{table}"): dict(columns)
        for namespace, tables in nested.items()
        for table, columns in tables.items()
    }


def normalized(schema: CatalogSchema | NestedSchema) -> Schema:
    """Return the schema with every name in lower case, as DuckDB folds unquoted identifiers.

    A schema in the JSON form is converted first (schema_from_nested).
    """
    tables = (
        schema_from_nested(cast(NestedSchema, schema))
        if schema and not isinstance(next(iter(schema)), TableRef)
        else cast(CatalogSchema, schema)
    )
    return {
        TableRef(tuple(part.lower() for part in ref.namespace), ref.name.lower()): {
            column.lower(): str(kind) for column, kind in columns.items()
        }
        for ref, columns in tables.items()
    }


def place_tables(
    tables: Iterable[exp.Table], ctes: set[str], schema: Schema, target: TableRef
) -> list[tuple[exp.Table, TableRef]]:
    """Return each catalog table among `tables` with the table it names.

    `tables` less the references to `ctes`; a table named without namespace is placed in the one namespace that holds
    it. Raises UnknownTableError or UnplaceableSourceError. Changes no node.
    """
    placed: list[tuple[exp.Table, TableRef]] = []
    holders_by_name: dict[str, list[TableRef]] | None = None
    for table in tables:
        if not isinstance(table.this, (exp.Identifier, exp.Dot)):
            raise UnplaceableSourceError(
                target,
                f"{table.this.sql(dialect='duckdb')} is not a catalog table, so its columns cannot be placed",
                "read the data through an Iceberg table of the catalog",
            )
        ref = table_ref(table, target)
        if ref is None:
            name = table.name.lower()
            if name in ctes:
                continue
            if holders_by_name is None:
                holders_by_name = {}
                for known in schema:
                    holders_by_name.setdefault(known.name, []).append(known)
            holders = sorted(holders_by_name.get(name, []))
            if len(holders) != 1:
                found = (
                    f"is in {', '.join(h.namespace_name for h in holders)}"
                    if holders
                    else "is in no namespace of the catalog"
                )
                raise UnknownTableError(target, f"the table {name} {found}", "name it as namespace.table")
            ref = holders[0]
        if ref not in schema:
            raise UnknownTableError(
                target, f"the catalog has no table {ref}", "check the name, or create the table before this task runs"
            )
        placed.append((table, ref))
    return placed


def read_tables(placed: Iterable[tuple[exp.Table, TableRef]]) -> tuple[TableRef, ...]:
    """Return the tables placed, each once, in order of first appearance."""
    return tuple(dict.fromkeys(ref for _, ref in placed))


def engine_key(ref: TableRef) -> tuple[str, str]:
    """Return how the engine names a table inside a query it reads: (one namespace identifier, name).

    A nested namespace becomes one dotted identifier, so every table has the same depth for sqlglot's qualifier.
    """
    return ref.namespace_name, ref.name


def name_for_engine(table: exp.Table, ref: TableRef) -> None:
    """Name `table` (a node of a copy the engine owns) as its engine key `"ns".name`, in place."""
    table.set("catalog", None)
    table.set("db", exp.to_identifier(ref.namespace_name))


def name_for_duckdb(table: exp.Table, ref: TableRef) -> None:
    """Name `table` (a node of a copy the caller owns) as DuckDB finds it.

    `schema.name` for a one-level namespace, `catalog.schema.name` for two, in place.
    """
    *catalog, db = ref.namespace
    table.set("catalog", exp.to_identifier(catalog[0]) if catalog else None)
    table.set("db", exp.to_identifier(db))
