"""The project's lineage oracle on each statement of the suite: DuckDB runs it over native copies of `shop.orders`
and `shop.changes`, and perturbing any column its lineage names nowhere must leave the target unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import duckdb

from airflow_lineage_governance.refs import TableRef
from tests.iceberg.dml_equivalence.layouts import CHANGE_COLUMNS, ORDER_COLUMNS, changes, orders
from tests.support.dml_oracle import DmlRunner, check_dml
from tests.support.oracle import DuckDBRejected

SCHEMA = {"shop": {"orders": dict(ORDER_COLUMNS), "changes": dict(CHANGE_COLUMNS)}}


@dataclass(frozen=True)
class LineageVerdict:
    refused: str = ""
    """The lineage engine's sentence when it refused a statement DuckDB runs."""
    violations: tuple[str, ...] = ()

    @property
    def sound(self) -> bool:
        return not self.refused and not self.violations

    def message(self) -> str:
        if self.refused:
            return f"the lineage refused it: {self.refused}"
        return "; ".join(self.violations)


@cache
def _runner() -> DmlRunner:
    return DmlRunner({"shop.orders": orders(), "shop.changes": changes()})


@cache
def lineage_verdict(sql: str) -> LineageVerdict:
    """Returns what the oracle found on the statement (nothing when DuckDB itself refuses it)."""
    runner = _runner()
    try:
        verdict = check_dml(sql, runner, SCHEMA, tagged=False)
    except DuckDBRejected:
        return LineageVerdict()
    if verdict.refused is not None:
        try:
            runner.run(sql, TableRef.parse("shop.orders"))
        except duckdb.Error:
            return LineageVerdict()  # refused by DuckDB too
        return LineageVerdict(str(verdict.refused))
    return LineageVerdict("", tuple(verdict.violations))
