"""The read path against native DuckDB tables: every layout, seeded queries each (EQUIVALENCE_QUERIES, 8 by
default; `make test-equivalence` runs many more), equal rows and equal column types required."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from tests.iceberg.equivalence.compare import canonical, compare, native_connection, reference_differences
from tests.iceberg.equivalence.layouts import BUILDERS
from tests.iceberg.equivalence.queries import KINDS, queries

FAST_QUERIES = 8
QUERIES = int(os.environ.get("EQUIVALENCE_QUERIES", FAST_QUERIES))
LAYOUTS = list(BUILDERS)


@pytest.mark.parametrize("name", LAYOUTS)
def test_pyiceberg_reads_the_layouts_rows(built, name):
    layout = built.layout(name)
    assert reference_differences(built.catalog, layout) == []


@pytest.mark.parametrize("name", LAYOUTS)
def test_the_read_path_answers_as_a_native_table(built, outcomes, name):
    layout = built.layout(name)
    native = native_connection(layout)
    failed = []
    for query in queries(layout, QUERIES):
        outcome = compare(built.catalog, layout, query.sql, native)
        outcomes.append(outcome)
        if not outcome.equal:
            failed.append((query, outcome))
    if failed:
        query, first = failed[0]
        pytest.fail(
            f"{len(failed)} of {QUERIES} queries differ; the first, query {query.index} ({query.kind}):\n"
            f"{first.message()}",
            pytrace=False,
        )


def test_queries_are_seeded_and_every_kind_is_drawn(built):
    layout = built.layout("unpartitioned")
    first = [query.sql for query in queries(layout, len(KINDS))]
    assert first == [query.sql for query in queries(layout, len(KINDS))]
    assert first != [query.sql for query in queries(layout, len(KINDS), seed=1)]
    assert {query.kind for query in queries(layout, len(KINDS))} == set(KINDS)


def test_rows_compare_as_duckdb_holds_them_equal():
    assert canonical(float("nan")) == canonical(float("-nan")) and canonical(-0.0) == canonical(0.0)
    assert canonical(1.0) != canonical(1) and canonical("true") != canonical(True) and canonical(None) != "'null'"
    east = dt.timezone(dt.timedelta(hours=2))
    assert canonical(dt.datetime(2026, 1, 1, 14, tzinfo=east)) == canonical(dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC))
    assert canonical(dt.datetime(2026, 1, 1, 12)) != canonical(dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC))
    assert canonical({"x": [1.0, None]}) == canonical({"x": [1.0, None]}) != canonical({"x": [None, 1.0]})
