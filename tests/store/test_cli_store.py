"""`lineage-governance store init|import|stats|vacuum` on both engines, and the store found through an Airflow
connection of type postgres (`[lineage_governance] store_conn_id`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.store.conftest import ROOT, new_schema
from tests.support.events import complete, event, output, write


def test_init_import_stats_and_vacuum(store_location, tmp_path, capsys):
    folder = tmp_path / "lineage-history"  # the history folder the nightly governance keeps
    folder.mkdir()
    write(
        folder / "events.jsonl",
        [
            complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="r1"),
            event("START", "dag.a", run="r2"),
        ],
    )
    more = tmp_path / "more.jsonl"
    more.write_text((folder / "events.jsonl").read_text() + "not json\n")
    assert main(["store", "stats", "--store", store_location]) == 2
    missing = capsys.readouterr().err
    assert missing.endswith(": no lineage store here; create it with `lineage-governance store init`.\n")
    assert main(["store", "init", "--store", store_location]) == 0
    assert capsys.readouterr().out.endswith(": schema version 20\n")
    assert main(["store", "import", str(folder), str(more), "--store", store_location]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(
        "events.jsonl: 2 read, 2 stored, 0 already in the store; left out: 0 not JSON, "
        "0 truncated, 0 of the wrong shape, 0 of an unknown type"
    )
    assert lines[1].endswith(
        "more.jsonl: 3 read, 0 stored, 2 already in the store; left out: 1 not JSON, "
        "0 truncated, 0 of the wrong shape, 0 of an unknown type"
    )
    assert main(["store", "stats", "--store", store_location, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["schema_version"] == 20 and stats["rows"]["events"] == 2 and stats["rows"]["runs"] == 2
    assert stats["rows"]["column_edges"] == 1 and stats["size_bytes"] > 0
    assert "password" not in json.dumps(stats) and ":" not in stats["store"].split("@")[0].split("//")[-1]
    assert main(["store", "vacuum", "--store", store_location]) == 0
    assert "vacuumed" in capsys.readouterr().out
    assert main(["store", "import", str(tmp_path / "missing"), "--store", store_location]) == 2
    assert capsys.readouterr().err == (
        f"lineage-governance: {tmp_path / 'missing'}: no events file here (give a JSON "
        "Lines file, or a folder holding events.jsonl).\n"
    )


def test_a_missing_store_is_one_sentence_and_is_not_created(tmp_path, capsys):
    location = tmp_path / "nowhere.duckdb"
    assert main(["store", "stats", "--store", str(location)]) == 2
    assert capsys.readouterr().err == (
        f"lineage-governance: {location}: no lineage store here; create it with `lineage-governance store init`.\n"
    )
    assert not location.exists()


def test_the_store_is_found_through_an_airflow_connection(postgres_url, tmp_path):
    url = urlsplit(new_schema(postgres_url))
    connection = {
        "conn_type": "postgres",
        "host": url.hostname,
        "port": url.port,
        "login": url.username,
        "password": url.password,
        "schema": url.path.lstrip("/"),
        "extra": {"options": parse_qs(url.query)["options"][0]},
    }
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW_CONN_LINEAGE_STORE": json.dumps(connection),
        "AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID": "lineage_store",
    }
    events = write(tmp_path / "events.jsonl", [complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}))])
    command = [sys.executable, "-m", "airflow_lineage_governance.cli", "store"]
    outputs = []
    for args in (["init"], ["import", str(events)]):
        done = subprocess.run(command + args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert url.password not in done.stdout + done.stderr
        outputs.append(done.stdout.splitlines()[-1])  # (Airflow may log a line of its own first)
    assert outputs[0] == (
        f"lineage store postgresql://lineage@127.0.0.1:{url.port}/lineage (postgres): schema version 20"
    )
    assert ": 1 read, 1 stored, 0 already in the store;" in outputs[1]
    with LineageStore.open(url.geturl()) as store:
        assert store.stats()["rows"]["events"] == 1
    env["AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID"] = "no_such_connection"
    done = subprocess.run(command + ["stats"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "lineage-governance: the store_conn_id setting names the connection 'no_such_connection', which is not "
        "defined; define it (type postgres) or set [lineage_governance] store."
    )


def test_vacuum_gives_back_what_moving_intervals_on_took_and_answers_the_same(
    engine_kind, store_location, tmp_path, capsys
):
    # Each day's batch moves the open interval of every edge of its 200 jobs on to their new COMPLETE, in place:
    # PostgreSQL keeps the pages the old rows took until `vacuum` writes the table anew.
    days = [datetime(2026, 9, 1, 2, tzinfo=UTC) + timedelta(days=day) for day in range(20)]
    events = [
        complete(
            f"dag.{job}",
            output(f"out.t{job}", {f"c{column}": [f"crm.s{job % 20}.f{column}"] for column in range(10)}),
            run=f"{job}-{day:%j}",
            time=f"{day:%Y-%m-%dT%H:%M:%SZ}",
        )
        for day in days
        for job in range(200)
    ]
    history = write(tmp_path / "events.jsonl", events)
    source = ColumnRef(TableRef(("crm",), "s7"), "f3")
    assert main(["store", "init", "--store", store_location]) == 0
    assert main(["store", "import", str(history), "--batch-size", "200", "--store", store_location]) == 0
    capsys.readouterr()
    with LineageStore.open(store_location) as store:
        before = store.engine.size_bytes()
        edges = store.edges_as_of(days[10])
        impact = store.impact(source, days[15]).to_dict()
    assert len(edges) == 2000 and len(impact["columns_reached"]) == 10
    assert main(["store", "vacuum", "--store", store_location]) == 0
    assert "vacuumed" in capsys.readouterr().out
    with LineageStore.open(store_location) as store:
        after = store.engine.size_bytes()
        assert store.edges_as_of(days[10]) == edges
        assert store.impact(source, days[15]).to_dict() == impact
    if engine_kind == "postgres":
        # the ingest left room on each page for the rows it moved on (on full pages, the store took 2.5 times its
        # size after the vacuum), and the vacuum wrote anew what they still bloated
        assert after < before * 0.9 and before < after * 1.5, (before, after)
    else:  # a DuckDB file is written anew by every vacuum (`COPY FROM DATABASE`), and is no larger for it
        assert after <= before, (before, after)


def test_vacuum_writes_anew_the_indexes_an_ingest_left_part_full_on_postgres(engine_kind, store_location, tmp_path):
    # the events' key leads with the run's key, a hash: a batch adds its keys all over the index, splitting its pages
    events = [
        complete(f"dag.{job % 50}", output(f"out.t{job % 50}", {"x": ["crm.s.f"]}), run=f"run-{job}")
        for job in range(6000)
    ]
    with LineageStore.open(store_location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)), batch_size=200)
        sizes = "SELECT pg_relation_size('events_pkey'), pg_relation_size('run_datasets_by_run')"
        before = store.engine.query(sizes)[0] if engine_kind == "postgres" else None
        edges = store.edges_as_of()
    assert main(["store", "vacuum", "--store", store_location]) == 0
    with LineageStore.open(store_location) as store:
        assert store.edges_as_of() == edges and store.stats()["rows"]["events"] == 6000
        if engine_kind != "postgres":
            return
        after = store.engine.query(sizes)[0]
    # at this size a tenth of each index (at 1,000,000 events, 111 of 466 MB of indexes), where VACUUM left them
    assert all(now < 0.95 * then for now, then in zip(after, before, strict=True)), (before, after)


def test_import_and_sync_store_20000_events_a_transaction_unless_told(store_location, tmp_path, capsys):
    def starts(first: int, count: int) -> list[dict]:
        return [
            event("START", f"dag.j{number % 50}", run=f"r{number}", time=f"2026-10-01T02:{number % 60:02}:00Z")
            for number in range(first, first + count)
        ]

    imported, synced, told = (
        write(tmp_path / f"{name}.jsonl", starts(first, count))
        for name, first, count in (("imported", 0, 20_000), ("synced", 20_000, 20_001), ("told", 40_001, 2_500))
    )
    assert main(["store", "init", "--store", store_location]) == 0
    capsys.readouterr()
    assert main(["store", "import", str(imported), "--store", store_location, "--json"]) == 0
    assert [(r["stored"], r["batches"]) for r in json.loads(capsys.readouterr().out)["imports"]] == [(20_000, 1)]
    assert main(["store", "sync", str(synced), "--store", store_location, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["ingest"]["batches"]) == (20_001, 2)
    assert main(["store", "import", str(told), "--batch-size", "1000", "--store", store_location, "--json"]) == 0
    assert [(r["stored"], r["batches"]) for r in json.loads(capsys.readouterr().out)["imports"]] == [(2_500, 3)]


def test_a_batch_size_below_one_is_refused_in_one_sentence_before_anything_is_stored(store_location, tmp_path, capsys):
    events = write(tmp_path / "events.jsonl", [event("START", "dag.a", run="r1")])
    assert main(["store", "init", "--store", store_location]) == 0
    capsys.readouterr()
    for command, size in (("import", "0"), ("sync", "-5")):
        assert main(["store", command, str(events), "--batch-size", size, "--store", store_location]) == 2
        assert capsys.readouterr().err == (
            f"lineage-governance: --batch-size {size}: give how many events a transaction holds, 1 or more.\n"
        )
    with LineageStore.open(store_location, read_only=store_location.endswith(".duckdb")) as store:
        assert store.stats()["rows"]["events"] == 0
