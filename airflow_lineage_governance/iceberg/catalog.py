"""Opening a catalog, and reading its schema in the form the lineage engine takes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError

LOCAL_CATALOG_NAME = "platform"


def local_catalog_properties(folder: str | Path) -> dict[str, str]:
    """Returns the pyiceberg properties of a SQLite catalog with a `file://` warehouse, both in `folder`."""
    root = Path(folder).resolve()
    return {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"file://{root / 'warehouse'}"}


def open_local_catalog(folder: str | Path, name: str = LOCAL_CATALOG_NAME) -> SqlCatalog:
    """Returns the local catalog in `folder`, creating the folder and its warehouse when missing."""
    root = Path(folder).resolve()
    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    properties = local_catalog_properties(root)
    return SqlCatalog(name, uri=properties["uri"], warehouse=properties["warehouse"])


def open_catalog(name: str, properties: Mapping[str, str]) -> Catalog:
    """Returns the pyiceberg catalog `name` described by `properties` (type, uri, warehouse, credentials…)."""
    return load_catalog(name, **dict(properties))


def table_names(catalog: Catalog) -> list[str]:
    """Returns every table of the catalog as `namespace.table`, sorted."""
    names = []
    for namespace in catalog.list_namespaces():
        for identifier in catalog.list_tables(namespace):
            names.append(".".join(identifier))
    return sorted(names)


def lineage_schema(catalog: Catalog, tables: Iterable[str] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """Returns `{db: {table: {column: type}}}` from the tables' current Iceberg schemas (all tables when
    `tables` is None); a named table that does not exist is left out, for the engine to report."""
    nested: dict[str, dict[str, dict[str, str]]] = {}
    for identifier in (table_names(catalog) if tables is None else tables):
        try:
            table = catalog.load_table(identifier)
        except NoSuchTableError:
            continue
        db, name = identifier.rsplit(".", 1)
        nested.setdefault(db, {})[name] = {f.name: str(f.field_type) for f in table.schema().fields}
    return nested
