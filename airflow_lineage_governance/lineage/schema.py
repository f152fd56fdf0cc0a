"""The catalog schema as the engine reads it: `{db: {table: {column: type}}}`, names folded to lower case."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlglot import exp

from airflow_lineage_governance.lineage.errors import UnknownTableError, UnplaceableSourceError

Schema = dict[str, dict[str, dict[str, str]]]


def normalized(schema: Mapping[str, Mapping[str, Mapping[str, str]]]) -> Schema:
    """Returns the schema with every name in lower case, as DuckDB folds unquoted identifiers."""
    return {
        db.lower(): {table.lower(): {col.lower(): str(kind) for col, kind in columns.items()}
                     for table, columns in tables.items()}
        for db, tables in schema.items()
    }


def place_tables(tables: Iterable[exp.Table], ctes: set[str], schema: Schema, target: str) -> list[str]:
    """Gives every catalog table among `tables` (those that are not references to `ctes`) its namespace, in
    place, and returns their `db.table` names in order of first appearance; raises UnknownTableError or
    UnplaceableSourceError."""
    read: dict[str, None] = {}
    for table in tables:
        if not isinstance(table.this, exp.Identifier):
            raise UnplaceableSourceError(
                target, f"{table.this.sql(dialect='duckdb')} is not a catalog table, so its columns "
                "cannot be placed", "read the data through an Iceberg table of the catalog")
        name, db = table.name.lower(), table.db.lower()
        if table.catalog:
            raise UnknownTableError(
                target, f"{table.sql(dialect='duckdb')} names a catalog, and only namespace.table is read",
                "drop the catalog part of the name")
        if not db:
            if name in ctes:
                continue
            holders = sorted(d for d, tables in schema.items() if name in tables)
            if len(holders) != 1:
                found = f"is in {', '.join(holders)}" if holders else "is in no namespace of the catalog"
                raise UnknownTableError(target, f"the table {name} {found}",
                                        "name it as namespace.table")
            db = holders[0]
            table.set("db", exp.to_identifier(db))
        if name not in schema.get(db, {}):
            raise UnknownTableError(target, f"the catalog has no table {db}.{name}",
                                    "check the name, or create the table before this task runs")
        read[f"{db}.{name}"] = None
    return list(read)
