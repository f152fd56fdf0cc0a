"""Seeded MERGE, UPDATE and DELETE statements on `shop.orders` (statement i of seed s drawn from
`random.Random(f"{s}:{i}")`, so a statement is reproduced from its number alone).

Conditions compare every column with literals of other types (INTEGER with decimal and double literals, DECIMAL
with doubles, DATE with timestamps, NaN and infinities), use IN, BETWEEN, IS NULL, COLLATE NOCASE, OR, NOT,
functions of columns and subqueries on `shop.changes`. An UPDATE ... FROM or a MERGE whose join may give a target
row two source rows sets no source column: DuckDB updates the row once per match, and which source row's value
it keeps is not determined. (A source that is a subquery keeps a subset of `shop.changes`' rows, so a join unique
on the whole table is unique on it.)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from tests.iceberg.dml_equivalence.layouts import CHANGE_COLUMNS, ORDER_COLUMNS, changes, orders

KINDS = ("update", "update from", "delete", "delete using", "merge")

NAN, INF, NEG_INF = "'NaN'::DOUBLE", "'Infinity'::DOUBLE", "'-Infinity'::DOUBLE"
LITERALS: dict[str, list[str]] = {
    "id": [
        "0",
        "7",
        "40",
        "59.5",
        "50.5::DOUBLE",
        "79",
        "80",
        "-1",
        NAN,
        "39.999",
        "'12'",
        "1e1",
        "CAST(20 AS HUGEINT)",
    ],
    "score": [
        "0",
        "-0.0",
        "0.0::DOUBLE",
        NAN,
        INF,
        NEG_INF,
        "2.5",
        "-2.5",
        "100",
        "224.75",
        "2.5::DECIMAL(4,1)",
        "'NaN'::FLOAT",
        "1e308",
        "'20'",
    ],
    "qty": [
        "19.6",
        "2.5",
        "1.4",
        "10.4::DOUBLE",
        NAN,
        "3",
        "0",
        "-5",
        "2147483647",
        "2147483648",
        "-2147483647.5",
        "22.0::REAL",
        "'7'",
    ],
    "amount": [
        "2.254::DOUBLE",
        "0.005",
        "-0.005",
        "99999999.99",
        "99999999.995",
        "-0.01",
        "2.495",
        "2.505",
        "1",
        NAN,
        "0",
        "-99999999.99",
        "0.01::DOUBLE",
        "2.5::REAL",
        "100000000",
    ],
    "country": [
        "'de' COLLATE NOCASE",
        "'DE'",
        "'ät' COLLATE NOCASE",
        "''",
        "'fr'",
        "'US' COLLATE NOCASE",
        "'e'",
        "'ÄT'",
    ],
    "status": ["'open'", "'paid'", "'PAID' COLLATE NOCASE", "'late'", "''"],
    "note": ["'x'", "'X' COLLATE NOCASE", "'it''s'", "''"],
    "day": [
        "DATE '2026-01-02'",
        "TIMESTAMP '2026-01-02 00:00:00'",
        "TIMESTAMP '2026-01-01 23:59:59.999999'",
        "'2026-01-03'",
        "TIMESTAMP '2026-01-02 00:00:01'",
        "DATE '2025-12-31'",
    ],
    "ts": [
        "TIMESTAMP '2026-01-02 00:00:00'",
        "DATE '2026-01-02'",
        "TIMESTAMP '2026-01-01 23:59:59.999999'",
        "'2026-01-02'",
        "TIMESTAMP '2025-12-31 23:59:59.999999'",
        "TIMESTAMP '2026-01-03 00:00:00.000001'",
        "TIMESTAMPTZ '2026-01-02 00:00:00+00'",
    ],
}
_OPS = ["=", "<>", "<", "<=", ">", ">=", "!="]
_BETWEEN = {
    "id": [("10", "20.5"), ("59.5", "70")],
    "score": [("0", INF), (NEG_INF, "-0.0"), ("2.5", NAN)],
    "qty": [("2.5", "7.5"), ("-5", "0.0::DOUBLE")],
    "amount": [("-0.005", "0.005"), ("2.49", "2.505::DOUBLE")],
    "country": [("'d' COLLATE NOCASE", "'f'"), ("'A'", "'Z'")],
    "status": [("'a'", "'p'")],
    "note": [("'a'", "'z'")],
    "day": [("DATE '2026-01-01'", "TIMESTAMP '2026-01-02 00:00:00'")],
    "ts": [
        ("DATE '2026-01-01'", "TIMESTAMP '2026-01-01 23:59:59.999999'"),
        ("TIMESTAMP '2026-01-02 00:00:00'", "DATE '2026-01-03'"),
    ],
}
_FUNCTIONS = [
    "abs({score}) > 100",
    "isnan({score})",
    "isinf({score})",
    "lower({country}) = 'de'",
    "upper({country}) IN ('FR', 'ÄT')",
    "{qty} % 3 = 0",
    "{amount} * 2 > 5",
    "year({ts}) = 2026",
    "date_trunc('day', {ts}) = DATE '2026-01-02'",
    "CAST({ts} AS DATE) = {day}",
    "length({country}) = 2",
    "coalesce({score}, -1) < 0",
    "{score} + {qty} > 50",
    "CAST({day} AS TIMESTAMP) >= {ts}",
    "{id} * 1.5 > 60",
    "round({amount}) = 3",
    "sign({score}) = -1",
    "hour({ts}) = 23",
    "{amount} = {qty}",
    "{score} = {qty}",
    "{country} = {status} COLLATE NOCASE",
    "{id} % 7 = {qty} % 7",
    "greatest({score}, {qty}) > 200",
    "{note} IS DISTINCT FROM 'x'",
    "starts_with({country}, 'd')",
    "{country} ILIKE 'd%'",
    "{country} LIKE '_E'",
]
_SUBQUERIES = [
    "{id} IN (SELECT id FROM shop.changes)",
    "{score} IN (SELECT score FROM shop.changes)",
    "{id} NOT IN (SELECT id FROM shop.changes WHERE id IS NOT NULL)",
    "{qty} > (SELECT min(qty) FROM shop.changes)",
    "{score} > (SELECT max(score) FROM shop.changes)",
    "{amount} IN (SELECT amount FROM shop.changes)",
    "{country} IN (SELECT country FROM shop.changes)",
    "EXISTS (SELECT 1 FROM shop.changes AS c WHERE c.id = {id})",
    "NOT EXISTS (SELECT 1 FROM shop.changes AS c WHERE c.score = {score})",
    "{ts} IN (SELECT ts FROM shop.changes)",
    "{day} > (SELECT min(ts) FROM shop.changes)",
]
_SETS: dict[str, list[str]] = {
    "id": ["{id} + 1000", "-{id}"],
    "score": ["0", NAN, "{score} * 2", "-{score}", "{score} + {qty}", "NULL", INF, "-0.0", "{score} / 0", "DEFAULT"],
    "qty": ["{qty} - 1", "0", "NULL", "TRY_CAST({score} AS INTEGER)", "{qty} // 2", "-{qty}"],
    "amount": [
        "{amount} + 0.005",
        "{amount} / 3",
        "-{amount}",
        "0.01",
        "TRY_CAST({score} AS DECIMAL(10, 2))",
        "{amount} * 1.5",
        "99999999.99",
        "{qty} / 7",
    ],
    "country": ["upper({country})", "lower({country})", "'XX'", "NULL", "{country} || 'x'"],
    "status": ["'paid'", "'late'", "NULL", "{status} || {country}", "DEFAULT"],
    "note": [
        "'x'",
        "'it''s'",
        "CAST({id} AS VARCHAR)",
        "NULL",
        "CAST({score} AS VARCHAR)",
        "(SELECT max(note) FROM shop.changes)",
    ],
    "day": ["{day} + 1", "CAST({ts} AS DATE)", "DATE '2026-01-01'", "NULL", "DEFAULT"],
    "ts": [
        "{ts} + INTERVAL 1 MICROSECOND",
        "{ts} - INTERVAL 1 DAY",
        "CAST({day} AS TIMESTAMP)",
        "TIMESTAMP '2026-01-02 00:00:00'",
        "{ts} - INTERVAL 1 MICROSECOND",
    ],
}
_SOURCE_SETS: dict[str, list[str]] = {
    "id": ["s.id + 1000"],
    "score": ["s.score", "{score} + s.score"],
    "qty": ["s.qty"],
    "amount": ["s.amount"],
    "country": ["s.country"],
    "status": ["s.note"],
    "note": ["s.note", "s.country || {note}"],
    "day": ["s.ts"],
    "ts": ["s.ts"],
}
_JOINS = [
    "t.id = s.id",
    "t.id = s.id AND s.id <> 5",
    "t.score = s.score",
    "t.country = s.country COLLATE NOCASE",
    "t.qty = s.qty",
    "t.amount = s.amount",
    "t.ts = s.ts",
    "t.day = s.ts",
    "t.id = s.id + 1",
    "t.id = s.qty",
    "t.id = s.id AND t.score = s.score",
    "t.id = s.id OR t.score = s.score",
    "t.country = s.country",
    "t.amount = s.score",
    "t.id = s.id AND s.score IS NOT NULL",
]
_SOURCE_CONDITIONS = [
    "s.score IS NULL",
    "isnan(s.score)",
    "s.qty > 2",
    "s.note <> 'a'",
    "s.amount > 1",
    "s.country = 'de' COLLATE NOCASE",
    "s.ts >= DATE '2026-01-02'",
    "s.id IS NULL",
]
_RETURNING = ["*", "id", "score, country", "qty + 1", "CAST(amount AS VARCHAR)"]
_SOURCES = [
    "shop.changes AS s",
    "(SELECT * FROM shop.changes WHERE id IS NOT NULL) AS s",
    "(SELECT DISTINCT ON (id) * FROM shop.changes ORDER BY id, score) AS s",
]
_MERGE_SOURCES = [
    *_SOURCES,
    "(SELECT * FROM shop.changes WHERE id < 100 UNION ALL SELECT id + 1000, -score, qty, "
    "amount, upper(country), note, ts FROM shop.changes) AS s",
]
USING_ID = "USING (id)"
"""A MERGE's join on the key both sides name `id` (as `t.id = s.id`, but an unqualified `id` is the source's)."""


@dataclass(frozen=True)
class Statement:
    index: int
    kind: str
    sql: str

    @property
    def sources(self) -> list[str]:
        return ["shop.changes"] if "shop.changes" in self.sql else []


def _unique_joins() -> frozenset[str]:
    """The join conditions that give every row of shop.orders at most one row of shop.changes."""
    connection = duckdb.connect()
    connection.execute("CREATE SCHEMA shop")
    for name, columns, rows in (("orders", ORDER_COLUMNS, orders()), ("changes", CHANGE_COLUMNS, changes())):
        connection.execute(f"CREATE TABLE shop.{name} (" + ", ".join(f"{k} {v}" for k, v in columns.items()) + ")")
        connection.register("rows", rows)
        connection.execute(f"INSERT INTO shop.{name} SELECT * FROM rows")
        connection.unregister("rows")
    unique = set()
    for join in _JOINS:
        most = connection.execute(
            f"SELECT max(n) FROM (SELECT count(*) AS n FROM shop.orders AS t "
            f"JOIN shop.changes AS s ON {join} GROUP BY t.id)"
        ).fetchone()
        if most is None or most[0] is None or most[0] <= 1:
            unique.add(join)
    return frozenset(unique)


UNIQUE_JOINS = _unique_joins()


class _Draw:
    def __init__(self, rng: random.Random, qualifier: str) -> None:
        self.rng = rng
        self.names = {column: f"{qualifier}{column}" for column in ORDER_COLUMNS}

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def atom(self, subqueries: bool = True) -> str:
        rng = self.rng
        column = rng.choice(list(ORDER_COLUMNS))
        name = self.names[column]
        roll = rng.random()
        if roll < 0.38:
            return f"{name} {rng.choice(_OPS)} {rng.choice(LITERALS[column])}"
        if roll < 0.46:
            values = rng.sample(LITERALS[column], min(len(LITERALS[column]), rng.randint(1, 4)))
            values = [v.replace(" COLLATE NOCASE", "") for v in values] + (["NULL"] if rng.random() < 0.2 else [])
            negated = "NOT " if rng.random() < 0.25 else ""
            collate = " COLLATE NOCASE" if ORDER_COLUMNS[column] == "VARCHAR" and rng.random() < 0.5 else ""
            return f"{name}{collate} {negated}IN ({', '.join(values)})"
        if roll < 0.54:
            low, high = rng.choice(_BETWEEN[column])
            return f"{name} {'NOT ' if rng.random() < 0.2 else ''}BETWEEN {low} AND {high}"
        if roll < 0.62:
            return f"{name} IS {'NOT ' if rng.random() < 0.4 else ''}NULL"
        if roll < 0.82 or not subqueries:
            return rng.choice(_FUNCTIONS).format(**self.names)
        return rng.choice(_SUBQUERIES).format(**self.names)

    def condition(self, depth: int = 0, subqueries: bool = True) -> str:
        roll = self.rng.random()
        if depth < 2 and roll < 0.2:
            return f"({self.condition(depth + 1, subqueries)} OR {self.condition(depth + 1, subqueries)})"
        if depth < 2 and roll < 0.4:
            return f"{self.condition(depth + 1, subqueries)} AND {self.condition(depth + 1, subqueries)}"
        if depth < 2 and roll < 0.45:
            return f"NOT ({self.condition(depth + 1, subqueries)})"
        return self.atom(subqueries)

    def assignments(self, source_columns: bool) -> str:
        columns = self.rng.sample(list(ORDER_COLUMNS), self.rng.randint(1, 3))
        parts = []
        for column in columns:
            options = _SETS[column] + (_SOURCE_SETS[column] * 2 if source_columns else [])
            parts.append(f"{column} = {self.rng.choice(options).format(**self.names)}")
        return ", ".join(parts)


def _returning(rng: random.Random) -> str:
    """Returns a RETURNING clause for one statement in twelve (DuckDB then answers rows, not the count)."""
    return f" RETURNING {rng.choice(_RETURNING)}" if rng.random() < 1 / 12 else ""


def _where(draw: _Draw, join: str | None = None) -> str:
    if join is None:
        return draw.condition()
    if draw.rng.random() < 0.3:
        return join
    return f"{join} AND {draw.condition(1)}"


def _update(rng: random.Random) -> str:
    aliased = rng.random() < 0.5
    draw = _Draw(rng, "t." if aliased else rng.choice(["", "", "orders."]))
    target = "shop.orders AS t" if aliased else "shop.orders"
    where = "" if rng.random() < 0.04 else f" WHERE {_where(draw)}"
    return f"UPDATE {target} SET {draw.assignments(False)}{where}{_returning(rng)}"


def _update_from(rng: random.Random) -> str:
    draw = _Draw(rng, "t.")
    join = rng.choice(_JOINS)
    where = _where(draw, join)
    if rng.random() < 0.3:
        where += f" AND {rng.choice(_SOURCE_CONDITIONS)}"
    source = rng.choice(_SOURCES)
    return (
        f"UPDATE shop.orders AS t SET {draw.assignments(join in UNIQUE_JOINS)} "
        f"FROM {source} WHERE {where}{_returning(rng)}"
    )


def _delete(rng: random.Random) -> str:
    aliased = rng.random() < 0.4
    draw = _Draw(rng, "t." if aliased else rng.choice(["", "", "orders."]))
    target = "shop.orders AS t" if aliased else "shop.orders"
    return f"DELETE FROM {target} WHERE {_where(draw)}{_returning(rng)}"


def _delete_using(rng: random.Random) -> str:
    draw = _Draw(rng, "t.")
    where = _where(draw, rng.choice(_JOINS))
    if rng.random() < 0.3:
        where += f" AND {rng.choice(_SOURCE_CONDITIONS)}"
    return f"DELETE FROM shop.orders AS t USING {rng.choice(_SOURCES)} WHERE {where}{_returning(rng)}"


def _insert(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return (
            "INSERT (id, score, qty, amount, country, note, ts) VALUES (s.id + 1000, s.score, s.qty, s.amount, "
            "s.country, s.note, s.ts)"
        )
    if rng.random() < 0.5:
        return "INSERT (id, score, status) VALUES (s.id, s.score * 2, 'new')"
    return "INSERT VALUES (s.id, s.score, s.qty, s.amount, s.country, 'new', s.note, CAST(s.ts AS DATE), s.ts)"


def _merge(rng: random.Random) -> str:
    draw = _Draw(rng, "t.")
    join = rng.choice(_JOINS)
    on = f"ON {join}"
    if rng.random() < 0.15:
        join, on = USING_ID, USING_ID
    elif rng.random() < 0.25:
        on += f" AND {draw.condition(1, subqueries=False)}"
    source = rng.choice(_MERGE_SOURCES)
    unique = join in UNIQUE_JOINS and source in _SOURCES  # the UNION ALL source repeats every non-id key
    whens = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        condition = f" AND {draw.condition(1, subqueries=False)}" if rng.random() < 0.5 else ""
        if roll < 0.35:
            action = f"UPDATE SET {draw.assignments(unique)}" if rng.random() < 0.7 else "DELETE"
            whens.append(f"WHEN MATCHED{condition} THEN {action}")
        elif roll < 0.7:
            source_condition = f" AND {rng.choice(_SOURCE_CONDITIONS)}" if rng.random() < 0.4 else ""
            whens.append(f"WHEN NOT MATCHED{source_condition} THEN {_insert(rng)}")
        else:
            action = f"UPDATE SET {draw.assignments(False)}" if rng.random() < 0.6 else "DELETE"
            whens.append(f"WHEN NOT MATCHED BY SOURCE{condition} THEN {action}")
    # A clause without a condition goes after the conditional ones of its kind (DuckDB refuses it before them).
    whens.sort(key=lambda when: " AND " not in when.split(" THEN ")[0])
    return f"MERGE INTO shop.orders AS t USING {source} {on} {' '.join(whens)}{_returning(rng)}"


_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "update": _update,
    "update from": _update_from,
    "delete": _delete,
    "delete using": _delete_using,
    "merge": _merge,
}
_WEIGHTS = {"update": 3, "update from": 2, "delete": 2, "delete using": 1, "merge": 3}


def statement(index: int, seed: int = 0) -> Statement:
    rng = random.Random(f"{seed}:{index}")
    kind = rng.choices(list(_WEIGHTS), weights=list(_WEIGHTS.values()))[0]
    return Statement(index, kind, _MAKERS[kind](rng))


def statements(count: int, seed: int = 0, start: int = 0) -> list[Statement]:
    return [statement(i, seed) for i in range(start, start + count)]
