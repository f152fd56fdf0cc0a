"""The code version of a statement: a hash of its normalised SQL, the same for the SQL a DAG file renders and for
the `sql` job facet an event carries.

The facet holds the statement redacted (every literal as `?`, no comments, sqlglot's pretty form), so the hash is
taken over that form: `sql_hash(rendered) == sql_hash(redacted_sql(rendered))`. Two statements that differ only in
a literal's value (a date, a status string) have the same hash, as they have the same lineage; whitespace, comments
and keyword case never change it.
"""

from __future__ import annotations

import hashlib
import re

from airflow_lineage_governance.lineage.redact import WITHHELD, redacted_sql
from airflow_lineage_governance.lineage.statement import Statement

PREFIX = "sha256:"
_SPACE = re.compile(r"\s+")


def normalised_sql(sql: Statement | str) -> str:
    """Returns the statement as the hash sees it: redacted and printed by sqlglot (DuckDB dialect), so that a
    rendered statement and the `sql` facet of its event give the same text; a text that does not parse gives
    itself with whitespace collapsed."""
    redacted = redacted_sql(sql)
    if redacted == WITHHELD and isinstance(sql, str):
        return _SPACE.sub(" ", sql).strip()
    return redacted


def sql_hash(sql: Statement | str) -> str:
    """Returns `sha256:<hex>` of the normalised statement (`normalised_sql`): the statement's code version."""
    return PREFIX + hashlib.sha256(normalised_sql(sql).encode()).hexdigest()


def short(hashed: str | None) -> str:
    """Returns the first 12 hex digits of a `sql_hash` for a person to read (`-` for none)."""
    if not hashed:
        return "-"
    return hashed.removeprefix(PREFIX)[:12]
