"""The layouts, each built once a session in a local SQL catalog of its own, and the summary line of every
statement compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from tests.iceberg.dml_equivalence.compare import Outcome
from tests.iceberg.dml_equivalence.layouts import BUILDERS, Layout

OUTCOMES = pytest.StashKey[list[Outcome]]()


class Built:
    """Each layout, built the first time a test asks for it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._layouts: dict[str, Layout] = {}

    def layout(self, name: str) -> Layout:
        if name not in self._layouts:
            catalog = open_local_catalog(self.folder / name.replace(" ", "-"))
            self._layouts[name] = BUILDERS[name](name, catalog)
        return self._layouts[name]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("dml-equivalence"))


@pytest.fixture(scope="session")
def outcomes(pytestconfig: pytest.Config) -> list[Outcome]:
    """Every comparison of the session, for the summary line."""
    return pytestconfig.stash.setdefault(OUTCOMES, [])


def summary(recorded: list[Outcome]) -> str:
    equal = sum(outcome.equal for outcome in recorded)
    unequal = sum(not outcome.error and not outcome.equal_rows for outcome in recorded)
    counted = sum(not outcome.error and not outcome.equal_counts for outcome in recorded)
    errors = sum(bool(outcome.error) for outcome in recorded)
    refused = sum(bool(outcome.lineage.refused) for outcome in recorded)
    violations = sum(bool(outcome.lineage.violations) for outcome in recorded)
    rewritten = sum(outcome.files_rewritten for outcome in recorded)
    in_table = sum(outcome.files_in_table for outcome in recorded)
    pruned = 1 - rewritten / in_table if in_table else 0.0
    return (
        f"DML_EQUIVALENCE statements={len(recorded)} equal={equal} unequal={unequal} "
        f"count_differences={counted} errors={errors} lineage_refused={refused} lineage_violations={violations} "
        f"files_rewritten={rewritten} files_in_table={in_table} pruning_rate={pruned:.3f}"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    recorded = config.stash.get(OUTCOMES, [])
    if recorded:
        terminalreporter.write_line(summary(recorded))
