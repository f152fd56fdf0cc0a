"""The oracle's acceptance rate over the DuckDB grammar: of the generated statements DuckDB runs, how many the
engine traces (each checked by the oracle), and why it refuses the others.

    PYTHONPATH=.:dags .venv/bin/python -m tests.soundness.acceptance 1000
"""

from __future__ import annotations

import sys
from collections import Counter

import duckdb
from hypothesis import HealthCheck, given, settings

from tests.soundness.grammar import statement
from tests.support.oracle import DuckDBRejected, check, shared_runner


def measure(examples: int) -> tuple[Counter[str], Counter[str], list[str]]:
    """Returns the counts of each outcome, the refusals of statements DuckDB runs by sentence, and violations."""
    outcomes: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    violations: list[str] = []

    @settings(
        max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
    )
    @given(statement())
    def one(sql: str) -> None:
        try:
            verdict = check(sql, shared_runner())
        except DuckDBRejected:
            outcomes["DuckDB rejects the SELECT"] += 1
            return
        if verdict.refused is not None:
            query = sql.split(" as ", 1)[1]
            try:
                shared_runner().connection.execute(f"CREATE OR REPLACE TEMP TABLE acceptance AS {query}")
            except duckdb.Error:
                outcomes["refused, and DuckDB rejects it too"] += 1
                return
            outcomes["refused, though DuckDB runs it"] += 1
            refusals[verdict.refused.problem[:80]] += 1
            return
        outcomes["traced"] += 1
        violations.extend(f"{sql}: {violation}" for violation in verdict.violations)

    one()
    return outcomes, refusals, violations


def main() -> None:
    """Prints the outcomes, the acceptance rate, the commonest refusals and any violation."""
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    outcomes, refusals, violations = measure(examples)
    runs = outcomes["traced"] + outcomes["refused, though DuckDB runs it"]
    for outcome, count in outcomes.most_common():
        print(f"{count:6d}  {outcome}")
    print(
        f"RESULT acceptance traced={outcomes['traced']} duckdb_runs={runs} "
        f"rate={outcomes['traced'] / runs if runs else 0:.3f} violations={len(violations)}"
    )
    for sentence, count in refusals.most_common(10):
        print(f"{count:6d}  {sentence}")
    for violation in violations[:10]:
        print("VIOLATION", violation)


if __name__ == "__main__":
    main()
