"""A Marquez that misbehaves cannot hold or crash the reader: one that omits `totalCount` and
pages forever, drips one byte a second, nests JSON 100,000 deep, sends a huge page or redirects to another
scheme is stopped by a bounded page count, an overall deadline and a size cap, each with one sentence. Each
case is a small HTTP server on loopback answering as such a server would."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import read_events
from airflow_lineage_governance.graph.sources import open_event_source
from tests.support.marquez_api import event


class Hostile:
    """A loopback server whose every GET is answered by `answer(handler)`."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                outer.requests += 1
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def hostile():
    servers: list[Hostile] = []

    def start(answer):
        servers.append(Hostile(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def send(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200, **headers: str) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_a_server_that_omits_the_total_and_pages_forever_is_stopped_by_the_page_bound(hostile):
    server = hostile(lambda h: send(h, json.dumps({"events": [event(1), event(2)]}).encode()))
    with pytest.raises(EventSourceError) as raised:
        read_events(open_event_source(server.url, max_pages=5))
    assert str(raised.value) == (
        f"Marquez at {server.url} sent more than 5 pages of 500 events when asked for its "
        "lineage events; narrow the window (--since/--until) or raise max_pages."
    )
    assert server.requests == 5


def test_a_server_that_drips_one_byte_a_second_is_stopped_by_the_deadline(hostile):
    def drip(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(1000):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.25)

    server = hostile(drip)
    started = time.monotonic()
    with pytest.raises(
        EventSourceError,
        match=r"did not send every page within 1.5 s when asked for its lineage "
        r"events; narrow the window",
    ):
        read_events(open_event_source(server.url, deadline=1.5, timeout=1.0))
    assert time.monotonic() - started < 4


def test_json_nested_100000_deep_is_not_json(hostile):
    server = hostile(lambda h: send(h, b"[" * 100_000 + b"]" * 100_000))
    with pytest.raises(EventSourceError, match="answered with something that is not JSON"):
        read_events(open_event_source(server.url))
    assert server.requests == 1


def test_a_page_past_the_size_cap_ends_the_read(hostile):
    server = hostile(lambda h: send(h, json.dumps({"events": [event(n % 60) for n in range(2000)]}).encode()))
    with pytest.raises(EventSourceError, match="sent a page larger than 10,000 bytes"):
        read_events(open_event_source(server.url, max_page_bytes=10_000))


@pytest.mark.parametrize("target", ["ftp://127.0.0.1/events", "file:///etc/hostname", "https://127.0.0.1:1/x"])
def test_a_redirect_to_another_scheme_is_refused(hostile, target):
    server = hostile(lambda h: send(h, b"", status=302, Location=target))
    with pytest.raises(EventSourceError, match=r"redirected to another scheme \((ftp|file|https):\)"):
        read_events(open_event_source(server.url))
    assert server.requests == 1


def test_a_redirect_on_the_same_scheme_is_followed(hostile):
    def answer(handler):
        if handler.path.startswith("/moved"):
            send(handler, json.dumps({"events": [event(1)], "totalCount": 1}).encode())
        else:
            send(handler, b"", status=302, Location="/moved" + handler.path)

    server = hostile(answer)
    events, _ = read_events(open_event_source(server.url))
    assert [e.run_id for e in events] == ["r1"]


def test_a_page_that_is_not_an_object_is_one_sentence(hostile):
    server = hostile(lambda h: send(h, b"[1, 2]"))
    with pytest.raises(EventSourceError, match="answered with JSON that is not an object"):
        read_events(open_event_source(server.url))
