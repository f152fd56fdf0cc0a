"""The installed package knows nothing of the demo platform, and finds no files relative to the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "airflow_lineage_governance"
DEMO_NAMES = (
    ".demo",
    "learning_platform",
    "airflow_lineage_governance.platform",
    "NIGHTLY",
    "2026-10-01",
    "dags/sql",
    "parents[",
)


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_no_module_of_the_package_names(name):
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if name in line
    ]
    assert found == []


def test_the_demo_is_not_in_the_package():
    assert not (PACKAGE / "platform").exists()
    assert not (PACKAGE / "demo.py").exists()
    assert (PACKAGE / "py.typed").is_file()
