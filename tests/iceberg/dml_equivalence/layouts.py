"""Six layouts of `shop.orders`, and the source table `shop.changes`, with their rows known exactly.

The rows hold the values a statement's condition is easiest to get wrong on: NaN, +inf, -inf, -0.0 and NULL in
`score`; decimals at their scale's limits; integers near the INTEGER range; strings that differ only in case
(compared under COLLATE NOCASE); timestamps on either side of midnight (the day partition's boundaries). The
source holds a duplicate key and NaN and NULL keys. Each layout is built once and rolled back to its base
snapshot after every statement (`Layout.reset`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.partitions import parse_partition_by
from airflow_lineage_governance.iceberg.rewrite import rewrite_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from tests.support.delete_files import add_position_deletes

TARGET, SOURCE = "shop.orders", "shop.changes"
NAN, INF = float("nan"), float("inf")
ORDER_COLUMNS = {
    "id": "BIGINT",
    "score": "DOUBLE",
    "qty": "INTEGER",
    "amount": "DECIMAL(10,2)",
    "country": "VARCHAR",
    "status": "VARCHAR",
    "note": "VARCHAR",
    "day": "DATE",
    "ts": "TIMESTAMP",
}
CHANGE_COLUMNS = {
    "id": "BIGINT",
    "score": "DOUBLE",
    "qty": "INTEGER",
    "amount": "DECIMAL(10,2)",
    "country": "VARCHAR",
    "note": "VARCHAR",
    "ts": "TIMESTAMP",
}
ROWS = 80

_SCORES = {3: NAN, 40: NAN, 7: INF, 12: -INF, 15: -0.0, 16: 0.0, 20: None, 61: None, 33: 2.5, 34: -2.5}
_QTYS = {30: None, 33: -5, 50: 2147483647, 51: -2147483647, 52: 0}
_AMOUNTS = {
    2: "99999999.99",
    4: "-99999999.99",
    6: "-0.01",
    8: "0.00",
    9: "0.01",
    10: "2.49",
    11: "2.50",
    13: "2.51",
    14: "0.50",
    17: "1.00",
    25: None,
    70: "-2.50",
}
_COUNTRIES = ["de", "DE", "dE", "fr", "Fr", "FR", "us", "US", "ch", "", None, "ÄT", "ät"]
_STATUSES = ["open", "open", "paid", "late", None]
_NOTES = {1: "x", 5: "it's", 9: "X", 19: "", 44: "x"}
_MIDNIGHTS = [
    dt.datetime(2026, 1, 1, 23, 59, 59, 999999),
    dt.datetime(2026, 1, 2, 0, 0, 0),
    dt.datetime(2026, 1, 1, 0, 0, 0),
    dt.datetime(2025, 12, 31, 23, 59, 59, 999999),
    dt.datetime(2026, 1, 2, 23, 59, 59, 999999),
    dt.datetime(2026, 1, 3, 0, 0, 0, 1),
]


def _ts(i: int) -> dt.datetime | None:
    if i % 11 == 10:
        return None
    if i % 3 == 0:
        return _MIDNIGHTS[i // 3 % len(_MIDNIGHTS)]
    return dt.datetime(2025, 12, 31) + dt.timedelta(hours=i * 7 % 96, minutes=i % 60)


def _amount(i: int) -> Decimal | None:
    if i in _AMOUNTS:
        given = _AMOUNTS[i]
        return None if given is None else Decimal(given)
    return Decimal(f"{i * 113 % 400 / 4:.2f}") + Decimal("0.01") * (i % 3)


def orders() -> pa.Table:
    """The rows of `shop.orders` before any layout's deletes."""
    ids = range(ROWS)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "score": pa.array([_SCORES.get(i, float(i * 17 % 900) / 4) for i in ids], pa.float64()),
            "qty": pa.array([_QTYS.get(i, i % 23) for i in ids], pa.int32()),
            "amount": pa.array([_amount(i) for i in ids], pa.decimal128(10, 2)),
            "country": pa.array([_COUNTRIES[i % len(_COUNTRIES)] for i in ids], pa.string()),
            "status": pa.array([_STATUSES[i % len(_STATUSES)] for i in ids], pa.string()),
            "note": pa.array([_NOTES.get(i) for i in ids], pa.string()),
            "day": pa.array(
                [None if i % 13 == 12 else dt.date(2025, 12, 31) + dt.timedelta(days=i % 5) for i in ids], pa.date32()
            ),
            "ts": pa.array([_ts(i) for i in ids], pa.timestamp("us")),
        }
    )


def changes() -> pa.Table:
    """The rows of `shop.changes`: id 5 twice, a NULL id, NaN and NULL scores, ids `shop.orders` lacks."""
    return pa.table(
        {
            "id": pa.array([5, 5, 6, 7, None, 40, 200, 201, 12, 2], pa.int64()),
            "score": pa.array([1.0, 2.0, 6.0, NAN, NAN, None, 3.0, -0.0, -INF, 99.5], pa.float64()),
            "qty": pa.array([1, 2, 3, None, 5, 6, 7, 2147483647, 9, 0], pa.int32()),
            "amount": pa.array(
                [
                    Decimal(v) if v is not None else None
                    for v in ["0.01", "2.50", None, "99999999.99", "-0.01", "1.00", "0.00", "2.49", "7.25", "3.00"]
                ],
                pa.decimal128(10, 2),
            ),
            "country": pa.array(["DE", "fr", "us", None, "de", "ÄT", "xx", "", "FR", "ch"], pa.string()),
            "note": pa.array(["a", "b", None, "c", "d", "e", "f", "g", "h", "it's"], pa.string()),
            "ts": pa.array(
                [
                    _MIDNIGHTS[0],
                    _MIDNIGHTS[1],
                    None,
                    _MIDNIGHTS[2],
                    _MIDNIGHTS[3],
                    dt.datetime(2026, 1, 1, 12),
                    _MIDNIGHTS[4],
                    _MIDNIGHTS[5],
                    _MIDNIGHTS[0],
                    None,
                ],
                pa.timestamp("us"),
            ),
        }
    )


@dataclass
class Layout:
    """One layout: its catalog, the rows `shop.orders` holds at its base snapshot, and that snapshot."""

    name: str
    catalog: Catalog
    rows: pa.Table
    base_snapshot: int

    def reset(self) -> None:
        """Makes the base snapshot current again (a statement's commit is left in the history, unreferenced)."""
        table = self.catalog.load_table(TARGET)
        if table.metadata.current_snapshot_id != self.base_snapshot:
            table.manage_snapshots().set_current_snapshot(snapshot_id=self.base_snapshot).commit()


def _appended(catalog: Catalog, rows: pa.Table, parts: int) -> None:
    size = -(-len(rows) // parts)
    create_or_replace(catalog, TARGET, rows.slice(0, size), {})
    table = catalog.load_table(TARGET)
    for start in range(size, len(rows), size):
        table.append(rows.slice(start, size))


def _finish(name: str, catalog: Catalog, rows: pa.Table) -> Layout:
    create_or_replace(catalog, SOURCE, changes(), {})
    snapshot = catalog.load_table(TARGET).current_snapshot()
    assert snapshot is not None
    return Layout(name, catalog, rows, snapshot.snapshot_id)


def _partitioned(spec: list[str]) -> Callable[[str, Catalog], Layout]:
    def build(name: str, catalog: Catalog) -> Layout:
        create_or_replace(catalog, TARGET, orders(), {}, partition_by=parse_partition_by(spec))
        return _finish(name, catalog, orders())

    return build


def _one_file(name: str, catalog: Catalog) -> Layout:
    create_or_replace(catalog, TARGET, orders(), {})
    return _finish(name, catalog, orders())


def _several_files(name: str, catalog: Catalog) -> Layout:
    _appended(catalog, orders(), 4)
    return _finish(name, catalog, orders())


EARLIER_DELETE = "DELETE FROM shop.orders WHERE id IN (1, 17) OR score = '-Infinity'::DOUBLE"


def _earlier_deletes(name: str, catalog: Catalog) -> Layout:
    """Four appends, a copy-on-write DELETE through rewrite_statement (of rows of the first append's file), then a
    position delete file on the third append's file (its rows at positions 0 and 3)."""
    rows = orders()
    _appended(catalog, rows, 4)
    create_or_replace(catalog, SOURCE, changes(), {})
    rewrite_statement(
        catalog, target=TARGET, dml=EARLIER_DELETE, sources=[], snapshot_properties={WRITE_KEY: "layout-delete"}
    )
    table = catalog.load_table(TARGET)
    files = [task.file.file_path for task in table.scan().plan_files()]
    third = next(
        path
        for path in files
        if 45 in pq.read_table(path.removeprefix("file://"), columns=["id"]).column("id").to_pylist()
    )
    positioned = pq.read_table(third.removeprefix("file://"), columns=["id"]).column("id").to_pylist()
    add_position_deletes(table, third, [0, 3])
    gone = {1, 17, 12, positioned[0], positioned[3]}  # 12: the -inf score
    kept = [i for i in range(ROWS) if i not in gone]
    return Layout(name, catalog, rows.take(pa.array(kept)), catalog.load_table(TARGET).metadata.current_snapshot_id)


BUILDERS: dict[str, Callable[[str, Catalog], Layout]] = {
    "one file": _one_file,
    "several files": _several_files,
    "identity partition": _partitioned(["country"]),
    "day partition": _partitioned(["day(ts)"]),
    "bucket partition": _partitioned(["bucket[4](id)"]),
    "earlier deletes": _earlier_deletes,
}
