"""The layouts, built once a session in one local SQL catalog, and the summary line of every comparison made."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from tests.iceberg.equivalence.compare import Outcome
from tests.iceberg.equivalence.layouts import BUILDERS, NAMESPACE, Layout

OUTCOMES = pytest.StashKey[list[Outcome]]()


class Built:
    """The session's catalog, and each layout built in it the first time a test asks for it."""

    def __init__(self, folder: Path) -> None:
        self.catalog: Catalog = open_local_catalog(folder)
        self.catalog.create_namespace(NAMESPACE)
        self._layouts: dict[str, Layout] = {}

    def layout(self, name: str) -> Layout:
        if name not in self._layouts:
            self._layouts[name] = BUILDERS[name](self.catalog)
        return self._layouts[name]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("equivalence"))


@pytest.fixture(scope="session")
def outcomes(pytestconfig: pytest.Config) -> list[Outcome]:
    """Every comparison of the session, for the summary line."""
    return pytestconfig.stash.setdefault(OUTCOMES, [])


def summary(recorded: list[Outcome]) -> str:
    unequal = sum(not outcome.equal_rows for outcome in recorded)
    typed = sum(bool(outcome.type_differences) for outcome in recorded)
    equal = sum(outcome.equal for outcome in recorded)
    return f"EQUIVALENCE queries={len(recorded)} equal={equal} unequal_rows={unequal} type_differences={typed}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    recorded = config.stash.get(OUTCOMES, [])
    if recorded:
        terminalreporter.write_line(summary(recorded))
