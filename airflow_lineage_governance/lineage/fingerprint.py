"""A statement as the `sql` job facet of its run's events carries it.

So the SQL a DAG file renders and the SQL a run reported can be hashed alike (`graph/records.sql_hash` over this
text).

The operator's facet holds the statement redacted: every literal as `?`, no comments, sqlglot's pretty DuckDB form
(`lineage/redact.py`). Rendered SQL turned into that form is the facet's text exactly, and the form is stable (a
facet's text gives itself again). Two statements that differ only in a literal's value (a date, a status string)
have the same form, as they have the same lineage.
"""

from __future__ import annotations

import re

from airflow_lineage_governance.lineage.redact import WITHHELD, redacted_sql
from airflow_lineage_governance.lineage.statement import Statement

_SPACE = re.compile(r"\s+")


def facet_sql(sql: Statement | str) -> str:
    """Return the statement as its run's `sql` job facet carries it: redacted and printed by sqlglot (DuckDB dialect).

    A text that does not parse gives itself with whitespace collapsed (its facet withholds it).
    """
    redacted = redacted_sql(sql)
    if redacted == WITHHELD and isinstance(sql, str):
        return _SPACE.sub(" ", sql).strip()
    return redacted
