"""Seeds the demo platform's eight source tables into an Iceberg catalog, deterministically for a seed.

PYTHONPATH=dags python -m learning_platform.seed --folder .demo/catalog [--seed 7] [--scale 1.0] [--json]
PYTHONPATH=dags python -m learning_platform.seed --rest-uri http://127.0.0.1:PORT [...]  # a REST catalog
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import pyarrow as pa
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import open_catalog, open_local_catalog
from learning_platform.tables import DIMENSION_TABLES, INCREMENTAL_TABLES, PARTITIONED, REQUEST_TABLES, SOURCE_TABLES

CATALOG_NAME = "platform"
"""The name of the demo's Iceberg catalog, under which its local catalog keeps the tables."""
EPOCH = datetime(2024, 1, 1)
DAYS = 1010  # from 2024-01-01 to a week past the demo's nightly date, 2026-10-01
FIRST = [
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "Ken",
    "Margaret",
    "Tim",
    "Radia",
    "Linus",
    "Katherine",
    "John",
    "Sophie",
    "Yusuf",
    "Amara",
    "Chen",
    "Priya",
    "Lars",
    "Ines",  # codespell:ignore
    "Mateo",
]
LAST = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Thompson",
    "Hamilton",
    "Berners-Lee",
    "Perlman",
    "Torvalds",
    "Johnson",
    "Backus",
    "Wilson",
    "Okafor",
    "Nakamura",
    "Rossi",
]
COUNTRIES = ["DE", "FR", "GB", "US", "IN", "BR", "NG", "JP", "ES", "NL", "SE", "PL"]
CATEGORIES = ["data", "cloud", "security", "design", "management", "marketing", "finance", "languages"]
TOPICS = [
    "SQL",
    "Python",
    "Kubernetes",
    "Threat modelling",
    "Figma",
    "Agile",
    "SEO",
    "Accounting",
    "Spanish",
    "Statistics",
    "Airflow",
    "Leadership",
    "Negotiation",
    "Rust",
    "Excel",
]
EVENT_TYPES = ["lesson_started", "lesson_completed", "quiz_passed", "video_watched", "forum_post"]
PRAISE = [
    "Clear and practical.",
    "Too fast in the middle.",
    "Exactly what my team needed.",
    "The exercises were the best part.",
    "Outdated examples.",
    "Great instructor.",
]


@dataclass(frozen=True)
class PlatformSize:
    """Row counts of the source tables for a scale factor."""

    learners: int
    courses: int
    enrollments: int
    reviews: int
    events: int
    payments: int
    refunds: int
    tickets: int

    @classmethod
    def at(cls, scale: float) -> PlatformSize:
        """Returns the sizes at `scale` (1.0: 3,000 learners, 3,000 reviews, 30,000 events)."""
        n = lambda base: max(1, int(base * scale))  # noqa: E731
        return cls(
            learners=n(3000),
            courses=max(8, n(60)),
            enrollments=n(9000),
            reviews=n(3000),
            events=n(30000),
            payments=n(8000),
            refunds=n(400),
            tickets=n(600),
        )


def _at(rng: random.Random, start_day: int = 0, days: int = DAYS) -> datetime:
    return EPOCH + timedelta(days=rng.randrange(start_day, start_day + days), seconds=rng.randrange(86400))


def generate(seed: int = 7, scale: float = 1.0) -> dict[str, pa.Table]:
    """Returns the eight source tables as Arrow tables; the same seed and scale give the same rows."""
    rng = random.Random(seed)
    size = PlatformSize.at(scale)
    learners = []
    for i in range(1, size.learners + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        learners.append(
            (
                i,
                f"{first} {last}",
                f"{first}.{last}{i}@example.com".lower(),
                rng.choice(COUNTRIES),
                rng.random() < 0.62,
                "active" if rng.random() < 0.85 else rng.choice(["paused", "closed"]),
                date(1960, 1, 1) + timedelta(days=rng.randrange(16000)),
                _at(rng, 0, 500),
            )
        )
    courses = [
        (
            i,
            f"{rng.choice(TOPICS)} {rng.choice(['Essentials', 'in Practice', 'Deep Dive', 'for Teams'])}",
            CATEGORIES[i % len(CATEGORIES)],
            float(rng.choice([29, 49, 99, 149, 299])),
            _at(rng, 0, 200),
        )
        for i in range(1, size.courses + 1)
    ]
    enrollments = []
    for i in range(1, size.enrollments + 1):
        enrolled = _at(rng)
        done = enrolled + timedelta(days=rng.randrange(3, 90)) if rng.random() < 0.45 else None
        enrollments.append((i, rng.randint(1, size.learners), rng.randint(1, size.courses), enrolled, done))
    reviews = []
    for i in range(1, size.reviews + 1):
        learner = learners[rng.randrange(size.learners)]
        body = rng.choice(PRAISE)
        if rng.random() < 0.08:  # free text carries personal data, as real reviews do
            body += rng.choice([f" Contact me at {learner[2]}.", f" - {learner[1]}"])
        reviews.append((i, rng.randint(1, size.courses), learner[0], rng.randint(1, 5), body, _at(rng)))
    events = [
        (i, rng.randint(1, size.learners), rng.randint(1, size.courses), rng.choice(EVENT_TYPES), _at(rng))
        for i in range(1, size.events + 1)
    ]
    payments = [
        (
            i,
            rng.randint(1, size.learners),
            rng.randint(1, size.courses),
            float(rng.choice([29, 49, 99, 149])),
            "succeeded" if rng.random() < 0.9 else rng.choice(["failed", "refunded"]),
            _at(rng),
        )
        for i in range(1, size.payments + 1)
    ]
    refunds = [
        (
            i,
            rng.randint(1, size.payments),
            float(rng.choice([29, 49])),
            rng.choice(["not as described", "duplicate", "changed mind"]),
            _at(rng),
        )
        for i in range(1, size.refunds + 1)
    ]
    tickets = [
        (
            i,
            rng.randint(1, size.learners),
            rng.choice(["Login", "Invoice", "Certificate", "Video"]),
            rng.choice(["Cannot log in.", "Please resend my invoice.", "Video does not play."]),
            rng.choice(["open", "closed"]),
            _at(rng),
        )
        for i in range(1, size.tickets + 1)
    ]
    rows = {
        "crm.learners": learners,
        "learning.courses": courses,
        "learning.enrollments": enrollments,
        "learning.reviews": reviews,
        "learning.events": events,
        "billing.payments": payments,
        "billing.refunds": refunds,
        "support.tickets": tickets,
    }
    return {name: _table(SOURCE_TABLES[name], data) for name, data in rows.items()}


def _table(schema: pa.Schema, rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.table([pa.array(values, type=f.type) for values, f in zip(columns, schema, strict=True)], schema=schema)


NIGHTLY_DAY = date(2026, 10, 1)
ERASURE_REQUESTS = 3


def erasure_requests(events: pa.Table) -> pa.Table:
    """Returns the CRM's erasure requests: the first learners (in event order) active on the demo's nightly day,
    so that the nightly erasure has rows to erase from the learner dimension."""
    learners: list[int] = []
    for learner, occurred in zip(
        events.column("learner_id").to_pylist(), events.column("occurred_at").to_pylist(), strict=True
    ):
        if occurred.date() == NIGHTLY_DAY and learner not in learners:
            learners.append(learner)
        if len(learners) == ERASURE_REQUESTS:
            break
    requested = [datetime(2026, 9, 30, 9 + i) for i in range(len(learners))]
    return pa.table(
        [pa.array(learners, pa.int64()), pa.array(requested, pa.timestamp("us"))],
        schema=REQUEST_TABLES["crm.erasure_requests"],
    )


def _replace(catalog: Catalog, name: str, table: pa.Table) -> None:
    catalog.create_namespace_if_not_exists(name.split(".")[0])
    if catalog.table_exists(name):
        catalog.drop_table(name)
    catalog.create_table(name, schema=table.schema).append(table)


def _partitioned(catalog: Catalog, name: str) -> None:
    """Gives the table the identity partitions PARTITIONED names, when it has no partition spec yet."""
    table = catalog.load_table(name)
    if PARTITIONED.get(name) and table.spec().is_unpartitioned():
        with table.update_spec() as update:
            for column in PARTITIONED[name]:
                update.add_identity(column)


def seed_platform(catalog: Catalog, seed: int = 7, scale: float = 1.0) -> dict[str, int]:
    """Replaces the platform's source tables (and the CRM's erasure requests) in `catalog` with freshly generated
    rows, creates the empty incremental and dimension tables when missing (daily revenue partitioned by day), and
    returns each source table's row count."""
    counts = {}
    generated = generate(seed, scale)
    for name, table in generated.items():
        _replace(catalog, name, table)
        counts[name] = table.num_rows
    _replace(catalog, "crm.erasure_requests", erasure_requests(generated["learning.events"]))
    for name, schema in {**INCREMENTAL_TABLES, **DIMENSION_TABLES}.items():
        catalog.create_namespace_if_not_exists(name.split(".")[0])
        if not catalog.table_exists(name):
            catalog.create_table(name, schema=schema)
        _partitioned(catalog, name)
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    """Seeds the platform into the local catalog folder of `--folder`, or the REST catalog at `--rest-uri`;
    returns the exit code (2 for a bad scale)."""
    parser = argparse.ArgumentParser(prog="python -m learning_platform.seed", description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default=".demo/catalog", help="the local catalog folder (default: .demo/catalog)")
    parser.add_argument("--rest-uri", help="seed the Iceberg REST catalog at this URI instead of --folder")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--json", action="store_true", help="print the row counts as JSON")
    args = parser.parse_args(argv)
    if not args.scale > 0:
        print(f"learning_platform.seed: --scale must be above 0, not {args.scale}.", file=sys.stderr)
        return 2
    catalog = (
        open_catalog(CATALOG_NAME, {"type": "rest", "uri": args.rest_uri})
        if args.rest_uri
        else open_local_catalog(args.folder, CATALOG_NAME)
    )
    counts = seed_platform(catalog, seed=args.seed, scale=args.scale)
    if args.json:
        print(json.dumps(counts, indent=2))
    else:
        for name, rows in counts.items():
            print(f"{name}: {rows:,} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
