"""The refs of the store's columns and tables by id, read from the store once per process.

An id is hashed from the name it stands for (`ids.stable_id`), so the ref read for an id never changes: the refs are
read once, every column and table of the store in one go, and kept for every later question (in any store); they are
read again only when a question meets an id not among them (the store has gained a column since). A node is a column
by its id, or a table by its id negated (ids are positive).
"""

from __future__ import annotations

from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.engine import Engine

_NODES: dict[int, ColumnRef | TableRef] = {}


def node_refs(engine: Engine, *, again: bool = False) -> dict[int, ColumnRef | TableRef]:
    """Return the ref of each node of the store, and of those met before in this process.

    Args:
        engine: The store's engine.
        again: Read the store's nodes again (a node was not among them); else read them only the first time.

    Returns:
        The refs by node (a column's id, or a table's id negated); only read from, never written to.
    """
    if _NODES and not again:
        return _NODES
    for table, name in engine.query("SELECT dataset_id, name FROM datasets"):
        if -table not in _NODES:
            _NODES[-table] = TableRef.parse(name)
    for column, table, name in engine.query("SELECT column_id, dataset_id, name FROM dataset_columns"):
        if column not in _NODES:
            ref = _NODES[-table]
            assert isinstance(ref, TableRef)
            _NODES[column] = ColumnRef(ref, name)
    return _NODES
