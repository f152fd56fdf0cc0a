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
import weakref
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import zstandard

from airflow_lineage_governance.store.engine import FEW, Engine, Row
from airflow_lineage_governance.store.ids import run_key, stable_id

BLOCK = 1000
"""How many events' JSON one block holds at most."""
LEVEL = 2
"""The zstd level blocks are written at (6 made blocks 7% smaller, 3.7 times slower: a tenth of an ingest's parsing)."""
MANY = 500
"""How many run ids, or blocks, one query reads the events or blocks of."""


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
    return event_bodies(engine, event_type, [(run_id, at_us)]).get((run_id, at_us))


def event_bodies(engine: Engine, event_type: str, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
    """Return the JSON of each event of the type stored under a key, as first received, a few queries for all.

    The events are read `MANY` run ids a query, and their blocks `MANY` a query (each decompressed once); no more
    than `FEW` blocks are read one look-up each.

    Args:
        engine: The store's engine.
        event_type: The events' type.
        keys: Each event's run id and instant (microseconds since the epoch, UTC).

    Returns:
        By key, the event's JSON bytes; a key no event is kept under is left out.
    """
    wanted = set(keys)
    if not wanted:
        return {}
    runs = sorted({run_key(run_id) for run_id, _ in wanted})  # looked up by key, kept by id
    blocked = keeps_blocks(engine)
    select = (
        "SELECT run_id, at_us, body, block_id, block_line FROM events"
        if blocked
        else "SELECT run_id, at_us, body, NULL, NULL FROM events"
    )
    found: dict[tuple[str, int], bytes] = {}
    lines: dict[int, list[tuple[tuple[str, int], int]]] = defaultdict(list)
    for start in range(0, len(runs), MANY):
        part = runs[start : start + MANY]
        for run_id, at_us, own, block_id, line in engine.query(
            f"{select} WHERE event_type = ? AND run_key IN ({', '.join('?' * len(part))})", [event_type, *part]
        ):
            key = (run_id, at_us)
            if key not in wanted:
                continue
            if own is not None:
                found[key] = stored_body(own, None, None)
            else:
                lines[block_id].append((key, int(line or 0)))
    for block_id, block in read_blocks(engine, sorted(lines)):
        split = _split(bytes(block))
        for key, line in lines[block_id]:
            found[key] = split[line]
    return found


def read_blocks(engine: Engine, ids: list[int]) -> Iterator[tuple[int, Any]]:
    """Yield each block's id and compressed bytes, `MANY` a query (`FEW` or fewer: one look-up each).

    Args:
        engine: The store's engine.
        ids: The blocks' ids.

    Returns:
        An iterator of (block id, the block's zstd frame).
    """
    if len(ids) <= FEW:
        for block_id in ids:
            yield from engine.query("SELECT block_id, body FROM event_blocks WHERE block_id = ?", [block_id])
        return
    for start in range(0, len(ids), MANY):
        part = ids[start : start + MANY]
        yield from engine.query(
            f"SELECT block_id, body FROM event_blocks WHERE block_id IN ({', '.join('?' * len(part))})", part
        )


_BLOCKED: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def keeps_blocks(engine: Engine) -> bool:
    """Return whether the store keeps events' JSON in blocks (schema version 3 and later), asked once per store.

    Only the answer yes is remembered: a store of version 2 may be upgraded while it is open, never downgraded.

    Args:
        engine: The store's engine.

    Returns:
        True when `events` has a `block_id` column.
    """
    if _BLOCKED.get(engine):
        return True
    blocked = bool(
        engine.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'events' "
            "AND column_name = 'block_id'"
        )
    )
    if blocked:
        _BLOCKED[engine] = True
    return blocked


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
    return _split(block)


def _split(block: bytes) -> list[bytes]:
    return zstandard.ZstdDecompressor().decompress(block).split(b"\n")
