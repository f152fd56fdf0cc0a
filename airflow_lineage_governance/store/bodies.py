"""Event bodies kept compressed together.

The JSON of up to `BLOCK` events of a batch, one line each, in one zstd frame (`event_blocks`), each event naming its
block and its line in it.

Events of one history repeat their keys, names and facets, so a frame of many compresses far better than each
event on its own. A store of schema version 2 or older kept each event's JSON zlib-compressed in `events.body`;
those bodies are read as they are.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Sequence
from typing import Any

import zstandard

from airflow_lineage_governance.store.engine import Engine, Row
from airflow_lineage_governance.store.ids import stable_id

BLOCK = 1000
"""How many events' JSON one block holds at most."""
LEVEL = 6
"""The zstd level blocks are written at."""


def pack(bodies: Sequence[bytes]) -> tuple[int, bytes]:
    """Return the id and compressed bytes of the block holding `bodies`, one line each, in order.

    Args:
        bodies: Each event's JSON, holding no newline.

    Returns:
        The block's id (a stable id of its content, so two writers of the same block agree) and its zstd frame.
    """
    joined = b"\n".join(bodies)
    data = zstandard.ZstdCompressor(level=LEVEL).compress(joined)
    return stable_id("block", hashlib.sha256(joined).hexdigest()), data


def blocks(bodies: Sequence[bytes]) -> tuple[list[Row], list[tuple[int, int]]]:
    """Return the `event_blocks` rows holding the bodies, and each body's block id and line.

    Args:
        bodies: Each event's JSON, in the order to keep them.

    Returns:
        The rows (block id, compressed bytes) and, for each body in order, its block id and line number.
    """
    rows: list[Row] = []
    places: list[tuple[int, int]] = []
    for start in range(0, len(bodies), BLOCK):
        chunk = bodies[start : start + BLOCK]
        block_id, data = pack(chunk)
        rows.append((block_id, data))
        places.extend((block_id, line) for line in range(len(chunk)))
    return rows, places


def event_body(engine: Engine, run_id: str, event_type: str, at_us: int) -> bytes | None:
    """Return the JSON of the event stored under the key, as first received, or None when no such event is kept.

    Args:
        engine: The store's engine.
        run_id: The event's run id.
        event_type: Its event type.
        at_us: Its instant, microseconds since the epoch (UTC).

    Returns:
        The event's JSON bytes.
    """
    columns = engine.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'block_id'"
    )
    if not columns:
        found = engine.query(
            "SELECT body FROM events WHERE run_id = ? AND event_type = ? AND at_us = ?", [run_id, event_type, at_us]
        )
        return zlib.decompress(bytes(found[0][0])) if found else None
    found = engine.query(
        "SELECT e.body, b.body, e.block_line FROM events e LEFT JOIN event_blocks b ON b.block_id = "
        "e.block_id WHERE e.run_id = ? AND e.event_type = ? AND e.at_us = ?",
        [run_id, event_type, at_us],
    )
    if not found:
        return None
    own, block, line = found[0]
    return stored_body(own, block, line)


def stored_body(own: Any, block: Any, line: int | None) -> bytes:
    """Return an event's JSON from what the store keeps of it.

    Its own zlib body (a store older than version 3), else its line of its zstd block.

    Args:
        own: The event's `body` column (None when the event is kept in a block).
        block: Its block's `body`.
        line: Its line in the block.

    Returns:
        The event's JSON bytes, as first received.
    """
    if own is not None:
        return zlib.decompress(bytes(own))
    return _lines(bytes(block))[int(line or 0)]


@functools.lru_cache(maxsize=8)
def _lines(block: bytes) -> list[bytes]:
    return zstandard.ZstdDecompressor().decompress(block).split(b"\n")
