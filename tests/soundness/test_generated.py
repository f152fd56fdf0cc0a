"""The soundness oracle on generated DuckDB statements: each is refused with a LineageError or its lineage
holds on DuckDB. SOUNDNESS_EXAMPLES sets how many are tried (150 by default)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from tests.soundness.conftest import EXAMPLES
from tests.soundness.grammar import statement
from tests.support.oracle import DuckDBRejected, check, shared_runner

pytestmark = pytest.mark.reliability


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(statement())
def test_generated_statement_is_refused_or_sound(sql):
    try:
        verdict = check(sql, shared_runner())
    except DuckDBRejected:
        assume(False)
        return
    assert verdict.violations == [], sql
