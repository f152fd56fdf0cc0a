"""The Airflow asset an IcebergSqlOperator task writes, declared when the DAG file is parsed.

Its target table is read from the statement's text with one regular expression (no SQL parser, so parsing a DAG stays
cheap), or taken from the operator's `target=` argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.refs import TableRef

if TYPE_CHECKING:
    from airflow.sdk import Asset

_COMMENTS = re.compile(r"\s*(--[^\n]*(\n|$)|/\*.*?\*/)", re.S)
_TARGET = re.compile(
    r"(?:CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?|INSERT\s+INTO\s+|"
    r"MERGE\s+INTO\s+|UPDATE\s+|DELETE\s+FROM\s+)([\w.\"`]+)",
    re.I,
)


def target_in_text(sql: str) -> TableRef | None:
    """Return the table a CREATE TABLE … AS, INSERT INTO, MERGE INTO, UPDATE or DELETE FROM statement names first.

    First after its leading comments; None when the text names none or the name is templated or not a namespaced table.
    """
    body = sql
    while match := _COMMENTS.match(body):
        body = body[match.end() :]
    found = _TARGET.match(body.lstrip())
    if not found:
        return None
    try:
        return TableRef.parse(found.group(1).replace('"', "").replace("`", "").lower())
    except InvalidNameError:
        return None


def statement_text(sql: str, template_ext: Iterable[str], folders: Iterable[str | Path]) -> str | None:
    """Return the statement's text.

    `sql` itself, or, when `sql` names a template file, that file's text as found first in `folders`; None when the file
    is in none of them.
    """
    if not sql.endswith(tuple(template_ext)):
        return sql
    for folder in folders:
        path = Path(folder) / sql
        if path.is_file():
            return path.read_text()
    return None


def template_folders(dag: Any) -> list[str | Path]:
    """Return where Airflow looks for a DAG's template files: its template_searchpath, then its own folder."""
    if dag is None:
        return []
    searchpath = dag.template_searchpath or []
    folders: list[str | Path] = [searchpath] if isinstance(searchpath, str) else list(searchpath)
    if getattr(dag, "fileloc", None):
        folders.append(Path(dag.fileloc).parent)
    return folders


def asset_uri(namespace: str, table: TableRef) -> str:
    """Return the asset URI of a table.

    `<lineage namespace>/<namespace levels…>/<table>`, e.g. `iceberg://lake/marketing/audience`.
    """
    return "/".join((namespace.rstrip("/"), *table.namespace, table.name))


def table_asset(namespace: str, table: TableRef) -> Asset:
    """Return the Airflow asset of the table, named by its URI."""
    from airflow.sdk import Asset

    uri = asset_uri(namespace, table)
    return Asset(uri=uri, name=uri, group="iceberg")


def declared_target(sql: str, target: str | None, template_ext: Iterable[str], dag: Any) -> TableRef | None:
    """Return the table an operator declares it writes.

    `target` when given, else the one its statement's text (or .sql file in the DAG's template folders) names; None when
    neither says. Raises InvalidNameError for a `target` that is not `namespace.table`.
    """
    if target is not None:
        return TableRef.parse(target)
    text = statement_text(sql, template_ext, template_folders(dag)) if isinstance(sql, str) else None
    return target_in_text(text) if text else None
