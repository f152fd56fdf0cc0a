"""Stable ids of the store's rows.

A 63-bit number hashed from a row's natural key, the same in every process and on both engines, so writers never look an
id up before inserting (a repeated insert is a conflict, ignored).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache


@lru_cache(maxsize=1 << 20)  # a history names the same jobs, tables and columns in event after event
def stable_id(kind: str, *parts: str) -> int:
    """Return the id of the `kind` row whose natural key is `parts` (a positive 63-bit integer).

    Args:
        kind: The row's kind (`job`, `dataset`, `column`, `shape`): ids of two kinds never meet.
        parts: The natural key's parts, in order.

    Returns:
        The first 63 bits of the SHA-256 of the kind and the parts, each written with its length.
    """
    digest = hashlib.sha256()
    for part in (kind, *parts):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def snapshot_key(table_id: int, snapshot: str) -> int:
    """Return the key of a table's snapshot in `snapshot_reads` (a positive 63-bit integer).

    Args:
        table_id: The table's id (`dataset_id`).
        snapshot: The snapshot id, as the event's `version` facet names it.

    Returns:
        The first 63 bits of the MD5 of `<table id>@<snapshot>`, as `SNAPSHOT_KEY` computes it in SQL.
    """
    digest = hashlib.md5(f"{table_id}@{snapshot}".encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFFFFFFFFFFFFFF


def run_key(run_id: str) -> int:
    """Return the key of a run in `events`, `completes` and `run_datasets` (a positive 63-bit integer).

    Args:
        run_id: The run id, as its events name it.

    Returns:
        The first 63 bits of the MD5 of the run id, as `RUN_KEY` computes it in SQL.
    """
    digest = hashlib.md5(run_id.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFFFFFFFFFFFFFF


SNAPSHOT_KEY = {
    "duckdb": "CAST(CAST('0x' || substr(md5(CAST({alias}dataset_id AS TEXT) || '@' || {alias}snapshot), 1, 16) AS "
    "UBIGINT) & 9223372036854775807 AS BIGINT)",
    "postgres": "(('x' || substr(md5(CAST({alias}dataset_id AS TEXT) || '@' || {alias}snapshot), 1, 16))::bit(64)::"
    "bigint & 9223372036854775807)",
}
"""`snapshot_key` in each engine's SQL, of the columns `dataset_id` and `snapshot` (`{alias}` their table's, with its
dot)."""


RUN_KEY = {
    "duckdb": "CAST(CAST('0x' || substr(md5({alias}run_id), 1, 16) AS UBIGINT) & 9223372036854775807 AS BIGINT)",
    "postgres": "(('x' || substr(md5({alias}run_id), 1, 16))::bit(64)::bigint & 9223372036854775807)",
}
"""`run_key` in each engine's SQL, of the column `run_id` (`{alias}` its table's, with its dot)."""
