"""The event source a location names: a Marquez server for an `http(s)://` URL, else a JSON Lines file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_lineage_governance.graph.events import EventSource, FileEventSource
from airflow_lineage_governance.graph.marquez import MarquezEventSource


def open_event_source(spec: str | Path, **options: Any) -> EventSource:
    """Return the source `spec` names: an `http(s)://` URL is a Marquez server, anything else a JSONL file."""
    text = str(spec)
    if text.startswith(("http://", "https://")):
        return MarquezEventSource(text, **options)
    return FileEventSource(text)
