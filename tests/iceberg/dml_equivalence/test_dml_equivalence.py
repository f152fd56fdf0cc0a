"""MERGE, UPDATE and DELETE through rewrite_statement against DuckDB on native tables: every layout, seeded
statements each (DML_EQUIVALENCE_STATEMENTS, 30 by default; `make test-dml-equivalence` runs many more), equal
rows, equal counts and no error required."""

from __future__ import annotations

import os

import pytest

from tests.iceberg.dml_equivalence.compare import compare as compare_statement
from tests.iceberg.dml_equivalence.compare import iceberg_rows
from tests.iceberg.dml_equivalence.layouts import BUILDERS
from tests.iceberg.dml_equivalence.statements import KINDS, statements
from tests.iceberg.equivalence.compare import canonical_rows

FAST_STATEMENTS = 30
STATEMENTS = int(os.environ.get("DML_EQUIVALENCE_STATEMENTS", FAST_STATEMENTS))
LAYOUTS = list(BUILDERS)
LEFT_OUT: dict[str, set[int]] = {}
"""Statements left out of the fast slice, by layout (none)."""


@pytest.mark.parametrize("name", LAYOUTS)
def test_the_layout_holds_its_known_rows(built, name):
    layout = built.layout(name)
    assert iceberg_rows(layout) == canonical_rows(list(zip(*layout.rows.to_pydict().values(), strict=True)))


@pytest.mark.parametrize("name", LAYOUTS)
def test_statements_change_what_duckdb_changes_on_a_native_table(built, outcomes, name):
    layout = built.layout(name)
    failed = []
    for statement in statements(STATEMENTS):
        if STATEMENTS == FAST_STATEMENTS and statement.index in LEFT_OUT.get(name, set()):
            continue
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
