"""`lineage-governance store sync` of an events file on both engines: the counts a person reads, the second sync adding
nothing, the watermark kept in the store, and a source that cannot be read leaving the store as it was."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.errors import EventSourceError
from airflow_lineage_governance.refs import ColumnRef
from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.migrations import migrate
from airflow_lineage_governance.store.sync import source_key, sync, watermark
from tests.support.events import complete, event, output, write
from tests.support.marquez_api import Server

EVENTS = [
    event("START", "dag.a", run="r1", time="2026-10-01T02:00:00Z"),
    complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="r1", time="2026-10-01T02:05:00Z"),
    complete("dag.b", output("out.u", {"y": ["out.t.x"]}), run="r2", time="2026-10-01T03:00:00Z"),
]


def test_a_file_is_synced_once_and_its_counts_are_told(store_location, tmp_path, capsys):
    path = write(tmp_path / "events.jsonl", [*EVENTS, EVENTS[1]])
    with path.open("a") as handle:
        handle.write("not json\n")
    assert main(["store", "init", "--store", store_location]) == 0
    capsys.readouterr()
    assert main(["store", "sync", str(tmp_path), "--store", store_location]) == 0
    assert capsys.readouterr().out == (
        f"{path}: 5 read, 3 added, 1 already in the store, 1 malformed; watermark 2026-10-01T03:00:00Z\n"
    )
    size = path.stat().st_size
    assert main(["store", "sync", str(path), "--store", store_location, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)  # the file is read from where the first sync stopped: its end
    assert {k: again[k] for k in ("source", "read", "added", "duplicates", "malformed", "watermark")} == {
        "source": str(path),
        "read": 0,
        "added": 0,
        "duplicates": 0,
        "malformed": 0,
        "watermark": "2026-10-01T03:00:00Z",
    }
    assert (again["read_from_byte"], again["read_to_byte"]) == (size, size)
    assert again["ingest"]["problems"] == []
    with LineageStore.open(store_location, read_only=store_location.endswith(".duckdb")) as store:
        assert store.stats()["rows"]["events"] == 3
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [
            ("crm.learners.email", "out.t.x"),
            ("out.t.x", "out.u.y"),
        ]
        assert watermark(store.engine, str(path)) == (1790823600000000, "2026-10-01T03:00:00Z")


def test_later_events_move_the_watermark_and_an_older_one_never_moves_it_back(store_location, tmp_path):
    path = write(tmp_path / "events.jsonl", EVENTS)
    assert sync(store_location, path, create=True).watermark == "2026-10-01T03:00:00Z"
    late = event("START", "dag.b", run="r2", time="2026-10-01T02:59:00Z")
    write(tmp_path / "events.jsonl", [*EVENTS, late])
    found = sync(store_location, path)  # only the line appended is read
    assert (found.read, found.added, found.duplicates, found.watermark) == (1, 1, 0, "2026-10-01T03:00:00Z")
    later = complete("dag.a", output("out.t", {"x": ["crm.learners.phone"]}), run="r3", time="2026-10-02T02:00:00Z")
    write(tmp_path / "events.jsonl", [*EVENTS, late, later])
    assert sync(store_location, path).watermark == "2026-10-02T02:00:00Z"


def test_a_source_that_cannot_be_read_is_one_sentence_and_writes_nothing(store_location, tmp_path, capsys):
    array = tmp_path / "array.json"
    array.write_text(json.dumps(EVENTS))
    assert main(["store", "init", "--store", store_location]) == 0
    capsys.readouterr()
    assert main(["store", "sync", str(array), "--store", store_location]) == 2
    assert capsys.readouterr().err == (
        f"lineage-governance: {array}: is a JSON array, not JSON Lines; write one event per line, as the OpenLineage "
        "file transport does.\n"
    )
    with pytest.raises(EventSourceError, match=r"^Marquez at http://127\.0\.0\.1:9 is unreachable"):
        sync(store_location, "http://127.0.0.1:9/", attempts=1)
    with LineageStore.open(store_location, read_only=store_location.endswith(".duckdb")) as store:
        assert store.stats()["rows"]["events"] == 0
        assert store.engine.query("SELECT count(*) FROM source_watermarks") == [(0,)]


def test_an_unreachable_marquez_through_the_cli_is_one_sentence_with_a_non_zero_exit(tmp_path, capsys):
    location = str(tmp_path / "lineage-store.duckdb")
    assert main(["store", "init", "--store", location]) == 0
    capsys.readouterr()
    assert main(["store", "sync", "http://127.0.0.1:9", "--store", location]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lineage-governance: Marquez at http://127.0.0.1:9 is unreachable (")
    assert err.endswith("when asked for its lineage events; check that it runs and that the URL is right.\n")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_store_that_is_not_there_is_not_created_by_the_cli(tmp_path, capsys):
    path = write(tmp_path / "events.jsonl", EVENTS)
    location = tmp_path / "nowhere.duckdb"
    assert main(["store", "sync", str(path), "--store", str(location)]) == 2
    assert capsys.readouterr().err == (
        f"lineage-governance: {location}: no lineage store here; create it with `lineage-governance store init`.\n"
    )
    assert not location.exists()


def test_a_source_is_known_by_its_url_or_its_files_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "history").mkdir()
    assert source_key("http://marquez:5000/") == "http://marquez:5000"
    assert source_key("history") == str(tmp_path / "history" / "events.jsonl")


class HalfAnswering(BaseHTTPRequestHandler):
    """Answers the first page of events as Marquez does, then a page that is not JSON."""

    pages = 0

    def do_GET(self) -> None:  # noqa: N802
        type(self).pages += 1
        body = json.dumps({"events": EVENTS[:2], "totalCount": 4}).encode() if self.pages == 1 else b"<html>oops"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_server_failing_after_its_first_page_leaves_the_store_as_it_was(store_location):
    server = ThreadingHTTPServer(("127.0.0.1", 0), HalfAnswering)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(EventSourceError) as failed:
            sync(store_location, url, create=True, page_size=2, attempts=1)
    finally:
        server.shutdown()
        server.server_close()
    assert str(failed.value) == (
        f"Marquez at {url} answered with something that is not JSON (or JSON nested too deep) when asked for its "
        "lineage events; check that it runs and that the URL is right."
    )
    with LineageStore.open(store_location, read_only=store_location.endswith(".duckdb")) as store:
        assert store.stats()["rows"]["events"] == 0
        assert store.engine.query("SELECT count(*) FROM source_watermarks") == [(0,)]


def test_with_no_source_given_or_configured_sync_says_what_to_set(tmp_path, monkeypatch, capsys):
    for name in list(os.environ):
        if name.startswith(("AIRFLOW__LINEAGE_GOVERNANCE__", "LINEAGE_GOVERNANCE_", "AIRFLOW__OPENLINEAGE__")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    location = str(tmp_path / "lineage-store.duckdb")
    assert main(["store", "init", "--store", location]) == 0
    capsys.readouterr()
    assert main(["store", "sync", "--store", location]) == 2
    assert capsys.readouterr().err == (
        "lineage-governance: no event source to sync: give a Marquez URL or an events file, or set "
        "[lineage_governance] events in airflow.cfg or AIRFLOW__LINEAGE_GOVERNANCE__EVENTS.\n"
    )


def stored_keys(location: str) -> list[tuple[str, str]]:
    with LineageStore.open(location, read_only=location.endswith(".duckdb")) as store:
        return sorted(store.engine.query("SELECT run_id, event_type FROM events"))


def line_of(raw: dict) -> bytes:
    return json.dumps(raw).encode() + b"\n"


def test_a_file_appended_to_is_read_from_where_the_last_sync_stopped(store_location, tmp_path, capsys):
    path = write(tmp_path / "events.jsonl", EVENTS[:2])
    first = sync(store_location, path, create=True)
    assert (first.read, first.added, first.read_from_byte, first.read_to_byte) == (2, 2, 0, path.stat().st_size)
    end = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(b"not json\n" + line_of(EVENTS[2]))
    capsys.readouterr()
    assert main(["store", "sync", str(path), "--store", store_location, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["read"], second["added"], second["duplicates"], second["malformed"]) == (2, 1, 0, 1)
    assert second["ingest"]["problems"] == ["line 3: not JSON"]  # numbered as in the file, not from where it started
    assert (second["read_from_byte"], second["read_to_byte"]) == (end, path.stat().st_size)
    assert main(["store", "sync", str(path), "--store", store_location]) == 0
    assert capsys.readouterr().out == (
        f"{path} (read from byte {path.stat().st_size}): 0 read, 0 added, 0 already in the store, 0 malformed; "
        "watermark 2026-10-01T03:00:00Z\n"
    )
    assert stored_keys(store_location) == [("r1", "COMPLETE"), ("r1", "START"), ("r2", "COMPLETE")]


def test_a_half_written_last_line_is_left_for_the_next_sync(store_location, tmp_path):
    path = write(tmp_path / "events.jsonl", EVENTS[:1])
    whole = line_of(EVENTS[1])
    with path.open("ab") as handle:
        handle.write(whole[:40])  # the writer is part way through the event
    found = sync(store_location, path, create=True)
    assert (found.read, found.added, found.malformed) == (1, 1, 0)  # not counted truncated: it is not read yet
    assert found.read_to_byte == len(line_of(EVENTS[0]))
    with path.open("ab") as handle:
        handle.write(whole[40:])
    later = sync(store_location, path)
    assert (later.read, later.added, later.duplicates, later.malformed) == (1, 1, 0, 0)
    assert later.read_from_byte == len(line_of(EVENTS[0])) and later.read_to_byte == path.stat().st_size
    assert stored_keys(store_location) == [("r1", "COMPLETE"), ("r1", "START")]


def test_a_last_line_of_whole_json_without_its_newline_is_read(store_location, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(line_of(EVENTS[0]) + json.dumps(EVENTS[1]).encode())  # written by hand, no newline at the end
    found = sync(store_location, path, create=True)
    assert (found.read, found.added, found.read_to_byte) == (2, 2, path.stat().st_size)
    with path.open("ab") as handle:
        handle.write(b"\n" + line_of(EVENTS[2]))
    later = sync(store_location, path)
    assert (later.read, later.added, later.duplicates, later.malformed) == (1, 1, 0, 0)


def test_a_truncated_or_replaced_file_is_read_again_from_its_start(store_location, tmp_path):
    path = write(tmp_path / "events.jsonl", EVENTS)
    sync(store_location, path, create=True)
    late = event("START", "dag.b", run="r2", time="2026-10-01T02:59:00Z")
    write(path, [late])  # truncated (the same file, shorter than where the last sync stopped), then written again
    truncated = sync(store_location, path)
    assert (truncated.read, truncated.added, truncated.read_from_byte) == (1, 1, 0)
    rotated = tmp_path / "events.jsonl.1"
    path.rename(rotated)  # rotated: a new file of another inode, here longer than the old one
    later = complete("dag.a", output("out.t", {"x": ["crm.learners.phone"]}), run="r3", time="2026-10-02T02:00:00Z")
    write(path, [*EVENTS, later])
    replaced = sync(store_location, path)
    assert (replaced.read, replaced.added, replaced.duplicates, replaced.read_from_byte) == (4, 1, 3, 0)
    assert replaced.watermark == "2026-10-02T02:00:00Z"
    # the same size and inode, but another first line: rewritten in place, read from its start
    first, second = line_of(EVENTS[0]), line_of(EVENTS[1])
    path.write_bytes(first + second)
    sync(store_location, path)
    swapped = event("START", "dag.a", run="r4", time="2026-10-01T02:00:00Z")
    assert len(line_of(swapped)) == len(first)
    path.write_bytes(line_of(swapped) + second)
    rewritten = sync(store_location, path)
    assert (rewritten.read, rewritten.added, rewritten.duplicates, rewritten.read_from_byte) == (2, 1, 1, 0)
    assert stored_keys(store_location) == [
        ("r1", "COMPLETE"),
        ("r1", "START"),
        ("r2", "COMPLETE"),
        ("r2", "START"),
        ("r3", "COMPLETE"),
        ("r4", "START"),
    ]


def test_an_event_delivered_twice_is_stored_once_across_syncs(store_location, tmp_path):
    path = write(tmp_path / "events.jsonl", EVENTS[:2])
    sync(store_location, path, create=True)
    with path.open("ab") as handle:
        handle.write(line_of(EVENTS[1]) + line_of(EVENTS[2]) + line_of(EVENTS[2]))  # delivered again, and twice
    found = sync(store_location, path)
    assert (found.read, found.added, found.duplicates) == (3, 1, 2)
    assert stored_keys(store_location) == [("r1", "COMPLETE"), ("r1", "START"), ("r2", "COMPLETE")]


def test_a_version_5_store_keeps_its_watermark_and_reads_the_file_whole_once(store_location, tmp_path):
    path = write(tmp_path / "events.jsonl", EVENTS[:2])
    engine = open_engine(store_location)
    migrate(engine, target=5)
    engine.execute("INSERT INTO source_watermarks VALUES (?, 1790820300000000, '2026-10-01T02:05:00Z', 0)", [str(path)])
    engine.close()
    with path.open("ab") as handle:
        handle.write(line_of(EVENTS[2]))
    upgraded = sync(store_location, path)  # no place kept yet: the whole file
    assert (upgraded.read, upgraded.added, upgraded.read_from_byte) == (3, 3, 0)
    assert upgraded.watermark == "2026-10-01T03:00:00Z"
    assert sync(store_location, path).read == 0


def nightly(day: int, column: str) -> dict:
    return complete(
        "dag.a", output("out.t", {"x": [f"crm.learners.{column}"]}), run=f"r{day}", time=f"2026-10-{day:02d}T02:00:00Z"
    )


def test_a_second_sync_asks_marquez_only_for_events_after_the_watermark(store_location):
    server = Server([nightly(1, "email")])
    try:
        first = sync(store_location, server.url, create=True)
        assert server.requests[0]["after"] == ["1970-01-01T00:00:00Z"]
        assert (first.added, first.watermark) == (1, "2026-10-01T02:00:00Z")
        server.events, server.requests = [nightly(1, "email"), nightly(2, "full_name")], []  # day 1 again
        second = sync(store_location, server.url)
    finally:
        server.close()
    assert server.requests[0]["after"][0].startswith("2026-10-01T01:00:00")  # the watermark less the overlap
    assert (second.read, second.added, second.duplicates) == (2, 1, 1)  # day 1, read again in the overlap, kept once
    with StoredGovernance.open(store_location) as governance:
        impact = governance.impact("crm.learners.email")
        assert [e.record.event.run_id for e in impact.retired] == ["r1"]
        assert governance.impact("crm.learners.full_name").values == [ColumnRef.parse("out.t.x")]
