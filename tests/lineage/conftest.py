from __future__ import annotations

import pytest

from learning_platform.tables import lineage_schema


@pytest.fixture(scope="session")
def schema() -> dict:
    return lineage_schema()
