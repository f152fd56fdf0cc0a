"""The Marquez event source's own logic (paging, bounds, retries, error sentences) against a small HTTP server on
loopback that answers as Marquez's `/api/v1/events/lineage` is documented to. This tests our client, not
Marquez (tests/marquez runs a real Marquez on the demo's events)."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.graph.events import read_events
from airflow_lineage_governance.graph.sources import open_event_source
from tests.support.marquez_api import Server, event


@pytest.fixture
def serve():
    servers = []

    def start(*args, **kwargs):
        servers.append(Server(*args, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_reads_every_page_with_bounds(serve):
    server = serve([event(n) for n in range(7)])
    source = open_event_source(
        server.url, page_size=3, after="2026-10-01T00:00:00Z", before="2026-10-02T00:00:00Z", backoff=0.01
    )
    events, report = read_events(source)
    assert [e.run_id for e in events] == [f"r{n}" for n in range(7)]
    assert [q["offset"][0] for q in server.requests] == ["0", "3", "6"]
    assert server.requests[0]["after"] == ["2026-10-01T00:00:00Z"]
    assert server.requests[0]["before"] == ["2026-10-02T00:00:00Z"]


def test_retries_server_errors_then_succeeds(serve):
    server = serve([event(1)], failures=2, status=503)
    events, _ = read_events(open_event_source(server.url, backoff=0.01))
    assert [e.run_id for e in events] == ["r1"] and len(server.requests) == 3


def test_gives_up_after_bounded_retries_with_one_sentence(serve):
    server = serve([event(1)], failures=99, status=500)
    with pytest.raises(EventSourceError) as raised:
        read_events(open_event_source(server.url, attempts=3, backoff=0.01))
    assert str(raised.value) == (
        f"Marquez at {server.url} answered HTTP 500 Internal Server Error when asked for its "
        "lineage events; check that it runs and that the URL is right."
    )
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(serve):
    server = serve([], failures=99, status=404)
    with pytest.raises(EventSourceError, match="answered HTTP 404"):
        read_events(open_event_source(server.url, backoff=0.01))
    assert len(server.requests) == 1


def test_a_server_that_is_down_or_slow_is_one_sentence(serve):
    with pytest.raises(EventSourceError, match=r"Marquez at http://127.0.0.1:9 is unreachable"):
        read_events(open_event_source("http://127.0.0.1:9", attempts=2, backoff=0.01))
    slow = serve([event(1)], delay=1.0)
    with pytest.raises(EventSourceError, match="did not answer within 0.2 s"):
        read_events(open_event_source(slow.url, attempts=1, timeout=0.2))


def test_both_bounds_are_always_sent_the_widest_when_none_is_given(serve):
    server = serve([event(1)])
    read_events(open_event_source(server.url))
    assert server.requests[0]["after"] == ["1970-01-01T00:00:00Z"]
    assert server.requests[0]["before"] == ["9999-12-31T23:59:59Z"]  # Marquez's own default stops at 2030-01-01
