"""A small HTTP server on loopback that answers as Marquez's `/api/v1/events/lineage` is documented to, and the
events it serves: for the tests of the Marquez event source, not of Marquez (`marquez_server.py` runs a real one)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def event(number: int) -> dict:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-10-01T02:{number:02d}:00Z",
        "run": {"runId": f"r{number}"},
        "job": {"namespace": "platform", "name": f"dag.t{number}"},
        "inputs": [],
        "outputs": [],
    }


class Server:
    def __init__(self, events: list[dict], failures: int = 0, status: int = 500, delay: float = 0.0):
        self.events, self.failures, self.status, self.delay, self.requests = events, failures, status, delay, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                query = parse_qs(urlparse(self.path).query)
                outer.requests.append(query)
                time.sleep(outer.delay)
                if outer.failures > 0:
                    outer.failures -= 1
                    self.send_response(outer.status)
                    self.end_headers()
                    return
                offset, limit = int(query["offset"][0]), int(query["limit"][0])
                body = json.dumps({"events": outer.events[offset : offset + limit], "totalCount": len(outer.events)})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.handle_error = lambda request, address: None  # a client that timed out closed its end
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
