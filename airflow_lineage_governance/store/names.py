"""The names of a store's tables and jobs by id, read once per process and kept with the store's engine.

The store only ever adds tables and jobs: the names kept are read again only when an id is not among them.
"""

from __future__ import annotations

from typing import NamedTuple
from weakref import WeakKeyDictionary

from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store.engine import Engine


class Names(NamedTuple):
    """A store's tables (each one's name and ref) and jobs (each one's name), by id."""

    tables: dict[int, tuple[str, TableRef]]
    jobs: dict[int, str]


_KEPT: WeakKeyDictionary[Engine, Names] = WeakKeyDictionary()


def names(engine: Engine, *, again: bool = False) -> Names:
    """Return the names of the store's tables and jobs, read once per engine, or `again` when it has more than kept.

    Args:
        engine: The store's engine.
        again: Read them again (the store gained a table or a job since they were read).

    Returns:
        The tables and jobs by id.
    """
    kept = _KEPT.get(engine)
    if kept is not None and not again:
        return kept
    rows = engine.query("SELECT dataset_id, name FROM datasets")
    tables = {table: (name, TableRef.parse(name)) for table, name in rows}
    jobs: dict[int, str] = dict(engine.query("SELECT job_id, name FROM jobs"))
    kept = _KEPT[engine] = Names(tables, jobs)
    return kept
