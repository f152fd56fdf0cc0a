"""The refs of a store's columns and tables in their order, read once per process and kept with the store's engine.

A node is a column, or a table (its id negated: ids are positive). The nodes are ordered by table name, then column
name, a table after its columns, in code point order: an edge's ends are read as their places in that order, which
sort as the names do and index the refs kept. The store only ever adds nodes: the nodes kept are read again only
when an edge names one they lack.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, NamedTuple
from weakref import WeakKeyDictionary

from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine

if TYPE_CHECKING:
    from airflow_lineage_governance.store.duckdb_engine import DuckDBEngine

NODES = (
    "SELECT dc.column_id AS node, d.name AS table_name, dc.name AS column_name FROM dataset_columns dc JOIN datasets d "
    "ON d.dataset_id = dc.dataset_id UNION ALL SELECT -dataset_id, name, NULL FROM datasets"
)
"""Every node of the store: its id (a table's negated), its table's name and its column's name (NULL for a table)."""


class Nodes(NamedTuple):
    """The store's nodes in their order: each one's id (a table's negated) and its ref, at its place."""

    ids: list[int]
    refs: list[ColumnRef | TableRef]


_KEPT: WeakKeyDictionary[Engine, Nodes] = WeakKeyDictionary()


def node_order(engine: Engine) -> str:
    """Return the ORDER BY of the nodes' place (`NODES`' columns), in the engine's SQL.

    Args:
        engine: The store's engine.

    Returns:
        The expressions, without `ORDER BY`.
    """
    return f"table_name{engine.text_order}, column_name{engine.text_order} NULLS LAST"


def node_places(engine: Engine, *, again: bool = False) -> Nodes:
    """Return the store's nodes by place, read once per engine, or `again` when the store has more than kept.

    Args:
        engine: The store's engine.
        again: Read them again (the store gained a node since they were read).

    Returns:
        The id and ref of each node, at its place (`node_order`).
    """
    kept = _KEPT.get(engine)
    if kept is not None and not again:
        return kept
    rows = engine.query(f"SELECT node, table_name, column_name FROM ({NODES}) AS nodes ORDER BY {node_order(engine)}")
    refs: list[ColumnRef | TableRef] = []
    named, table = None, TableRef((), "")  # the table of the rows before: none before the first
    new = tuple.__new__  # a ColumnRef made as the tuple it is: 60,000 of them at 1,000,000 events
    for _, table_name, column_name in rows:  # a table's nodes one after another: its columns, then the table
        if table_name != named:
            named, table = table_name, TableRef.parse(table_name)
        refs.append(table if column_name is None else new(ColumnRef, (table, column_name)))
    kept = _KEPT[engine] = Nodes([row[0] for row in rows], refs)
    return kept


_BY_ID: WeakKeyDictionary[Engine, tuple[Nodes, dict[int, ColumnRef | TableRef]]] = WeakKeyDictionary()


def refs_by_id(engine: Engine, ids: Collection[int]) -> dict[int, ColumnRef | TableRef]:
    """Return the ref of each node kept by its id, the nodes read again when one of `ids` is not among them.

    Args:
        engine: The store's engine.
        ids: The ids of the nodes the caller names (a table's negated).

    Returns:
        Every node's ref by id, made once per nodes read; an id the store does not hold is not among them.
    """
    nodes = node_places(engine)
    kept = _BY_ID.get(engine)
    if kept is None or kept[0] is not nodes:
        kept = _BY_ID[engine] = (nodes, dict(zip(nodes.ids, nodes.refs, strict=True)))
    if not all(node in kept[1] for node in ids):
        nodes = node_places(engine, again=True)
        kept = _BY_ID[engine] = (nodes, dict(zip(nodes.ids, nodes.refs, strict=True)))
    return kept[1]


PLACES_TABLE = "temp.node_places"
"""A DuckDB connection's temporary table of the nodes kept: each one's id (`node`) and place (`place`, from 0)."""

_TABLED: WeakKeyDictionary[DuckDBEngine, tuple[object, Nodes]] = WeakKeyDictionary()


def places_table(engine: DuckDBEngine, nodes: Nodes) -> str:
    """Return the temporary table of the nodes' ids and places, made once per nodes read and per connection.

    Args:
        engine: The store's DuckDB engine (a temporary table lasts as long as the connection it was made on).
        nodes: The nodes kept (`node_places`).

    Returns:
        The table's name (`PLACES_TABLE`).
    """
    made = _TABLED.get(engine)
    if made is None or made[0] is not engine.connection or made[1] is not nodes:
        engine.execute(
            f"CREATE OR REPLACE TEMP TABLE {PLACES_TABLE} AS SELECT node, place - 1 AS place FROM "
            "unnest(CAST(? AS BIGINT[])) WITH ORDINALITY AS p(node, place)",
            [nodes.ids],
        )
        _TABLED[engine] = (engine.connection, nodes)
    return PLACES_TABLE
