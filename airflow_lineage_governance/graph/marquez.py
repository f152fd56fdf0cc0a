"""Events from a Marquez server: `GET /api/v1/events/lineage`, page by page, with bounded retries.

Every request names both time bounds (`after`, `before`): Marquez's own default `before` is 2030-01-01, and an
event dated past it would be accepted and never read back. A server that misbehaves cannot hold the reader:
the pages read are bounded (a server that omits `totalCount` and pages forever), so is the whole read's time
(a server that drips one byte a second) and each page's size, JSON nested too deep is not JSON, and a redirect
to another scheme is refused; each ends the read with one sentence.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import IO, Any

import orjson

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import ReadReport

EARLIEST = "1970-01-01T00:00:00Z"
"""The `after` bound sent when none is given."""
LATEST = "9999-12-31T23:59:59Z"
"""The `before` bound sent when none is given: far past Marquez's own default (2030-01-01), sent explicitly."""
CHUNK = 64 * 1024


class _SameScheme(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the scheme the request used (an http URL never lands on ftp: or file:)."""

    def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: Any) -> Any:
        target = headers.get("location") or headers.get("uri") or ""
        given = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, target)).scheme
        if given != urllib.parse.urlsplit(req.full_url).scheme:
            raise _Refused(f"redirected to another scheme ({given or 'none'}:)")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


class _Refused(Exception):
    """A request the client ends itself; the message completes the source's sentence."""


class MarquezEventSource:
    """Run events stored by a Marquez server, oldest first, between `after` and `before`.

    Both are ISO 8601 times, always sent: the widest window when not given.

    :param timeout: seconds one socket operation may wait.
    :param attempts: tries per page (server errors and timeouts are retried with backoff).
    :param max_pages: pages read at most; past them the read ends (narrow the window).
    :param deadline: seconds the whole read may take, retries included.
    :param max_page_bytes: bytes one page may hold.
    """

    def __init__(
        self,
        url: str,
        *,
        after: str | None = None,
        before: str | None = None,
        page_size: int = 500,
        timeout: float = 10.0,
        attempts: int = 4,
        backoff: float = 0.5,
        max_pages: int = 2000,
        deadline: float = 600.0,
        max_page_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.base = url.rstrip("/")
        self.description = self.base
        self.after, self.before = after or EARLIEST, before or LATEST
        self.page_size, self.timeout, self.attempts, self.backoff = page_size, timeout, attempts, backoff
        self.max_pages, self.deadline, self.max_page_bytes = max_pages, deadline, max_page_bytes
        self._opener = urllib.request.build_opener(_SameScheme())
        self._ends = 0.0

    def _fail(self, problem: str, advice: str = "check that it runs and that the URL is right") -> EventSourceError:
        return EventSourceError(f"Marquez at {self.base} {problem} when asked for its lineage events; {advice}")

    def _remaining(self) -> float:
        left = self._ends - time.monotonic()
        if left <= 0:
            raise self._fail(
                f"did not send every page within {self.deadline:g} s",
                "narrow the window (--since/--until) or check the server's health",
            )
        return left

    def _body(self, url: str) -> bytes:
        """Return the answer's bytes, read in chunks against the deadline and the size cap."""
        with self._opener.open(url, timeout=min(self.timeout, self._remaining())) as response:
            chunks: list[bytes] = []
            size = 0
            while True:
                self._remaining()
                chunk = response.read1(CHUNK) if hasattr(response, "read1") else response.read(CHUNK)
                if not chunk:
                    return b"".join(chunks)
                size += len(chunk)
                if size > self.max_page_bytes:
                    raise _Refused(f"sent a page larger than {self.max_page_bytes:,} bytes")
                chunks.append(chunk)

    def _page(self, offset: int) -> dict[str, Any]:
        query = {
            "limit": self.page_size,
            "offset": offset,
            "sortDirection": "asc",
            "after": self.after,
            "before": self.before,
        }
        url = f"{self.base}/api/v1/events/lineage?{urllib.parse.urlencode(query)}"
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                page = orjson.loads(self._body(url))  # orjson refuses JSON nested past 1,024 levels
            except urllib.error.HTTPError as error:
                problem = f"answered HTTP {error.code} {error.reason}"
                if error.code < 500:
                    break
            except _Refused as error:
                problem = str(error)
                break
            except (urllib.error.URLError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                if isinstance(reason, _Refused):
                    problem = str(reason)
                    break
                problem = f"is unreachable ({reason})"
            except TimeoutError:
                problem = f"did not answer within {self.timeout:g} s"
            except (orjson.JSONDecodeError, RecursionError):
                problem = "answered with something that is not JSON (or JSON nested too deep)"
                break
            else:
                if not isinstance(page, dict):
                    problem = "answered with JSON that is not an object"
                    break
                return page
            if attempt < self.attempts:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), self._remaining()))
        raise self._fail(problem)

    def raw_events(self, report: ReadReport) -> Iterator[Any]:
        """Yield every event of every page, oldest first.

        Raises EventSourceError when a page cannot be had, or the read passes its page bound, its deadline or a page its
        size cap.
        """
        self._ends = time.monotonic() + self.deadline
        offset = 0
        for _ in range(self.max_pages):
            page = self._page(offset)
            events = page.get("events")
            if not isinstance(events, list):
                raise self._fail("answered without an events list")
            for event in events:
                report.lines += 1
                yield event
            offset += len(events)
            total = page.get("totalCount")
            if not events or (type(total) is int and offset >= total):
                return
        raise self._fail(
            f"sent more than {self.max_pages:,} pages of {self.page_size} events",
            "narrow the window (--since/--until) or raise max_pages",
        )
