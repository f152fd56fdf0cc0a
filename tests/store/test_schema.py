"""The store's versioned schema on both engines: created at the provider's version, an older store upgraded in
place with its rows kept, a newer store refused with one sentence."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from airflow_lineage_governance import __version__
from airflow_lineage_governance.graph.events import FileEventSource
from airflow_lineage_governance.refs import ColumnRef, TableRef
from airflow_lineage_governance.store.bodies import event_body
from airflow_lineage_governance.store.engines import open_engine
from airflow_lineage_governance.store.errors import StoreError, StoreVersionError
from airflow_lineage_governance.store.ids import run_key
from airflow_lineage_governance.store.ingest import ingest
from airflow_lineage_governance.store.lineage_store import LineageStore
from airflow_lineage_governance.store.migrations import migrate, store_version
from airflow_lineage_governance.store.schema import SCHEMA_VERSION, TABLES, tables_of
from airflow_lineage_governance.store.trace import StoredOrigin
from tests.support.events import complete, event, output, write
from tests.support.trace import dataset


def test_a_new_store_has_every_table_at_the_providers_schema_version(store_location):
    with LineageStore.open(store_location, create=True) as store:
        stats = store.stats()
        assert stats["schema_version"] == SCHEMA_VERSION == 20
        kept = tables_of(store.engine.dialect)
        assert stats["rows"] == dict.fromkeys(kept, 0)
        assert set(kept) | {"store_versions"} <= store.engine.tables()
        # PostgreSQL's traces walk run_datasets by its indexes: the table DuckDB's walk reads is not kept there
        on_duckdb = store.engine.dialect == "duckdb"
        assert {"snapshot_reads", "snapshot_spans"} & store.engine.tables() == (
            {"snapshot_reads", "snapshot_spans"} if on_duckdb else set()
        ) and len(TABLES) == 21
    with LineageStore.open(store_location) as again:  # opening it again changes nothing
        assert again.engine.query("SELECT version, provider_version FROM store_versions ORDER BY version") == [
            (1, __version__),
            (2, __version__),
            (3, __version__),
            (4, __version__),
            (5, __version__),
            (6, __version__),
            (7, __version__),
            (8, __version__),
            (9, __version__),
            (10, __version__),
            (11, __version__),
            (12, __version__),
            (13, __version__),
            (14, __version__),
            (15, __version__),
            (16, __version__),
            (17, __version__),
            (18, __version__),
            (19, __version__),
            (20, __version__),
        ]


def test_an_older_store_is_upgraded_in_place_and_keeps_its_rows(store_location, tmp_path):
    engine = open_engine(store_location)
    assert migrate(engine, target=1) == 1
    assert "findings" not in engine.tables() and "snapshots" in engine.tables()
    events = write(tmp_path / "events.jsonl", [complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}))])
    assert ingest(engine, FileEventSource(events)).stored == 1
    engine.close()
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        assert store_version(store.engine) == (SCHEMA_VERSION, __version__)
        assert store.stats()["rows"]["events"] == 1 and store.stats()["rows"]["findings"] == 0
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [("crm.learners.email", "out.t.x")]
        assert "snapshots" not in store.engine.tables()  # version 12: no question read it
        if store.engine.dialect == "postgres":  # the tables an ingest updates in place leave room on each page
            assert store.engine.query(
                "SELECT relname, reloptions FROM pg_class WHERE relname IN ('column_edges', 'table_writers') AND "
                "relnamespace = to_regnamespace(current_schema()) ORDER BY relname"
            ) == [("column_edges", ["fillfactor=70"]), ("table_writers", ["fillfactor=70"])]


def test_a_store_newer_than_the_provider_is_refused_with_one_sentence(store_location):
    with LineageStore.open(store_location, create=True) as store:
        store.engine.execute("INSERT INTO store_versions VALUES (?, 0, '9.9.0')", [SCHEMA_VERSION + 1])
        description = store.engine.description
    with pytest.raises(StoreVersionError) as refused:
        LineageStore.open(store_location)
    assert str(refused.value) == (
        f"{description}: the lineage store has schema version {SCHEMA_VERSION + 1} (written by "
        f"airflow-lineage-governance 9.9.0), newer than version {SCHEMA_VERSION} this provider ({__version__}) "
        "knows; upgrade airflow-lineage-governance to read it."
    )
    with pytest.raises(StoreVersionError):  # nor is it migrated
        migrate(open_engine(store_location))


def test_a_database_without_a_store_is_named_with_what_to_do(store_location):
    with pytest.raises(
        StoreError,
        match=r"^\S+: no lineage store here; create it with "
        r"`lineage-governance store init`\.$",
    ):
        LineageStore.open(store_location)
    with LineageStore.open(store_location, create=True) as store:  # the failed open left nothing behind
        assert store.stats()["rows"]["events"] == 0


def test_the_store_imports_no_airflow():
    import subprocess
    import sys

    code = (
        "import sys, airflow_lineage_governance.store.lineage_store, airflow_lineage_governance.store.reference, "
        "airflow_lineage_governance.store.postgres_engine, airflow_lineage_governance.store.duckdb_engine; "
        "print(sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


def test_a_version_2_store_keeps_its_events_json_readable_after_the_upgrade(store_location, tmp_path):
    engine = open_engine(store_location)
    assert migrate(engine, target=2) == 2
    first = complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="a1", time="2026-10-01T02:00:00Z")
    ingest(engine, FileEventSource(write(tmp_path / "old.jsonl", [first])))
    engine.close()
    later = complete("dag.a", output("out.t", {"x": ["crm.learners.phone"]}), run="a2", time="2026-10-02T02:00:00Z")
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        assert store.ingest(FileEventSource(write(tmp_path / "new.jsonl", [later]))).stored == 1
        kept = store.engine.query("SELECT run_id, at_us, body IS NULL, block_id IS NULL FROM events ORDER BY run_id")
        assert [(run, no_body, no_block) for run, _, no_body, no_block in kept] == [
            ("a1", False, True),
            ("a2", True, False),
        ]
        bodies = [event_body(store.engine, run, "COMPLETE", at) for run, at, _, _ in kept]
        assert [json.loads(body or b"null") for body in bodies] == [first, later]


def test_a_version_3_store_learns_its_tables_writers_in_the_upgrade(store_location, fresh_location, tmp_path):
    events = [
        complete("dag.a", output("out.t", {"x": ["crm.learners.email"], "y": ["crm.learners.phone"]}), run="a1"),
        complete("dag.b", output("out.u", {"z": ["out.t.x"]}, ["out.t.y"]), run="b1", time="2026-10-02T02:00:00Z"),
        complete(
            "dag.b",
            output("out.u", {"z": ["out.t.x"], "w": ["out.t.x"]}, ["out.t.y"]),
            run="b2",
            time="2026-10-04T02:00:00Z",
        ),
    ]
    path = write(tmp_path / "events.jsonl", events)
    _ingested_at(store_location, 3, path)
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        # out.t.y shapes out.u's rows: they reach the columns out.u's writer's run at the time names
        for day, reached in ((3, ["out.u.z"]), (5, ["out.u.w", "out.u.z"])):
            found = store.impact(ColumnRef.parse("out.t.y"), datetime(2026, 10, day, tzinfo=UTC))
            assert ([str(c) for c in found.columns_reached], [str(t) for t in found.rows]) == (reached, ["out.u"])
        upgraded = sorted(store.engine.query("SELECT * FROM table_writers"))
    with LineageStore.open(fresh_location(), create=True) as store:  # as an ingest at the provider's version derives
        store.ingest(FileEventSource(path))
        assert sorted(store.engine.query("SELECT * FROM table_writers")) == upgraded
    assert len(upgraded) == 3


def test_a_version_6_store_learns_its_snapshot_reads_in_the_upgrade(store_location, fresh_location, tmp_path):
    events = [
        complete("dag.a", dataset("out.t", "t1"), run="a1", inputs=[dataset("src.s", "s1")]),
        complete(
            "dag.b",
            dataset("out.u", None),
            dataset("out.v", "v1"),
            run="b1",
            time="2026-10-02T02:00:00Z",
            inputs=[dataset("out.t", "t1"), dataset("src.s", "s1"), dataset("src.w", None)],
        ),
        complete(
            "dag.c", dataset("out.w", "w1"), run="c1", time="2026-10-03T02:00:00Z", inputs=[dataset("src.w", None)]
        ),
        complete(
            "dag.d", dataset("out.x", None), run="d1", time="2026-10-04T02:00:00Z", inputs=[dataset("out.v", "v1")]
        ),
    ]
    path = write(tmp_path / "events.jsonl", events)
    _ingested_at(store_location, 6, path)
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        on_duckdb = store.engine.dialect == "duckdb"  # PostgreSQL's traces walk run_datasets: version 12 drops it there
        assert ("snapshot_reads" in store.engine.tables()) == on_duckdb
        upgraded = sorted(store.engine.query("SELECT * FROM snapshot_reads"), key=str) if on_duckdb else []
        assert flat(store.trace_back(TableRef.parse("out.v"), "v1")) == [
            ("out.v", "v1", "b1"),
            ("out.t", "t1", "a1"),
            ("src.s", "s1", None),
            ("src.s", "s1", None),
            ("src.w", None, None),
        ]
        forward = store.trace_forward(TableRef.parse("src.s"), "s1")
        assert [(str(c.table), c.snapshot, c.run.run_id, f"{c.read[0]}@{c.read[1]}") for c in forward] == [
            ("out.t", "t1", "a1", "src.s@s1"),
            ("out.u", None, "b1", "src.s@s1"),
            ("out.v", "v1", "b1", "src.s@s1"),
            ("out.u", None, "b1", "out.t@t1"),
            ("out.v", "v1", "b1", "out.t@t1"),
            ("out.x", None, "d1", "out.v@v1"),
        ]
    if not on_duckdb:
        return
    with LineageStore.open(fresh_location(), create=True) as store:  # as an ingest at the provider's version derives
        store.ingest(FileEventSource(path))
        assert sorted(store.engine.query("SELECT * FROM snapshot_reads"), key=str) == upgraded
    # a1 read s1 into t1; b1 read t1 and s1 into v1; c1 wrote w1 reading no snapshot; d1 read v1 into none
    assert [(w is not None, r is not None) for w, r, _, _ in upgraded].count((True, True)) == 3 and len(upgraded) == 5
    assert sorted(run for _, _, _, run in upgraded) == sorted(run_key(run) for run in ("a1", "b1", "b1", "c1", "d1"))


ONE_COLUMN_INDEXES_UNREAD = {"run_datasets_by_run", "runs_by_job"}


def test_a_version_8_store_answers_as_before_without_the_indexes_duckdb_never_reads(
    store_location, fresh_location, tmp_path
):
    events = [
        complete("dag.a", dataset("out.t", "t1"), run="a1", inputs=[dataset("src.s", "s1")]),
        complete(
            "dag.b", dataset("out.v", "v1"), run="b1", time="2026-10-02T02:00:00Z", inputs=[dataset("out.t", "t1")]
        ),
        complete(
            "dag.b", dataset("out.v", "v2"), run="b2", time="2026-10-03T02:00:00Z", inputs=[dataset("src.s", "s2")]
        ),
    ]
    later = complete(
        "dag.b", dataset("out.v", "v3"), run="b3", time="2026-10-04T02:00:00Z", inputs=[dataset("out.v", "v2")]
    )
    path, later_path = write(tmp_path / "events.jsonl", events), write(tmp_path / "later.jsonl", [later])
    engine = open_engine(store_location)
    assert migrate(engine, target=8) == 8
    assert ONE_COLUMN_INDEXES_UNREAD <= _indexes(engine)
    ingest(engine, FileEventSource(path))
    engine.close()

    def answers(store: LineageStore) -> tuple[object, ...]:
        return (
            flat(store.trace_back(TableRef.parse("out.v"), "v3")),
            [(str(c.table), c.snapshot, c.run.run_id) for c in store.trace_forward(TableRef.parse("src.s"), "s1")],
            sorted((str(e.source), str(e.target), e.run_id) for e in store.edges_as_of()),
            {job: (o.run_id, sorted(map(str, o.tables))) for job, o in store.observed_jobs().items()},
            store.engine.query("SELECT run_id, state FROM runs ORDER BY run_id"),
        )

    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        kept = _indexes(store.engine) & ONE_COLUMN_INDEXES_UNREAD
        # PostgreSQL keeps its index by run; `runs` is a view from version 17 on, on both engines
        assert kept == (set() if store.engine.dialect == "duckdb" else {"run_datasets_by_run"})
        store.ingest(FileEventSource(later_path))  # a run of a job seen before: its runs' states re-derived
        upgraded = answers(store)
    with LineageStore.open(fresh_location(), create=True) as fresh:  # as a store made at the provider's version
        fresh.ingest(FileEventSource(path))
        fresh.ingest(FileEventSource(later_path))
        assert answers(fresh) == upgraded
    assert upgraded[0] == [("out.v", "v3", "b3"), ("out.v", "v2", "b2"), ("src.s", "s2", None)]
    assert upgraded[1] == [("out.t", "t1", "a1"), ("out.v", "v1", "b1")]
    assert upgraded[4] == [("a1", "COMPLETE"), ("b1", "COMPLETE"), ("b2", "COMPLETE"), ("b3", "COMPLETE")]


def flat(origin: StoredOrigin) -> list[tuple[str, str | None, str | None]]:
    """Returns each snapshot of a trace back, depth first: its table, snapshot and writer's run id."""
    found = [(str(origin.table), origin.snapshot, origin.run.run_id if origin.run is not None else None)]
    for read in origin.inputs:
        found.extend(flat(read))
    return found


@pytest.mark.parametrize(("limit", "shown"), [(None, "244.1 MiB"), ("64MB", "61.0 MiB")])
def test_a_reader_of_a_duckdb_store_keeps_to_the_store_memory_limit(tmp_path, monkeypatch, limit, shown):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))  # no airflow.cfg: the setting's default
    if limit is not None:
        monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE_MEMORY_LIMIT", limit)
    location = tmp_path / "lineage-store.duckdb"
    events = [complete("dag.a", dataset("out.t", "t1"), run="a1", inputs=[dataset("src.s", "s1")])]
    with LineageStore.open(location, create=True) as store:
        store.ingest(FileEventSource(write(tmp_path / "events.jsonl", events)))
        assert store.engine.query("SELECT current_setting('memory_limit')")[0][0] != shown  # a writer is not bounded
        assert store.engine.query("SELECT current_setting('checkpoint_threshold')")[0][0] == "244.1 MiB"  # 256MB
    with LineageStore.open(location, read_only=True) as reader:
        assert reader.engine.query("SELECT current_setting('memory_limit')")[0][0] == shown
        assert reader.engine.query("SELECT current_setting('checkpoint_threshold')")[0][0] == "16.0 MiB"  # DuckDB's
        assert flat(reader.trace_back(TableRef.parse("out.t"), "t1")) == [("out.t", "t1", "a1"), ("src.s", "s1", None)]


TWO_COLUMN_INDEXES = {"completes_by_job", "completes_by_run", "run_datasets_by_snapshot"}


def _indexes(engine) -> set[str]:
    if engine.dialect == "duckdb":
        return {str(row[0]) for row in engine.query("SELECT index_name FROM duckdb_indexes()")}
    return {str(row[0]) for row in engine.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")}


def test_a_duckdb_store_keeps_no_index_duckdb_never_reads(store_location, tmp_path):
    engine = open_engine(store_location)
    assert migrate(engine, target=7) == 7
    assert TWO_COLUMN_INDEXES <= _indexes(engine)
    events = write(tmp_path / "events.jsonl", [complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}))])
    assert ingest(engine, FileEventSource(events)).stored == 1
    assert migrate(engine) == SCHEMA_VERSION
    kept = _indexes(engine) & TWO_COLUMN_INDEXES
    # PostgreSQL keeps them, but for `completes_by_run`: from version 18 its `completes` are events rows, found by
    # the events' primary key (run key, type, instant)
    assert kept == (set() if engine.dialect == "duckdb" else {"completes_by_job", "run_datasets_by_snapshot"})
    assert ("completes_by_job_alone" in _indexes(engine)) == (engine.dialect == "duckdb")
    engine.close()
    with LineageStore.open(store_location) as store:
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [("crm.learners.email", "out.t.x")]


def test_a_version_8_store_reads_its_edges_from_the_index_by_source_on_postgres(store_location, tmp_path):
    engine = open_engine(store_location)
    assert migrate(engine, target=8) == 8
    events = [
        complete("dag.a", output("out.t", {"x": ["crm.learners.email"], "y": ["crm.learners.email"]})),
        complete("dag.b", output("out.u", {"z": ["out.t.x"]}), time="2026-10-02T02:00:00Z"),
    ]
    assert ingest(engine, FileEventSource(write(tmp_path / "events.jsonl", events))).stored == 2
    engine.close()
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        assert "column_edges_by_source" in _indexes(store.engine)
        if store.engine.dialect == "postgres":
            definition = store.engine.query(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?",
                ["column_edges_by_source"],
            )[0][0]
            assert definition.endswith(
                "(source_column_id) INCLUDE (valid_from_us, valid_until_us, target_id, into_table, type, subtype, "
                "masking, job_id)"
            )
        impact = store.impact(ColumnRef.parse("crm.learners.email"))
        assert [str(c) for c in impact.columns_reached] == ["out.t.x", "out.t.y", "out.u.z"]
        assert [(str(e.source), str(e.target)) for e in store.edges_as_of()] == [
            ("crm.learners.email", "out.t.x"),
            ("crm.learners.email", "out.t.y"),
            ("out.t.x", "out.u.z"),
        ]


def test_a_version_13_store_finds_a_snapshots_writers_by_the_index_of_snapshot_and_role_on_postgres(
    store_location, tmp_path
):
    engine = open_engine(store_location)
    assert migrate(engine, target=13) == 13
    events = [  # a snapshot with one writer and three readers
        complete("dag.a", dataset("out.t", "t1"), run="a1", inputs=[dataset("src.s", "s1")]),
        *(
            complete(f"dag.r{n}", dataset(f"out.r{n}", f"r{n}"), run=f"r{n}", inputs=[dataset("out.t", "t1")])
            for n in range(3)
        ),
    ]
    assert ingest(engine, FileEventSource(write(tmp_path / "events.jsonl", events))).stored == 4
    engine.close()
    with LineageStore.open(store_location) as store:
        assert store.version == SCHEMA_VERSION
        if store.engine.dialect == "postgres":
            definition = store.engine.query(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?",
                ["run_datasets_by_snapshot"],
            )[0][0]
            assert definition.endswith("(dataset_id, snapshot, role)")
        else:
            assert "run_datasets_by_snapshot" not in _indexes(store.engine)
        assert flat(store.trace_back(TableRef.parse("out.t"), "t1")) == [("out.t", "t1", "a1"), ("src.s", "s1", None)]
        forward = store.trace_forward(TableRef.parse("out.t"), "t1")
        assert sorted((str(c.table), c.snapshot, c.run.run_id) for c in forward) == [
            ("out.r0", "r0", "r0"),
            ("out.r1", "r1", "r1"),
            ("out.r2", "r2", "r2"),
        ]


def test_a_version_14_store_learns_the_span_of_each_snapshot_on_duckdb(store_location, fresh_location, tmp_path):
    events = [  # t1 read the next day and a week later; v1 read within the hour; u1 written and never read
        _wrote("dag.a", ("out.t", "t1"), "a1", "2026-10-01T02:00:00Z", ("src.s", "s1")),
        _wrote("dag.b", ("out.v", "v1"), "b1", "2026-10-02T03:00:00Z", ("out.t", "t1")),
        _wrote("dag.c", ("out.w", "w1"), "c1", "2026-10-02T03:30:00Z", ("out.v", "v1")),
        _wrote("dag.d", ("out.u", "u1"), "d1", "2026-10-08T02:00:00Z", ("out.t", "t1")),
    ]
    path = write(tmp_path / "events.jsonl", events)
    _ingested_at(store_location, 14, path, absent="snapshot_spans")
    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        if store.engine.dialect == "postgres":  # its traces walk run_datasets by its indexes
            assert "snapshot_spans" not in store.engine.tables()
            return
        upgraded = store.engine.query("SELECT * FROM snapshot_spans ORDER BY first_at_us, last_at_us")
        forward = [(str(c.table), c.run.run_id) for c in store.trace_forward(TableRef.parse("out.t"), "t1")]
    hour = 3_600_000_000
    first = int(datetime(2026, 10, 1, 2, tzinfo=UTC).timestamp() * 1_000_000)
    assert [(low - first, high - first, far) for _, low, high, far in upgraded] == [
        (0, 0, False),  # s1
        (0, 7 * 24 * hour, True),  # t1: written, read 25 hours and a week later
        (25 * hour, 25 * hour + hour // 2, False),  # v1
        (25 * hour + hour // 2, 25 * hour + hour // 2, False),  # w1
        (7 * 24 * hour, 7 * 24 * hour, False),  # u1
    ]
    assert forward == [("out.v", "b1"), ("out.u", "d1"), ("out.w", "c1")]  # nearest first
    with LineageStore.open(fresh_location(), create=True) as fresh:  # one event a batch, each span widened both ways
        shuffled = [events[3], events[1], events[0], events[2]]
        fresh.ingest(FileEventSource(write(tmp_path / "shuffled.jsonl", shuffled)), batch_size=1)
        assert fresh.engine.query("SELECT * FROM snapshot_spans ORDER BY first_at_us, last_at_us") == upgraded


def test_a_version_15_store_names_its_runs_by_key_in_the_upgrade(store_location, fresh_location, tmp_path):
    events = [  # two runs write out.t at one instant: the one of the later run id wrote its latest snapshot
        _wrote("dag.a", ("out.t", "t1"), "zeta-1", "2026-10-01T02:00:00Z", ("src.s", "s1")),
        _wrote("dag.b", ("out.t", "t2"), "été-2", "2026-10-01T02:00:00Z", ("src.s", "s1")),
        _wrote("dag.c", ("out.v", "v1"), "☃-3", "2026-10-01T03:00:00Z", ("out.t", "t2")),
    ]
    path = write(tmp_path / "events.jsonl", events)
    _ingested_at(store_location, 15, path)

    def answers(store: LineageStore) -> tuple[object, ...]:
        keyed = store.engine.query(  # each row's key, worked out by the database in the upgrade or by the ingest
            "SELECT c.run_id, r.run_key, r.role, r.snapshot FROM run_datasets r JOIN completes c ON c.run_key = "
            "r.run_key AND c.at_us = r.at_us ORDER BY c.run_id, r.role, r.snapshot"
        )
        back = store.trace_back(TableRef.parse("out.v"), "v1")
        forward = store.trace_forward(TableRef.parse("src.s"), "s1")
        events = store.engine.query("SELECT run_id, run_key FROM events ORDER BY run_id")
        return (
            keyed,
            events,
            store.latest_snapshot(TableRef.parse("out.t")),
            [(str(t), s, o.run.run_id if o.run else None) for o in back.inputs for t, s in [(o.table, o.snapshot)]],
            back.run.run_id if back.run else None,
            [(c.run.run_id, str(c.table), c.snapshot) for c in forward],
            store.stats()["rows"]["run_datasets"],
        )

    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        upgraded = answers(store)
        if store.engine.dialect == "postgres":  # its indexes by run hold the key
            assert sorted(
                store.engine.query(
                    "SELECT indexname, indexdef LIKE '%(run_key%' FROM pg_indexes WHERE indexname IN "
                    "('run_datasets_by_run', 'events_pkey') AND schemaname = current_schema()"
                )
            ) == [("events_pkey", True), ("run_datasets_by_run", True)]
    assert upgraded[0] == [
        (run, run_key(run), role, snapshot)
        for run, role, snapshot in [
            ("zeta-1", "input", "s1"),
            ("zeta-1", "output", "t1"),
            ("été-2", "input", "s1"),
            ("été-2", "output", "t2"),
            ("☃-3", "input", "t2"),
            ("☃-3", "output", "v1"),
        ]
    ]
    assert upgraded[1] == [(run, run_key(run)) for run in ("zeta-1", "été-2", "☃-3")]
    assert upgraded[2:] == (
        "t2",  # "été-2" sorts after "zeta-1"
        [("out.t", "t2", "été-2")],
        "☃-3",
        [("zeta-1", "out.t", "t1"), ("été-2", "out.t", "t2"), ("☃-3", "out.v", "v1")],
        6,
    )
    with LineageStore.open(fresh_location(), create=True) as fresh:  # a new store's ingest names them alike
        fresh.ingest(FileEventSource(path))
        assert answers(fresh) == upgraded


def test_a_version_16_store_reads_its_runs_final_states_from_its_events_after_the_upgrade(
    store_location, fresh_location, tmp_path
):
    events = [  # each delivered in its own batch, some after a later event of their run
        complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="a1", time="2026-10-01T02:00:00Z"),
        event("START", "dag.a", run="a1", time="2026-10-01T01:59:00Z"),  # late: after its COMPLETE
        event("START", "dag.b", run="b1", time="2026-10-01T02:00:00Z"),
        event("FAIL", "dag.b", run="b1", time="2026-10-01T02:05:00Z"),
        event("COMPLETE", "dag.b", run="b1", time="2026-10-01T02:05:00Z"),  # beats FAIL at one instant
        event("START", "dag.c", run="c1", time="2026-10-01T02:00:00Z"),
        event("RUNNING", "dag.c", run="c1", time="2026-10-01T02:01:00Z"),  # no terminal event: the latest
        event("FAIL", "dag.d", run="d1", time="2026-10-01T02:10:00Z"),
        event("START", "dag.d", run="d1", time="2026-10-01T02:20:00Z"),  # after its FAIL: the terminal one holds
    ]
    path = write(tmp_path / "events.jsonl", events)
    engine = open_engine(store_location)
    assert migrate(engine, target=16) == 16
    ingest(engine, FileEventSource(path), batch_size=1)
    kept = engine.query("SELECT * FROM runs ORDER BY run_id")
    engine.close()
    assert [(row[0], row[2]) for row in kept] == [
        ("a1", "COMPLETE"),
        ("b1", "COMPLETE"),
        ("c1", "RUNNING"),
        ("d1", "FAIL"),
    ]
    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        assert store.engine.query("SELECT * FROM runs ORDER BY run_id") == kept
        viewed = (
            "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            if store.engine.dialect == "duckdb"
            else "SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()"
        )
        assert ("runs",) in store.engine.query(viewed) and store.stats()["rows"]["runs"] == 4
        later = write(tmp_path / "later.jsonl", [event("COMPLETE", "dag.c", run="c1", time="2026-10-01T02:30:00Z")])
        store.ingest(FileEventSource(later))
        assert store.engine.query("SELECT run_id, state FROM runs WHERE run_id = 'c1'") == [("c1", "COMPLETE")]
    with LineageStore.open(fresh_location(), create=True) as fresh:  # a new store's view reads the same
        fresh.ingest(FileEventSource(path), batch_size=1)
        assert fresh.engine.query("SELECT * FROM runs ORDER BY run_id") == kept


def test_a_version_17_store_keeps_its_completes_in_their_events_on_postgres(store_location, fresh_location, tmp_path):
    events = [
        complete("dag.a", output("out.t", {"x": ["crm.learners.email"]}), run="a1", time="2026-10-01T02:00:00Z"),
        event("START", "dag.a", run="a2", time="2026-10-02T01:59:00Z"),
        complete("dag.a", output("out.t", {"x": ["crm.learners.name"]}), run="a2", time="2026-10-02T02:00:00Z"),
        _wrote("dag.b", ("out.v", "v1"), "b1", "2026-10-02T03:00:00Z", ("out.t", "t1")),
    ]
    later = [  # delivered again, and a later run of dag.a: a2's interval ends at it
        events[2],
        complete("dag.a", output("out.t", {"x": ["crm.learners.id"]}), run="a3", time="2026-10-03T02:00:00Z"),
    ]
    path, later_path = write(tmp_path / "events.jsonl", events), write(tmp_path / "later.jsonl", later)
    _ingested_at(store_location, 17, path)
    every = "SELECT * FROM completes ORDER BY run_id"
    engine = open_engine(store_location)
    kept = engine.query(every)
    engine.close()

    def answers(store: LineageStore) -> tuple[object, ...]:
        return (
            [
                (str(e.source), str(e.target), e.run_id)
                for e in store.edges_as_of(datetime(2026, 10, 2, 12, tzinfo=UTC))
            ],
            [(str(e.source), str(e.target), e.run_id) for e in store.edges_as_of()],
            flat(store.trace_back(TableRef.parse("out.v"), "v1")),
            store.engine.query(every),
            store.stats()["rows"]["completes"],
        )

    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        assert store.engine.query(every) == kept and len(kept) == 3
        views = (  # PostgreSQL reads them from the events' rows; DuckDB keeps its table
            "SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()"
            if store.engine.dialect == "postgres"
            else "SELECT view_name FROM duckdb_views() WHERE NOT internal"
        )
        assert sorted(store.engine.query(views)) == (
            [("completes",), ("runs",)] if store.engine.dialect == "postgres" else [("runs",)]
        )
        upgraded = _as_a_new_store_answers(store, fresh_location(), answers, path, later_path)
    assert upgraded[0] == [("crm.learners.name", "out.t.x", "a2")]
    assert upgraded[1] == [("crm.learners.id", "out.t.x", "a3")]
    assert upgraded[2] == [("out.v", "v1", "b1"), ("out.t", "t1", None)]
    at = {
        run: round(datetime(2026, 10, day, 2, tzinfo=UTC).timestamp() * 1_000_000)
        for run, day in (("a2", 2), ("a3", 3))
    }
    assert [(row[0], row[8]) for row in upgraded[3]] == [("a1", at["a2"]), ("a2", at["a3"]), ("a3", None), ("b1", None)]
    assert upgraded[4] == 4


def test_a_version_18_store_keeps_event_types_and_roles_in_narrower_rows_on_postgres(
    store_location, fresh_location, tmp_path
):
    events = [
        event("START", "dag.b", run="b1", time="2026-10-02T02:59:00Z"),
        _wrote("dag.b", ("out.v", "v1"), "b1", "2026-10-02T03:00:00Z", ("out.t", "t1")),
        event("FAIL", "dag.c", run="c1", time="2026-10-02T04:00:00Z"),
    ]
    later = [_wrote("dag.b", ("out.v", "v2"), "b2", "2026-10-03T03:00:00Z", ("out.v", "v1"))]
    path, later_path = write(tmp_path / "events.jsonl", events), write(tmp_path / "later.jsonl", later)
    _ingested_at(store_location, 18, path)
    listed = (  # each table's rows by its columns' names, whatever their order
        "SELECT run_id, event_type, at_us, event_time, job_id, dag_run_id, try_number, block_id, block_line, run_key "
        "FROM events ORDER BY run_id, at_us",
        "SELECT run_key, at_us, role, dataset_id, snapshot FROM run_datasets ORDER BY at_us, role",
        "SELECT * FROM completes ORDER BY run_id",
        "SELECT * FROM runs ORDER BY run_id",
    )
    widths = (  # a row's header and columns, in bytes
        "SELECT 'events', pg_column_size(e.*) FROM events e UNION ALL SELECT 'run_datasets', pg_column_size(r.*) FROM "
        "run_datasets r ORDER BY 1, 2"
    )
    engine = open_engine(store_location)
    kept = [engine.query(sql) for sql in listed]
    wide = engine.query(widths) if engine.dialect == "postgres" else None
    engine.close()

    def answers(store: LineageStore) -> tuple[object, ...]:
        observed = store.observed_jobs()["dag.b"]
        return (
            flat(store.trace_back(TableRef.parse("out.v"), "v2")),
            [(str(c.table), c.snapshot) for c in store.trace_forward(TableRef.parse("out.t"), "t1")],
            (observed.run_id, sorted(str(t) for t in observed.tables)),
            [store.engine.query(sql) for sql in listed[2:]],
        )

    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        assert [store.engine.query(sql) for sql in listed] == kept and len(kept[0]) == 3 and len(kept[1]) == 2
        if store.engine.dialect == "postgres":
            assert store.engine.query(
                "SELECT table_name, column_name, udt_name FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND column_name IN ('event_type', 'role') ORDER BY table_name, column_name"
            ) == [("events", "event_type", "run_event_type"), ("run_datasets", "role", "run_dataset_role")]
            assert [
                name
                for (name,) in store.engine.query(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND "
                    "table_name = 'run_datasets' ORDER BY ordinal_position"
                )
            ] == ["run_key", "at_us", "dataset_id", "role", "snapshot"]
            # a text between two numbers was padded to 8 bytes (the role's, the event type's); an enumerated type takes
            # 4, the texts come after the numbers
            assert wide == [
                ("events", 112),
                ("events", 120),
                ("events", 128),
                ("run_datasets", 59),
                ("run_datasets", 59),
            ]
            assert store.engine.query(widths) == [
                ("events", 104),
                ("events", 104),
                ("events", 112),
                ("run_datasets", 55),
                ("run_datasets", 55),
            ]
        upgraded = _as_a_new_store_answers(store, fresh_location(), answers, path, later_path)
    assert upgraded[0] == [("out.v", "v2", "b2"), ("out.v", "v1", "b1"), ("out.t", "t1", None)]
    assert upgraded[1] == [("out.v", "v1"), ("out.v", "v2")]
    assert upgraded[2] == ("b2", ["out.v"])


def test_a_version_19_store_keeps_the_run_of_each_snapshot_read_in_the_upgrade_on_duckdb(
    store_location, fresh_location, tmp_path
):
    events = [  # a1 and b1 at one instant, only a1 reading s1; c1 read what a1 wrote, then b1's
        _wrote("dag.a", ("out.t", "t1"), "a1", "2026-10-01T02:00:00Z", ("src.s", "s1")),
        _wrote("dag.b", ("out.u", "u1"), "b1", "2026-10-01T02:00:00Z", ("src.r", "r1")),
        _wrote("dag.c", ("out.v", "v1"), "c1", "2026-10-01T03:00:00Z", ("out.t", "t1")),
        _wrote("dag.c", ("out.v", "v2"), "c2", "2026-10-02T03:00:00Z", ("out.u", "u1")),
    ]
    later = [_wrote("dag.d", ("out.w", "w1"), "d1", "2026-10-01T02:00:00Z", ("out.t", "t1"))]  # at a1's instant
    path, later_path = write(tmp_path / "events.jsonl", events), write(tmp_path / "later.jsonl", later)
    _ingested_at(store_location, 19, path)

    def answers(store: LineageStore) -> tuple[object, ...]:
        forward = store.trace_forward(TableRef.parse("src.s"), "s1")
        reads = store.engine.query("SELECT * FROM snapshot_reads ORDER BY at_us, run_key") if on_duckdb else []
        return [(c.run.run_id, f"{c.read[0]}@{c.read[1]}", str(c.table), c.snapshot) for c in forward], reads

    with LineageStore.open(store_location) as store:  # opened for writing: upgraded in place
        assert store.version == SCHEMA_VERSION
        on_duckdb = store.engine.dialect == "duckdb"
        if on_duckdb:
            assert [name for _, name, *_ in store.engine.query("PRAGMA table_info('snapshot_reads')")] == [
                "written_key",
                "read_key",
                "at_us",
                "run_key",
            ]
            assert sorted({run for *_, run in answers(store)[1]}) == sorted(
                run_key(r) for r in ("a1", "b1", "c1", "c2")
            )
        upgraded = _as_a_new_store_answers(store, fresh_location(), answers, path, later_path)
    assert upgraded[0] == [
        ("a1", "src.s@s1", "out.t", "t1"),
        ("d1", "out.t@t1", "out.w", "w1"),  # t1's readers by instant: b1's output, read by c2, is not reached
        ("c1", "out.t@t1", "out.v", "v1"),
    ]
    if on_duckdb:  # each row names its run: a1's and b1's at one instant told apart, d1's stored by the new code
        keys = {run_key(run): run for run in ("a1", "b1", "c1", "c2", "d1")}
        assert sorted(keys[run] for *_, run in upgraded[1]) == ["a1", "b1", "c1", "c2", "d1"]


def _as_a_new_store_answers(
    store: LineageStore, location: str, answers: Callable[[LineageStore], tuple[object, ...]], *paths: Path
) -> tuple[object, ...]:
    """Ingest the last events file into the upgraded store; return its answers, checked equal to those of a store made
    at the provider's version at `location` from every file."""
    store.ingest(FileEventSource(paths[-1]))
    upgraded = answers(store)
    with LineageStore.open(location, create=True) as fresh:
        for path in paths:
            fresh.ingest(FileEventSource(path))
        assert answers(fresh) == upgraded
    return upgraded


def _wrote(job: str, written: tuple[str, str], run: str, time: str, read: tuple[str, str]) -> dict:
    """Return the COMPLETE of a run of `job` that read one snapshot (table, id) and wrote another."""
    return complete(job, dataset(*written), run=run, time=time, inputs=[dataset(*read)])


def _ingested_at(location: str, version: int, path: Path, absent: str | None = None) -> None:
    """Make a store of schema `version` (without the table `absent`) and ingest the events file into it."""
    engine = open_engine(location)
    assert migrate(engine, target=version) == version
    assert absent is None or absent not in engine.tables()
    ingest(engine, FileEventSource(path))
    engine.close()
