"""MERGE, UPDATE and DELETE through rewrite_statement against DuckDB on native tables: every layout, seeded
statements each (DML_EQUIVALENCE_STATEMENTS, 30 by default; `make test-dml-equivalence` runs many more), equal
rows, equal counts and no error required."""

from __future__ import annotations

import os

import pytest

from tests.iceberg.dml_equivalence.compare import compare as compare_statement
from tests.iceberg.dml_equivalence.compare import iceberg_rows
from tests.iceberg.dml_equivalence.layouts import BUILDERS, Layout
from tests.iceberg.dml_equivalence.statements import KINDS, Statement, statements
from tests.iceberg.equivalence.compare import canonical_rows

FAST_STATEMENTS = 30
STATEMENTS = int(os.environ.get("DML_EQUIVALENCE_STATEMENTS", FAST_STATEMENTS))
LAYOUTS = list(BUILDERS)


@pytest.mark.parametrize("name", LAYOUTS)
def test_the_layout_holds_its_known_rows(built, name):
    layout = built.layout(name)
    assert iceberg_rows(layout) == canonical_rows(list(zip(*layout.rows.to_pydict().values(), strict=True)))


@pytest.mark.parametrize("name", LAYOUTS)
def test_statements_change_what_duckdb_changes_on_a_native_table(built, outcomes, name):
    layout = built.layout(name)
    failed = []
    for statement in statements(STATEMENTS):
        outcome = compare_statement(layout, statement)
        outcomes.append(outcome)
        if not outcome.equal:
            failed.append(outcome)
    if failed:
        shown = "\n".join(outcome.message() for outcome in failed[:5])
        pytest.fail(f"{len(failed)} of {STATEMENTS} statements differ; the first ones:\n{shown}", pytrace=False)


def test_statements_are_seeded_and_every_kind_is_drawn():
    first = [s.sql for s in statements(40)]
    assert first == [s.sql for s in statements(40)]
    assert first != [s.sql for s in statements(40, seed=1)]
    assert {s.kind for s in statements(FAST_STATEMENTS)} == set(KINDS)


def test_a_table_holding_other_rows_or_counts_is_unequal(built):
    layout = built.layout("one file")
    short = Layout(layout.name, layout.catalog, layout.rows.slice(1), layout.base_snapshot)
    outcome = compare_statement(short, Statement(-1, "delete", "DELETE FROM shop.orders WHERE id = 0"))
    assert (outcome.equal_rows, outcome.equal_counts, outcome.equal) == (True, False, False)
    outcome = compare_statement(short, Statement(-2, "delete", "DELETE FROM shop.orders WHERE id = -1"))
    assert (outcome.equal_rows, outcome.equal_counts, outcome.equal) == (False, True, False)
    outcome = compare_statement(layout, Statement(-3, "update", "UPDATE shop.orders SET qty = qty + 1"))
    assert outcome.rejected and outcome.equal  # INTEGER overflow on qty 2147483647, both ways
