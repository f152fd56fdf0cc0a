"""A seeded generator of SQL queries over one layout's table.

Query `i` of a layout is drawn from `random.Random(f"{seed}:{layout}:{i}")`, so a query names itself by
(layout, i) and the fast slice's queries are the first ones of the whole suite. Its kind cycles through KINDS (query
0 reads every column), literals are typed for the column (`CAST('1.10' AS DECIMAL(10,2))`, `TIMESTAMP '...'`) and
mostly taken from the rows, and floating point columns get the comparisons NaN makes hard (`x > 1000`,
`x = 'NaN'::DOUBLE`, `x < 0`).
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tests.iceberg.equivalence.layouts import Layout, duckdb_type

KINDS = (
    "all",
    "filter",
    "projection",
    "nulls",
    "in_list",
    "between",
    "aggregate",
    "filter",
    "self_join",
    "distinct",
    "filter",
)


@dataclass(frozen=True)
class Column:
    name: str
    arrow: pa.DataType
    values: list[Any]  # the column's non-NULL values in the rows

    @property
    def sql(self) -> str:
        return '"' + self.name.replace('"', '""') + '"'

    @property
    def duckdb(self) -> str:
        return duckdb_type(self.arrow)

    @property
    def nested(self) -> bool:
        return pa.types.is_struct(self.arrow) or pa.types.is_list(self.arrow)

    @property
    def floating(self) -> bool:
        return pa.types.is_floating(self.arrow)

    @property
    def numeric(self) -> bool:
        return pa.types.is_integer(self.arrow) or pa.types.is_decimal(self.arrow) or self.floating

    @property
    def boolean(self) -> bool:
        return pa.types.is_boolean(self.arrow)


def literal(value: Any, kind: str) -> str:
    """Returns `value` as a SQL literal of the DuckDB type `kind`."""
    if value is None:
        return f"CAST(NULL AS {kind})"
    if kind == "BOOLEAN":
        return "true" if value else "false"
    if kind in ("FLOAT", "DOUBLE"):
        text = "NaN" if value != value else repr(float(value))
        return f"CAST('{text}' AS {kind})"
    if kind in ("INTEGER", "BIGINT") or kind.startswith("DECIMAL"):
        return f"CAST('{value}' AS {kind})"
    if kind == "DATE":
        return f"DATE '{value.isoformat()}'"
    if kind == "TIME":
        return f"TIME '{value.isoformat()}'"
    if kind == "TIMESTAMP":
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if kind == "TIMESTAMP WITH TIME ZONE":
        return f"TIMESTAMPTZ '{value.astimezone(dt.UTC).isoformat(sep=' ')}'"
    if kind == "UUID":
        return f"CAST('{uuid.UUID(bytes=value) if isinstance(value, bytes) else value}' AS UUID)"
    if kind == "BLOB":
        return "CAST('" + "".join(f"\\x{byte:02X}" for byte in value) + "' AS BLOB)"
    if kind == "VARCHAR":
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no literal for {kind}")


def _columns(layout: Layout) -> list[Column]:
    data = layout.rows.to_pydict()
    return [Column(f.name, f.type, [v for v in data[f.name] if v is not None]) for f in layout.rows.schema]


class _Draw:
    def __init__(self, layout: Layout, rng: random.Random) -> None:
        self.layout, self.rng = layout, rng
        self.columns = _columns(layout)
        self.table = layout.table

    def column(self, where: str = "any") -> Column:
        pool = {
            "any": self.columns,
            "primitive": [c for c in self.columns if not c.nested],
            "orderable": [c for c in self.columns if not c.nested and not c.boolean],
            "numeric": [c for c in self.columns if c.numeric],
        }[where]
        # id is every table's; the other columns are where the layouts differ, so they are drawn more often, and
        # floating point columns most (NaN is where a scan's statistics go wrong).
        weights = [1 if c.name == "id" else 6 if c.floating else 3 for c in pool]
        return self.rng.choices(pool, weights)[0]

    def value(self, column: Column) -> Any:
        if column.floating and self.rng.random() < 0.3:
            return self.rng.choice([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1000.0])
        if not column.values:
            return None
        return self.rng.choice(column.values)

    def lit(self, column: Column, value: Any = None) -> str:
        return literal(self.value(column) if value is None else value, column.duckdb)

    def predicate(self, column: Column, qualifier: str = "") -> str:
        name, rng = qualifier + column.sql, self.rng
        if pa.types.is_struct(column.arrow):
            field = column.arrow.field(rng.randrange(column.arrow.num_fields))
            values = [v[field.name] for v in column.values if v[field.name] is not None]
            sub = f"{name}.{field.name}"
            if not values or rng.random() < 0.2:
                return f"{sub} IS NULL"
            return f"{sub} {rng.choice(['=', '<', '>=', '<>'])} {literal(rng.choice(values), duckdb_type(field.type))}"
        if pa.types.is_list(column.arrow):
            items = [v for value in column.values for v in value if v is not None]
            element = duckdb_type(column.arrow.value_type)
            choices = [f"len({name}) > 1", f"len({name}) = 0", f"{name}[1] IS NULL"]
            if items:
                item = literal(rng.choice(items), element)
                choices += [f"list_contains({name}, {item})", f"{name}[1] = {item}"]
            return rng.choice(choices)
        if column.boolean:
            return rng.choice([name, f"NOT {name}", f"{name} = true", f"{name} IS DISTINCT FROM false"])
        if column.floating:
            kind = column.duckdb
            # The first three are where statistics without NaN prune wrongly; they are drawn most.
            special = [
                f"{name} > 1000",
                f"{name} = CAST('NaN' AS {kind})",
                f"{name} < 0",
                f"{name} = 0",
                f"{name} = CAST('inf' AS {kind})",
                f"isnan({name})",
                f"{name} >= CAST('-inf' AS {kind})",
                f"{name} <> CAST('NaN' AS {kind})",
            ]
            if rng.random() < 0.7:
                return rng.choices(special, [4, 4, 4, 1, 1, 1, 1, 1])[0]
        if pa.types.is_string(column.arrow) and column.values and rng.random() < 0.3:
            prefix = rng.choice(column.values)[:2]
            return f"{name} LIKE {literal(prefix.replace('%', '').replace('_', '') + '%', 'VARCHAR')}"
        operator = rng.choice(["=", "<>", "<", "<=", ">", ">="])
        return f"{name} {operator} {self.lit(column)}"

    def projection(self) -> str:
        chosen = self.rng.sample(self.columns, self.rng.randint(1, len(self.columns)))
        return ", ".join(c.sql for c in chosen)

    def query(self, kind: str) -> str:
        rng, table = self.rng, self.table
        if kind == "all":
            return f"SELECT * FROM {table}"
        if kind == "projection":
            return f"SELECT {self.projection()} FROM {table}"
        if kind == "filter":
            column = self.column()
            where = self.predicate(column)
            if rng.random() < 0.3:
                other = self.column()
                where = f"({where}) {rng.choice(['AND', 'OR'])} ({self.predicate(other)})"
            return f"SELECT id, {column.sql} FROM {table} WHERE {where}"
        if kind == "nulls":
            column = self.column()
            test = rng.choice(["IS NULL", "IS NOT NULL"])
            return f"SELECT {self.projection()} FROM {table} WHERE {column.sql} {test}"
        if kind == "in_list":
            column = self.column("primitive")
            values = [self.lit(column) for _ in range(rng.randint(1, 4))]
            negated = "NOT " if rng.random() < 0.25 else ""
            return f"SELECT id, {column.sql} FROM {table} WHERE {column.sql} {negated}IN ({', '.join(values)})"
        if kind == "between":
            column = self.column("orderable")
            low, high = self.value(column), self.value(column)
            if low is None or high is None:
                return f"SELECT id FROM {table} WHERE {column.sql} IS NULL"
            if column.floating and (low != low or high != high):
                pass  # NaN bounds: DuckDB orders NaN above every number, and the native table says what follows
            elif _key(high) < _key(low):
                low, high = high, low
            return (
                f"SELECT id, {column.sql} FROM {table} "
                f"WHERE {column.sql} BETWEEN {self.lit(column, low)} AND {self.lit(column, high)}"
            )
        if kind == "aggregate":
            group, target = self.column("primitive"), self.column("primitive")
            parts = ["count(*) AS n", f"count({target.sql}) AS n_values"]
            if not target.boolean or rng.random() < 0.5:
                parts += [f"min({target.sql}) AS low", f"max({target.sql}) AS high"]
            if target.numeric:
                parts.append(f"sum({target.sql}) AS total")
            return f"SELECT {group.sql}, {', '.join(parts)} FROM {table} GROUP BY {group.sql}"
        if kind == "self_join":
            left, right = self.column(), self.column()
            where = f" WHERE {self.predicate(left, 'a.')}" if rng.random() < 0.5 else ""
            return (
                f"SELECT a.id, a.{left.sql} AS left_value, b.{right.sql} AS right_value "
                f"FROM {table} AS a JOIN {table} AS b ON a.id = b.id{where}"
            )
        if kind == "distinct":
            chosen = rng.sample(self.columns, rng.randint(1, min(2, len(self.columns))))
            return f"SELECT DISTINCT {', '.join(c.sql for c in chosen)} FROM {table}"
        raise ValueError(kind)


def _key(value: Any) -> Any:
    return value.timestamp() if isinstance(value, dt.datetime) and value.tzinfo else value


@dataclass(frozen=True)
class Query:
    layout: str
    index: int
    kind: str
    sql: str


def queries(layout: Layout, count: int, seed: int = 0) -> Iterator[Query]:
    """Yields the layout's first `count` queries."""
    for index in range(count):
        rng = random.Random(f"{seed}:{layout.name}:{index}")
        kind = KINDS[index % len(KINDS)]
        yield Query(layout.name, index, kind, _Draw(layout, rng).query(kind))
