"""Seeded data for the soundness oracle: one generator per table of the test schema, with overlapping join
keys, unique values where ties would make a result depend on the engine's order, and every string value
tagged by the column it comes from (a free-text value holds `table.column#n`; a categorical value is a word
of a vocabulary no other column uses)."""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable, Iterator
from decimal import Decimal

import pyarrow as pa

from learning_platform.tables import INCREMENTAL_TABLES, SOURCE_TABLES

# The harness's schema: the platform's tables, a list column on events (UNNEST over a table's list), and a table
# with a struct column (`.*` and field references over a struct).
TABLES: dict[str, pa.Schema] = {**SOURCE_TABLES, **INCREMENTAL_TABLES}
TABLES["learning.events"] = TABLES["learning.events"].append(pa.field("tags", pa.list_(pa.string())))
TABLES["support.contacts"] = pa.schema(
    [
        pa.field("contact_id", pa.int64()),
        pa.field("learner_id", pa.int64()),
        pa.field("profile", pa.struct([pa.field("channel", pa.string()), pa.field("handle", pa.string())])),
    ]
)
ROWS = {
    "crm.learners": 24,
    "learning.courses": 7,
    "learning.enrollments": 40,
    "learning.reviews": 30,
    "learning.events": 50,
    "billing.payments": 45,
    "billing.refunds": 12,
    "support.tickets": 20,
    "support.contacts": 15,
    "analytics.daily_revenue": 5,
}
# Foreign keys draw from the parent's ids and a little past them, so outer joins meet missing partners.
PARENT = {"learner_id": "crm.learners", "course_id": "learning.courses", "payment_id": "billing.payments"}
VOCABULARY: dict[str, tuple[str, ...]] = {
    "crm.learners.country": ("DE", "FR", "US", "IN", "BR"),
    "crm.learners.status": ("active", "paused", "closed"),
    "learning.courses.category": ("data", "design", "ml", "business"),
    "learning.events.event_type": ("lesson_completed", "viewed", "quiz"),
    "billing.payments.status": ("succeeded", "failed", "pending"),
    "billing.refunds.reason": ("duplicate", "fraud", "unhappy"),
    "support.tickets.status": ("open", "resolved"),
}
WORD_COLUMN = {word.lower(): column for column, words in VOCABULARY.items() for word in words}
TAG = re.compile(r"([a-z_]+\.[a-z_]+\.[a-z_]+)#\d+", re.I)
EPOCH = dt.datetime(2024, 1, 1)


def _ids(count: int) -> list[int]:
    return list(range(1, count + 1))


def column_values(table: str, field: pa.Field, count: int, rng: random.Random) -> list[object]:
    """Returns `count` values for one column: unique where the type allows ties to matter."""
    name, kind = field.name, field.type
    qualified = f"{table}.{name}"
    order = rng.sample(range(count * 3), count)
    if qualified in VOCABULARY:
        return [rng.choice(VOCABULARY[qualified]) for _ in range(count)]
    if pa.types.is_integer(kind):
        if field == TABLES[table].field(0):
            return _ids(count)
        if name in PARENT:
            return [rng.randint(1, ROWS[PARENT[name]] + 2) for _ in range(count)]
        return [rng.randint(1, 5) for _ in range(count)]
    if pa.types.is_floating(kind):
        return [round(1 + value * 1.37, 2) for value in order]
    if pa.types.is_boolean(kind):
        return [rng.random() < 0.6 for _ in range(count)]
    if pa.types.is_date(kind):
        return [dt.date(1985, 1, 1) + dt.timedelta(days=value * 29) for value in order]
    if pa.types.is_timestamp(kind):
        values: list[object] = [EPOCH + dt.timedelta(hours=value * 7, seconds=value) for value in order]
        if name.startswith("completed"):
            values = [None if rng.random() < 0.3 else value for value in values]
        return values
    if pa.types.is_list(kind):
        return [[f"{qualified}#{i}{k}" for k in range(rng.randint(0, 3))] for i in range(count)]
    if pa.types.is_struct(kind):
        return [{part.name: f"{qualified}#{i}{k}" for k, part in enumerate(kind)} for i in range(count)]
    return [f"{qualified}#{i}" for i in range(count)]


def generate(seed: int = 7) -> dict[str, pa.Table]:
    """Returns one Arrow table per table of the schema, generated from `seed`."""
    tables = {}
    for table, schema in TABLES.items():
        rng = random.Random(f"{seed}/{table}")
        count = ROWS[table]
        arrays = [pa.array(column_values(table, field, count, rng), type=field.type) for field in schema]
        tables[table] = pa.Table.from_arrays(arrays, schema=schema)
    return tables


def _fresh(value: object, qualified: str) -> object:
    if value is None:
        return None
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        words = VOCABULARY.get(qualified)
        if words:
            return words[(words.index(value) + 1) % len(words)]
        return value + "~"
    if isinstance(value, int):
        return value + 1 if value < 2**31 - 1 else value - 1  # stays in an INTEGER column's range
    if isinstance(value, Decimal):
        return value + 1 if abs(value) < 1_000_000 else -value  # stays in its DECIMAL's range
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, (dt.date, dt.datetime)):
        return value + dt.timedelta(days=1)
    if isinstance(value, list):
        return [*reversed(value), f"{qualified}#new"]
    if isinstance(value, dict):
        return {key: f"{item}~" for key, item in value.items()}
    return value


def perturbations(
    tables: dict[str, pa.Table], table: str, column: str, seed: int = 11
) -> Iterator[dict[str, pa.Table]]:
    """Yields copies of `tables` where one column's values changed: every value replaced by another, and the
    values shuffled across rows."""
    original = tables[table]
    index = original.schema.get_field_index(column)
    kind = original.schema.field(index).type
    values = original.column(index).to_pylist()
    shuffled = list(values)
    random.Random(seed).shuffle(shuffled)
    qualified = f"{table}.{column}"
    changes: list[Callable[[], list[object]]] = [lambda: [_fresh(v, qualified) for v in values], lambda: shuffled]
    for change in changes:
        column_array = pa.array(change(), type=kind)
        yield {**tables, table: original.set_column(index, original.schema.field(index), column_array)}


def tags_in(value: object) -> set[str]:
    """Returns the source columns whose tagged values appear anywhere in `value` (nested values included)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(match.lower() for match in TAG.findall(item))
            column = WORD_COLUMN.get(item.lower())
            if column:
                found.add(column)
        elif isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(k for k in item if isinstance(k, str))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found
