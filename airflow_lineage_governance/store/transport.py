"""An OpenLineage transport that writes each event into the lineage store as it is emitted."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attr
from openlineage.client.serde import Serde
from openlineage.client.transport.transport import Config, Transport

from airflow_lineage_governance.graph.events import ReadReport
from airflow_lineage_governance.store.errors import StoreBusyError, StoreError
from airflow_lineage_governance.store.ingest import IngestReport
from airflow_lineage_governance.store.lineage_store import LineageStore

if TYPE_CHECKING:
    from openlineage.client.client import Event

DEFAULT_WAIT_SECONDS = 30.0


class EmittedEvents:
    """The events one emit hands over, as an event source for the store's ingest."""

    def __init__(self, events: list[Any], description: str) -> None:
        self.events, self.description = events, description

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yield each event as the JSON the OpenLineage client would send."""
        yield from self.events


@attr.define
class StoreTransportConfig(Config):
    """Where the store transport writes: `store` and how long it waits for a DuckDB file another process has open."""

    store: str
    wait_seconds: float = DEFAULT_WAIT_SECONDS

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> StoreTransportConfig:
        """Return the configuration of the transport's `store` and `wait_seconds` keys.

        Args:
            params: The transport's settings from the OpenLineage configuration.

        Returns:
            The configuration.

        Raises:
            StoreError: `store` is missing or empty, or `wait_seconds` is not a number of seconds.
        """
        store = str(params.get("store") or "").strip()
        if not store:
            raise StoreError(
                "the lineage store transport needs `store`: the path of the lineage store's DuckDB file or a "
                "postgresql:// URL"
            )
        try:
            wait_seconds = float(params.get("wait_seconds", DEFAULT_WAIT_SECONDS))
        except (TypeError, ValueError):
            raise StoreError("the lineage store transport's `wait_seconds` must be a number of seconds") from None
        if not wait_seconds >= 0:
            raise StoreError("the lineage store transport's `wait_seconds` must be a number of seconds")
        return cls(store=store, wait_seconds=wait_seconds)


class StoreTransport(Transport):
    """Write each emitted event into the lineage store, once, before `emit` returns.

    The store is opened for each event and closed after it, so that other processes (the CLI, the nightly DAG, other
    workers) can open a DuckDB file in between; a DuckDB file another process has open is waited for, up to the
    configuration's `wait_seconds`. On PostgreSQL many processes write at once.
    """

    kind = "lineage_store"
    config_class = StoreTransportConfig

    def __init__(self, config: StoreTransportConfig) -> None:
        self.config = config

    def emit(self, event: Event) -> IngestReport:
        """Store `event` (ingest keeps one copy of an event delivered twice) and return what was stored.

        Args:
            event: An OpenLineage event.

        Returns:
            The ingest's counts.

        Raises:
            StoreError: The store cannot be opened or written (a DuckDB file still busy after `wait_seconds`).
        """
        source = EmittedEvents([Serde.to_dict(event)], "the OpenLineage lineage store transport")
        deadline = time.monotonic() + self.config.wait_seconds
        pause = 0.02
        while True:
            try:
                with LineageStore.open(self.config.store, create=True) as store:
                    return store.ingest(source)
            except StoreBusyError:
                if time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, 1.0)
