"""A store whose database fails: unreachable at open, or its connection lost mid-use. One sentence naming the store,
never its password nor a traceback."""

from __future__ import annotations

import random
from typing import Any

import psycopg
import pytest

from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.errors import StoreBusyError, StoreUnavailableError
from airflow_lineage_governance.store.lineage_store import LineageStore
from tests.store.conftest import free_port, new_schema
from tests.support.events import complete, output, write


def test_an_unreachable_postgresql_is_one_sentence_without_the_password():
    port = free_port()
    with pytest.raises(StoreUnavailableError) as refused:
        LineageStore.open(f"postgresql://lineage:hunter2secret@127.0.0.1:{port}/lineage", create=True)
    assert str(refused.value) == (
        f"postgresql://lineage@127.0.0.1:{port}/lineage: the lineage store's PostgreSQL "
        "cannot be opened (not reachable, or the login was refused); check the connection's "
        "host, port, database and login."
    )


def test_a_wrong_password_is_refused_without_naming_it(postgres_url):
    wrong = postgres_url.replace("lineage:", "lineage:not-the-password-", 1)
    with pytest.raises(StoreUnavailableError) as refused:
        LineageStore.open(wrong, create=True)
    assert "not-the-password" not in str(refused.value)
    assert "cannot be opened (not reachable, or the login was refused)" in str(refused.value)


def test_a_connection_lost_mid_use_is_one_sentence(postgres_url):
    location = new_schema(postgres_url)
    with LineageStore.open(location, create=True) as store:
        backend = store.engine.query("SELECT pg_backend_pid()")[0][0]
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [backend])
        with pytest.raises(StoreUnavailableError) as failed:
            store.stats()
        assert str(failed.value) == (
            f"{store.engine.description}: the lineage store failed while it counted its rows "
            "(AdminShutdown); check that its "
            "database is reachable and has space, then try again."
        )


def test_a_duckdb_file_held_by_another_process_is_one_sentence(tmp_path):
    import subprocess
    import sys

    location = tmp_path / "lineage-store.duckdb"
    LineageStore.open(location, create=True).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)",
            str(location),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreBusyError) as held:
            LineageStore.open(location)
        assert str(held.value) == (
            f"{location}: another process has the lineage store's DuckDB file open; try again when it is done, "
            "or keep a store that many processes share on PostgreSQL."
        )
        assert "\n" not in str(held.value)
    finally:
        holder.kill()
        holder.wait()


def test_a_duckdb_reader_out_of_memory_names_the_setting_to_raise(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_MEMORY_LIMIT", "16MB")
    location = tmp_path / "lineage-store.duckdb"
    LineageStore.open(location, create=True).close()
    with LineageStore.open(location, read_only=True) as reader:
        with pytest.raises(StoreUnavailableError) as failed:
            reader.answer(
                "joined every number",
                lambda: reader.engine.query("SELECT length(string_agg(range::VARCHAR, ',')) FROM range(20000000)"),
            )
    assert str(failed.value) == (
        f"{location}: the lineage store ran out of memory while it joined every number; raise the "
        "store_memory_limit setting of [lineage_governance] (DuckDB's memory_limit for a reader) and try again."
    )


def test_a_duckdb_reader_too_small_to_read_the_stores_version_names_the_setting_to_raise(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    location = tmp_path / "lineage-store.duckdb"
    LineageStore.open(location, create=True).close()
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_MEMORY_LIMIT", "1MB")
    with pytest.raises(StoreUnavailableError) as failed:
        LineageStore.open(location, read_only=True)
    assert str(failed.value) == (
        f"{location}: the lineage store ran out of memory while it opened; raise the store_memory_limit setting of "
        "[lineage_governance] (DuckDB's memory_limit for a reader) and try again."
    )


def test_a_duckdb_writer_out_of_memory_names_its_setting_and_keeps_whole_batches(tmp_path, monkeypatch):
    # DuckDB's writer needs tens of MB whatever it stores (each table's blocks): under 16MB a batch of 5 events fails
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    events = write(tmp_path / "events.jsonl", chained(40, 20))
    location = tmp_path / "lineage-store.duckdb"
    LineageStore.open(location, create=True).close()
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_WRITER_MEMORY_LIMIT", "16MB")
    with LineageStore.open(location) as writer:
        with pytest.raises(StoreUnavailableError) as failed:
            writer.ingest(FileEventSource(events), batch_size=5)
    assert str(failed.value) == (
        f"{location}: the lineage store ran out of memory while it stored events; raise the "
        "store_writer_memory_limit setting of [lineage_governance] (DuckDB's memory_limit for a writer; unset, 80% "
        "of the machine's memory) and try again."
    )
    monkeypatch.delenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_WRITER_MEMORY_LIMIT")
    with LineageStore.open(location) as writer:
        kept = writer.engine.query("SELECT COUNT(*) FROM events")[0][0]
        assert kept % 5 == 0 and kept < 40  # whole batches only
        assert writer.ingest(FileEventSource(events), batch_size=5).stored == 40 - kept
    fresh = tmp_path / "fresh.duckdb"
    with LineageStore.open(fresh, create=True) as writer:
        writer.ingest(FileEventSource(events))
    changed = ColumnRef(TableRef(("crm",), "s"), "f")
    with LineageStore.open(location, read_only=True) as again, LineageStore.open(fresh, read_only=True) as once:
        assert again.impact(changed).to_dict() == once.impact(changed).to_dict()
        assert len(again.impact(changed).columns_reached) == 40 * 20


def test_a_postgresql_batch_rolled_back_leaves_the_store_able_to_store_the_next(postgres_url, tmp_path):
    # the first batch of a connection makes its staging tables; a batch rolled back takes them with it, and the next
    # batch on the same connection makes them again (here the batch waited past lock_timeout on a locked table)
    location = new_schema(postgres_url)
    events = [complete(f"dag.j{job}", output(f"out.t{job}", {"c": ["crm.s.f"]}), run=f"r{job}") for job in range(6)]
    first, second = events[:3], events[3:]
    with LineageStore.open(location, create=True) as store:
        schema = store.engine.query("SELECT current_schema()")[0][0]
        store.engine.execute("SET lock_timeout = '200ms'")
        with psycopg.connect(postgres_url) as holder:
            holder.execute(f'LOCK TABLE "{schema}".column_edges IN ACCESS EXCLUSIVE MODE')
            with pytest.raises(StoreUnavailableError) as failed:
                store.ingest(FileEventSource(write(tmp_path / "first.jsonl", first)))
            holder.rollback()
        assert "(LockNotAvailable)" in str(failed.value)
        assert store.engine.query("SELECT COUNT(*) FROM events")[0][0] == 0
        assert store.ingest(FileEventSource(write(tmp_path / "all.jsonl", first + second))).stored == 6
        impact = store.impact(ColumnRef(TableRef(("crm",), "s"), "f"))
        assert sorted(str(column) for column in impact.columns_reached) == [f"out.t{job}.c" for job in range(6)]


def chained(jobs: int, columns: int) -> list[dict[str, Any]]:
    """Return a chain of jobs, each writing its columns from `crm.s.f` and the same column of the job before."""
    return [
        complete(
            f"dag.j{job}",
            output(
                f"out.t{job}",
                {f"c{c}": ["crm.s.f", *([f"out.t{job - 1}.c{c}"] if job else [])] for c in range(columns)},
            ),
            run=f"r{job}",
        )
        for job in range(jobs)
    ]


def test_a_wide_impact_past_a_duckdb_readers_memory_walks_on_by_level_and_answers_the_same(tmp_path, monkeypatch):
    # 200 jobs in a chain, each writing 20 columns from a source column and the job before's: a change to the source
    # reaches 4,000 columns, past the width the walk goes on from in one recursive query, whose graph needs more than
    # a 12MB reader may take (it answers within 24MB); a walk by level needs less
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    events = chained(200, 20)
    location = tmp_path / "lineage-store.duckdb"
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)))
    changed = ColumnRef(TableRef(("crm",), "s"), "f")
    with LineageStore.open(location, read_only=True) as reader:
        expected = reader.impact(changed).to_dict()
    assert len(expected["columns_reached"]) == 4000
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_MEMORY_LIMIT", "12MB")
    with LineageStore.open(location, read_only=True) as reader:
        assert reader.impact(changed).to_dict() == expected


def test_a_duckdb_reader_whose_indexes_filled_its_memory_gives_them_back_and_answers_on(tmp_path, monkeypatch):
    # DuckDB keeps each part of an index a look-up read, counted against a reader's memory limit, until the file is
    # closed: a reader at 6MB that asks of 100 chained jobs and four tables of 10,000 columns failed its 38th small
    # question, and every one after it, with the out-of-memory sentence
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    events = chained(100, 10)
    events += [
        complete(f"dag.f{f}", output(f"wide.f{f}", {f"c{c}": [f"src.s{f}.c{c}"] for c in range(10000)}), run=f"f{f}")
        for f in range(4)
    ]
    location = tmp_path / "lineage-store.duckdb"
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)))
    rng = random.Random(1)
    asked = [ColumnRef(TableRef(("src",), f"s{rng.randrange(4)}"), f"c{rng.randrange(10000)}") for _ in range(80)]
    asked.append(ColumnRef(TableRef(("crm",), "s"), "f"))  # reaches 1,000 columns: the walk's one recursive query
    with LineageStore.open(location, read_only=True) as reader:
        expected = [reader.impact(column).to_dict() for column in asked]
    assert len(expected[-1]["columns_reached"]) == 1000 and all(len(e["columns_reached"]) == 1 for e in expected[:-1])
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_MEMORY_LIMIT", "6MB")
    with LineageStore.open(location, read_only=True) as reader:
        assert [reader.impact(column).to_dict() for column in asked] == expected
