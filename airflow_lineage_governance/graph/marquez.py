"""Events from a Marquez server: `GET /api/v1/events/lineage`, page by page, with bounded retries."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import ReadReport


class MarquezEventSource:
    """Run events stored by a Marquez server, oldest first, between optional `after`/`before` bounds."""

    def __init__(self, url: str, *, after: str | None = None, before: str | None = None, page_size: int = 500,
                 timeout: float = 10.0, attempts: int = 4, backoff: float = 0.5) -> None:
        self.base = url.rstrip("/")
        self.description = self.base
        self.after, self.before = after, before
        self.page_size, self.timeout, self.attempts, self.backoff = page_size, timeout, attempts, backoff

    def _page(self, offset: int) -> dict[str, Any]:
        query = {"limit": self.page_size, "offset": offset, "sortDirection": "asc"}
        if self.after:
            query["after"] = self.after
        if self.before:
            query["before"] = self.before
        url = f"{self.base}/api/v1/events/lineage?{urllib.parse.urlencode(query)}"
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                with urllib.request.urlopen(url, timeout=self.timeout) as response:
                    page: dict[str, Any] = json.loads(response.read())
                    return page
            except urllib.error.HTTPError as error:
                problem = f"answered HTTP {error.code} {error.reason}"
                if error.code < 500:
                    break
            except (urllib.error.URLError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                problem = f"is unreachable ({reason})"
            except TimeoutError:
                problem = f"did not answer within {self.timeout:g} s"
            except ValueError:
                problem = "answered with something that is not JSON"
                break
            if attempt < self.attempts:
                time.sleep(self.backoff * 2 ** (attempt - 1))
        raise EventSourceError(f"Marquez at {self.base} {problem} when asked for its lineage events; "
                               "check that it runs and that the URL is right")

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yields every event of every page, oldest first; raises EventSourceError when a page cannot be had."""
        offset = 0
        while True:
            page = self._page(offset)
            events = page.get("events") if isinstance(page, dict) else None
            if not isinstance(events, list):
                raise EventSourceError(f"Marquez at {self.base} answered without an events list")
            for event in events:
                report.lines += 1
                yield event
            offset += len(events)
            total = page.get("totalCount")
            if not events or (isinstance(total, int) and offset >= total):
                return
