"""Opening a catalog, listing its tables, and reading its schema in the form the lineage engine takes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import suppress
from pathlib import Path

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.table import Table

from airflow_lineage_governance import settings
from airflow_lineage_governance.refs import TableRef

TableName = TableRef | str
"""A table as this layer's functions take it: a TableRef, or its dataset name (`a.b.table`)."""


def as_table(table: TableName) -> TableRef:
    """Return the table `table` names; raise InvalidNameError for a text that names no table."""
    return table if isinstance(table, TableRef) else TableRef.parse(table)


def local_catalog_properties(folder: str | Path) -> dict[str, str]:
    """Return the pyiceberg properties of a SQLite catalog with a `file://` warehouse, both in `folder`."""
    root = Path(folder).resolve()
    # No "type": pyiceberg infers it from the sqlite uri, and a 3-character extra value would make Airflow warn
    # in every task log that it is too short to mask.
    return {"uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"file://{root / 'warehouse'}"}


def open_local_catalog(folder: str | Path, name: str | None = None) -> SqlCatalog:
    """Return the local catalog in `folder`, creating the folder and its warehouse when missing.

    Args:
        folder: The catalog's folder (catalog.db and warehouse/).
        name: The catalog's name, under which it keeps its tables; None: the `[lineage_governance] catalog_name`
            setting.

    Returns:
        The catalog.
    """
    root = Path(folder).resolve()
    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    properties = local_catalog_properties(root)
    return SqlCatalog(
        name or settings.required("catalog_name", None), uri=properties["uri"], warehouse=properties["warehouse"]
    )


def local_catalog_names(folder: str | Path) -> list[str]:
    """List the names of the catalogs whose tables or namespaces the local catalog in `folder` keeps.

    Args:
        folder: The catalog's folder (catalog.db and warehouse/).

    Returns:
        The names, sorted; none when the folder holds no catalog.db or it keeps nothing yet.
    """
    path = Path(folder).resolve() / "catalog.db"
    if not path.is_file():
        return []
    try:
        with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as connection:
            rows = connection.execute(
                "SELECT catalog_name FROM iceberg_tables UNION SELECT catalog_name FROM iceberg_namespace_properties"
            ).fetchall()
    except sqlite3.Error:
        return []
    return sorted(str(row[0]) for row in rows)


def open_catalog(name: str, properties: Mapping[str, str]) -> Catalog:
    """Returns the pyiceberg catalog `name` described by `properties` (type, uri, warehouse, credentials…).

    A REST catalog's requests are bounded by `request-timeout-seconds` (rest.BoundedRestCatalog). Raises
    CatalogUnreachableError when a REST catalog does not answer.
    """
    if is_rest(properties):  # the REST client (requests) is imported only for a REST catalog
        from airflow_lineage_governance.iceberg.rest import CATALOG_IMPL

        rest = {k: v for k, v in properties.items() if k != "type"}
        return load_catalog(name, **{**rest, "py-catalog-impl": CATALOG_IMPL})
    return load_catalog(name, **dict(properties))


def is_rest(properties: Mapping[str, str]) -> bool:
    """Return whether `properties` describe a REST catalog (`type: rest`, or no type and an http(s) uri)."""
    kind = properties.get("type")
    if kind is not None:
        return str(kind).lower() == "rest"
    return str(properties.get("uri", "")).startswith(("http://", "https://"))


def catalog_tables(catalog: Catalog) -> list[TableRef]:
    """Return every table of the catalog, in namespaces of any depth, sorted."""
    found: list[TableRef] = []
    pending = list(catalog.list_namespaces())
    seen: set[tuple[str, ...]] = set()
    while pending:
        namespace = tuple(pending.pop())
        if namespace in seen:
            continue
        seen.add(namespace)
        # A REST catalog over JDBC lists the parent of a nested namespace (`a` of `a.b`) without holding it.
        with suppress(NoSuchNamespaceError):
            found.extend(TableRef.of(identifier) for identifier in catalog.list_tables(namespace))
        pending.extend(child for child in catalog.list_namespaces(namespace) if tuple(child) != namespace)
    return sorted(set(found))


def table_names(catalog: Catalog) -> list[str]:
    """Return the OpenLineage dataset name (`namespace.table`) of every table of the catalog, sorted."""
    return sorted(str(ref) for ref in catalog_tables(catalog))


def load_tables(catalog: Catalog, tables: Iterable[TableName]) -> dict[TableRef, Table]:
    """Return each named table loaded once, in order; a table that does not exist is left out."""
    loaded: dict[TableRef, Table] = {}
    for ref in dict.fromkeys(map(as_table, tables)):
        try:
            loaded[ref] = catalog.load_table(ref.identifier)
        except NoSuchTableError:
            continue
    return loaded


def table_columns(table: Table) -> dict[str, str]:
    """Return the table's current columns and their Iceberg types, in order."""
    return {field.name: str(field.field_type) for field in table.schema().fields}


def lineage_schema(catalog: Catalog, tables: Iterable[TableName] | None = None) -> dict[TableRef, dict[str, str]]:
    """Return each table's current columns and types, `{table: {column: type}}` as the lineage engine takes it.

    All tables when `tables` is None; a named table that does not exist is left out, for the engine to report.
    """
    loaded = load_tables(catalog, catalog_tables(catalog) if tables is None else tables)
    return {ref: table_columns(table) for ref, table in loaded.items()}
