"""The platform's source tables: names, columns and Arrow types (the catalog's schema comes from these)."""

from __future__ import annotations

import pyarrow as pa

SOURCE_TABLES: dict[str, pa.Schema] = {
    "crm.learners": pa.schema(
        [
            ("learner_id", pa.int64()),
            ("full_name", pa.string()),
            ("email", pa.string()),
            ("country", pa.string()),
            ("marketing_consent", pa.bool_()),
            ("status", pa.string()),
            ("date_of_birth", pa.date32()),
            ("created_at", pa.timestamp("us")),
        ]
    ),
    "learning.courses": pa.schema(
        [
            ("course_id", pa.int64()),
            ("title", pa.string()),
            ("category", pa.string()),
            ("price_usd", pa.float64()),
            ("published_at", pa.timestamp("us")),
        ]
    ),
    "learning.enrollments": pa.schema(
        [
            ("enrollment_id", pa.int64()),
            ("learner_id", pa.int64()),
            ("course_id", pa.int64()),
            ("enrolled_at", pa.timestamp("us")),
            ("completed_at", pa.timestamp("us")),
        ]
    ),
    "learning.reviews": pa.schema(
        [
            ("review_id", pa.int64()),
            ("course_id", pa.int64()),
            ("learner_id", pa.int64()),
            ("rating", pa.int32()),
            ("body", pa.string()),
            ("created_at", pa.timestamp("us")),
        ]
    ),
    "learning.events": pa.schema(
        [
            ("event_id", pa.int64()),
            ("learner_id", pa.int64()),
            ("course_id", pa.int64()),
            ("event_type", pa.string()),
            ("occurred_at", pa.timestamp("us")),
        ]
    ),
    "billing.payments": pa.schema(
        [
            ("payment_id", pa.int64()),
            ("learner_id", pa.int64()),
            ("course_id", pa.int64()),
            ("amount", pa.float64()),
            ("status", pa.string()),
            ("paid_at", pa.timestamp("us")),
        ]
    ),
    "billing.refunds": pa.schema(
        [
            ("refund_id", pa.int64()),
            ("payment_id", pa.int64()),
            ("amount", pa.float64()),
            ("reason", pa.string()),
            ("refunded_at", pa.timestamp("us")),
        ]
    ),
    "support.tickets": pa.schema(
        [
            ("ticket_id", pa.int64()),
            ("learner_id", pa.int64()),
            ("subject", pa.string()),
            ("body", pa.string()),
            ("status", pa.string()),
            ("opened_at", pa.timestamp("us")),
        ]
    ),
}

# Tables the platform creates empty, for incremental pipelines to append to.
INCREMENTAL_TABLES: dict[str, pa.Schema] = {
    "analytics.daily_revenue": pa.schema([("day", pa.date32()), ("revenue_usd", pa.float64())]),
}

# Tables the platform creates empty, for a MERGE pipeline to upsert into (and an erasure DELETE to erase from).
DIMENSION_TABLES: dict[str, pa.Schema] = {
    "analytics.learner_dim": pa.schema(
        [
            ("learner_id", pa.int64()),
            ("first_seen_at", pa.timestamp("us")),
            ("last_seen_at", pa.timestamp("us")),
            ("events", pa.int64()),
        ]
    ),
}

# The right-to-erasure requests the CRM records: the learners whose data the platform must erase.
REQUEST_TABLES: dict[str, pa.Schema] = {
    "crm.erasure_requests": pa.schema([("learner_id", pa.int64()), ("requested_at", pa.timestamp("us"))]),
}

# Identity partitions of the platform's own tables: a nightly overwrite replaces its day's partition.
PARTITIONED: dict[str, tuple[str, ...]] = {"analytics.daily_revenue": ("day",)}


def lineage_schema(tables: dict[str, pa.Schema] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """Returns `{db: {table: {column: type}}}` for the given tables (default: sources and incremental)."""
    chosen = tables if tables is not None else {**SOURCE_TABLES, **INCREMENTAL_TABLES}
    nested: dict[str, dict[str, dict[str, str]]] = {}
    for identifier, schema in chosen.items():
        db, table = identifier.split(".")
        nested.setdefault(db, {})[table] = {f.name: str(f.type) for f in schema}
    return nested
