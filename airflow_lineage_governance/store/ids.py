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
