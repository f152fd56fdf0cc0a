"""MERGE, UPDATE and DELETE through rewrite_statement against DuckDB on native tables: every layout, seeded
statements each (DML_EQUIVALENCE_STATEMENTS, 30 by default; `make test-dml-equivalence` runs many more; drawn with
DML_EQUIVALENCE_SEED, 0 by default), equal
rows, equal counts and no error required; and the lineage oracle on each statement: traced (not refused), with
no violation."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from tests.iceberg.dml_equivalence.compare import compare as compare_statement
from tests.iceberg.dml_equivalence.compare import iceberg_rows
from tests.iceberg.dml_equivalence.layouts import BUILDERS, Layout
from tests.iceberg.dml_equivalence.lineage import LineageVerdict, lineage_verdict
from tests.iceberg.dml_equivalence.statements import KINDS, Statement, statements
from tests.iceberg.equivalence.compare import canonical_rows

FAST_STATEMENTS = 30
STATEMENTS = int(os.environ.get("DML_EQUIVALENCE_STATEMENTS", FAST_STATEMENTS))
SEED = int(os.environ.get("DML_EQUIVALENCE_SEED", "0"))
LAYOUTS = list(BUILDERS)


@pytest.mark.parametrize("name", LAYOUTS)
def test_the_layout_holds_its_known_rows(built, name):
    layout = built.layout(name)
    assert iceberg_rows(layout) == canonical_rows(list(zip(*layout.rows.to_pydict().values(), strict=True)))


@pytest.mark.parametrize("name", LAYOUTS)
def test_statements_change_what_duckdb_changes_on_a_native_table(built, outcomes, name):
    layout = built.layout(name)
    failed = []
    for statement in statements(STATEMENTS, SEED):
        outcome = replace(compare_statement(layout, statement), lineage=lineage_verdict(statement.sql))
        outcomes.append(outcome)
        if not outcome.equal or not outcome.lineage.sound:
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


def test_a_statement_whose_lineage_is_refused_or_violated_is_reported(built):
    layout = built.layout("one file")
    statement = Statement(-4, "delete", "DELETE FROM shop.orders WHERE id = 0")
    outcome = replace(compare_statement(layout, statement), lineage=LineageVerdict(refused="refused"))
    assert outcome.equal and not outcome.lineage.sound and "refused" in outcome.message()
    outcome = replace(outcome, lineage=LineageVerdict(violations=("changing shop.orders.id changes the target",)))
    assert not outcome.lineage.sound and "changing shop.orders.id" in outcome.message()
