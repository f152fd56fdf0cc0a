"""The refs of a store's columns and tables in their order, read once per process and kept with the store's engine.

A node is a column, or a table (its id negated: ids are positive). The nodes are ordered by table name, then column
name, a table after its columns, in code point order: an edge's ends are read as their places in that order, which
sort as the names do and index the refs kept. The store only ever adds nodes, so as many nodes as there are refs kept
means the same nodes: the refs are read again only when the store has more.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine

NODES = (
    "SELECT dc.column_id AS node, d.name AS table_name, dc.name AS column_name FROM dataset_columns dc JOIN datasets d "
    "ON d.dataset_id = dc.dataset_id UNION ALL SELECT -dataset_id, name, NULL FROM datasets"
)
"""Every node of the store: its id (a table's negated), its table's name and its column's name (NULL for a table)."""

_KEPT: WeakKeyDictionary[Engine, list[ColumnRef | TableRef]] = WeakKeyDictionary()


def node_order(engine: Engine) -> str:
    """Return the ORDER BY of the nodes' place (`NODES`' columns), in the engine's SQL.

    Args:
        engine: The store's engine.

    Returns:
        The expressions, without `ORDER BY`.
    """
    return f"table_name{engine.text_order}, column_name{engine.text_order} NULLS LAST"


def node_places(engine: Engine, count: int | None = None) -> list[ColumnRef | TableRef]:
    """Return the refs of the store's nodes by place, read again when the store has `count` nodes and more than kept.

    Args:
        engine: The store's engine.
        count: How many nodes the store has now (None: the refs kept, if any).

    Returns:
        The ref of each node, at its place (`node_order`).
    """
    kept = _KEPT.get(engine)
    if kept is not None and (count is None or count == len(kept)):
        return kept
    tables: dict[str, TableRef] = {}
    refs: list[ColumnRef | TableRef] = []
    for table_name, column_name in engine.query(
        f"SELECT table_name, column_name FROM ({NODES}) AS nodes ORDER BY {node_order(engine)}"
    ):
        table = tables.get(table_name)
        if table is None:
            table = tables[table_name] = TableRef.parse(table_name)
        refs.append(table if column_name is None else ColumnRef(table, column_name))
    _KEPT[engine] = refs
    return refs
