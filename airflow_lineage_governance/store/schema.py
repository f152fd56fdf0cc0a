"""The store's schema, as numbered migrations.

Each version's statements, written once for both engines (`{blob}` is the one type spelt differently: DuckDB's BLOB,
PostgreSQL's BYTEA; `{text}` follows a text expression in ORDER BY, `Engine.text_order`).

Instants are microseconds since the epoch (UTC) in BIGINT columns; an interval's end is NULL while it is open.
Ids are `ids.stable_id` hashes of the natural key. Version 1 holds the lineage history; version 2 adds the
governance tables (classifications, owners, declarations, findings); version 3 keeps events' JSON in compressed
blocks of many events (`event_blocks`; `bodies.py`) instead of one by one, and indexes the runs by the snapshots
they read and wrote, and the events by DAG run; version 4 keeps, per event source synced into the store, the latest
event time read from it (`store/sync.py`); version 5 keeps when each job's run wrote each table with which lineage
(`table_writers`), so the writer of a table at a time is looked up, not worked out from every COMPLETE; version 6
keeps where the last sync of an events file stopped, and each governance run with its findings (`governance_runs`,
`findings`); version 7 keeps each snapshot read into each snapshot written (`snapshot_reads`); version 8 drops, on
DuckDB, the indexes of two columns DuckDB never reads; version 9 drops, on DuckDB, the indexes of `runs` by job and
of `run_datasets` by run, which no DuckDB query reads either; version 10 keeps, on PostgreSQL, every column of an edge
the store's questions read in its index by source (`column_edges_by_source`); version 11 leaves, on PostgreSQL,
room on each page of the tables an ingest updates in place (`column_edges`, `table_writers`); version 12 drops
`snapshots` (which run first wrote each snapshot), which no question reads, and on PostgreSQL `snapshot_reads`;
version 13 no longer writes each event's `content_sha256`, which no question reads; version 14 indexes, on
PostgreSQL, `run_datasets` by snapshot and role, so a trace finds a snapshot's writers without reading its readers;
version 15 keeps, on DuckDB, the earliest and latest instant of the `snapshot_reads` rows of each snapshot
(`snapshot_spans`), so a trace looks a snapshot up by its key and reads its rows only where they are; version 16
keys a run in `events`, `run_datasets` and `completes` by a number (`ids.run_key`) instead of its id's text;
version 17 makes `runs` a view of `events` (each run's final state, worked out when read) instead of rows each batch
replaced; version 18 keeps, on PostgreSQL, each COMPLETE's shape, SQL hash and interval in its `events` row, and
`completes` becomes a view of those rows; version 19 keeps, on PostgreSQL, an event's type and a table's role in a run
as enumerated types, and orders the columns of `events` and `run_datasets` numbers first; version 20 keeps, on DuckDB,
the key of each `snapshot_reads` row's run.
"""

from __future__ import annotations

from dataclasses import dataclass

from airflow_lineage_governance.graph.events import EVENT_TYPES, TERMINAL, TYPE_RANK

VERSION_1 = (
    "CREATE TABLE store_versions (version INTEGER PRIMARY KEY, applied_at_us BIGINT NOT NULL, "
    "provider_version TEXT NOT NULL)",
    "CREATE TABLE jobs (job_id BIGINT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL)",
    "CREATE TABLE datasets (dataset_id BIGINT PRIMARY KEY, name TEXT NOT NULL, namespace TEXT NOT NULL)",
    "CREATE TABLE dataset_columns (column_id BIGINT PRIMARY KEY, dataset_id BIGINT NOT NULL, name TEXT NOT NULL)",
    "CREATE INDEX dataset_columns_by_dataset ON dataset_columns (dataset_id)",
    # every distinct event, its JSON compressed (zlib): the evidence, and what the rest is derived from
    "CREATE TABLE events (run_id TEXT NOT NULL, event_type TEXT NOT NULL, at_us BIGINT NOT NULL, "
    "event_time TEXT NOT NULL, job_id BIGINT NOT NULL, content_sha256 TEXT NOT NULL, body {blob} NOT NULL, "
    "ingested_at_us BIGINT NOT NULL, dag_run_id TEXT, try_number INTEGER, PRIMARY KEY (run_id, event_type, at_us))",
    # each run's final state: its latest terminal event, else its latest event
    "CREATE TABLE runs (run_id TEXT PRIMARY KEY, job_id BIGINT NOT NULL, state TEXT NOT NULL, "
    "state_terminal BOOLEAN NOT NULL, state_at_us BIGINT NOT NULL, state_rank INTEGER NOT NULL, "
    "state_time TEXT NOT NULL, dag_run_id TEXT, try_number INTEGER)",
    "CREATE INDEX runs_by_job ON runs (job_id)",
    # the lineage one or more COMPLETE events stated identically: edges, columns named, tables written
    "CREATE TABLE shapes (shape_id BIGINT PRIMARY KEY, wrong_parts INTEGER NOT NULL)",
    "CREATE TABLE shape_columns (shape_id BIGINT NOT NULL, column_id BIGINT NOT NULL, dataset_id BIGINT NOT NULL, "
    "position INTEGER NOT NULL, PRIMARY KEY (shape_id, column_id))",
    "CREATE TABLE shape_outputs (shape_id BIGINT NOT NULL, dataset_id BIGINT NOT NULL, "
    "PRIMARY KEY (shape_id, dataset_id))",
    "CREATE TABLE shape_edges (shape_id BIGINT NOT NULL, source_column_id BIGINT NOT NULL, target_id BIGINT NOT NULL, "
    "into_table BOOLEAN NOT NULL, type TEXT NOT NULL, subtype TEXT NOT NULL, masking BOOLEAN NOT NULL, "
    "PRIMARY KEY (shape_id, source_column_id, target_id, type, subtype))",
    # each distinct COMPLETE: its job's run from `at_us` until the job's next COMPLETE (`valid_until_us`)
    "CREATE TABLE completes (run_id TEXT NOT NULL, at_us BIGINT NOT NULL, event_time TEXT NOT NULL, "
    "job_id BIGINT NOT NULL, shape_id BIGINT NOT NULL, sql_hash TEXT, try_number INTEGER, dag_run_id TEXT, "
    "valid_until_us BIGINT, PRIMARY KEY (run_id, at_us))",
    "CREATE INDEX completes_by_job ON completes (job_id, at_us)",
    "CREATE TABLE run_datasets (run_id TEXT NOT NULL, at_us BIGINT NOT NULL, role TEXT NOT NULL, "
    "dataset_id BIGINT NOT NULL, snapshot TEXT, PRIMARY KEY (run_id, at_us, role, dataset_id))",
    "CREATE TABLE snapshots (dataset_id BIGINT NOT NULL, snapshot TEXT NOT NULL, written_by_run_id TEXT NOT NULL, "
    "written_at_us BIGINT NOT NULL, PRIMARY KEY (dataset_id, snapshot))",
    # each edge over each stretch of its job's COMPLETEs that stated it: [valid_from_us, valid_until_us)
    "CREATE TABLE column_edges (job_id BIGINT NOT NULL, source_column_id BIGINT NOT NULL, target_id BIGINT NOT NULL, "
    "into_table BOOLEAN NOT NULL, type TEXT NOT NULL, subtype TEXT NOT NULL, masking BOOLEAN NOT NULL, "
    "valid_from_us BIGINT NOT NULL, valid_until_us BIGINT, first_run_id TEXT NOT NULL, last_run_id TEXT NOT NULL, "
    "last_at_us BIGINT NOT NULL)",
    "CREATE INDEX column_edges_by_source ON column_edges (source_column_id)",
    "CREATE INDEX column_edges_by_job ON column_edges (job_id)",
)

VERSION_2 = (
    "CREATE TABLE classifications (dataset_id BIGINT NOT NULL, column_name TEXT NOT NULL, class TEXT NOT NULL, "
    "source TEXT NOT NULL, updated_at_us BIGINT NOT NULL, PRIMARY KEY (dataset_id, column_name, source))",
    "CREATE TABLE owners (dataset_id BIGINT PRIMARY KEY, owner TEXT NOT NULL, tier TEXT, "
    "updated_at_us BIGINT NOT NULL)",
    "CREATE TABLE declarations (job_id BIGINT NOT NULL, source TEXT NOT NULL, shape_id BIGINT NOT NULL, "
    "owner TEXT, reason TEXT, sql_hash TEXT, updated_at_us BIGINT NOT NULL, PRIMARY KEY (job_id, source))",
    "CREATE TABLE findings (governance_run TEXT NOT NULL, position INTEGER NOT NULL, kind TEXT NOT NULL, "
    "severity TEXT NOT NULL, subject TEXT NOT NULL, message TEXT NOT NULL, evidence TEXT, "
    "created_at_us BIGINT NOT NULL, PRIMARY KEY (governance_run, position))",
)


def without_key(table: str, columns: str, *indexes: str) -> tuple[str, ...]:
    """Return the statements that rebuild `table` with `columns` and `indexes` and no primary key, its rows kept."""
    return (
        *(f"DROP INDEX IF EXISTS {index.split()[2]}" for index in indexes),
        f"ALTER TABLE {table} RENAME TO {table}_keyed",
        f"CREATE TABLE {table} ({columns})",
        f"INSERT INTO {table} SELECT * FROM {table}_keyed",
        f"DROP TABLE {table}_keyed",
        *indexes,
    )


VERSION_3 = (
    # events' JSON kept together: up to `bodies.BLOCK` events of a batch in one zstd frame, one line each
    "CREATE TABLE event_blocks (block_id BIGINT PRIMARY KEY, body {blob} NOT NULL)",
    "ALTER TABLE events ADD COLUMN block_id BIGINT",
    "ALTER TABLE events ADD COLUMN block_line INTEGER",
    "ALTER TABLE events ALTER COLUMN body DROP NOT NULL",
    # rows derived only from events just added (each once, by the events' key) keep no key index of their own
    *without_key(
        "runs",
        "run_id TEXT NOT NULL, job_id BIGINT NOT NULL, state TEXT NOT NULL, state_terminal BOOLEAN "
        "NOT NULL, state_at_us BIGINT NOT NULL, state_rank INTEGER NOT NULL, state_time TEXT NOT NULL, "
        "dag_run_id TEXT, try_number INTEGER",
        "CREATE INDEX runs_by_job ON runs (job_id)",
    ),
    *without_key(
        "completes",
        "run_id TEXT NOT NULL, at_us BIGINT NOT NULL, event_time TEXT NOT NULL, job_id BIGINT "
        "NOT NULL, shape_id BIGINT NOT NULL, sql_hash TEXT, try_number INTEGER, dag_run_id TEXT, "
        "valid_until_us BIGINT",
        "CREATE INDEX completes_by_job ON completes (job_id, at_us)",
    ),
    *without_key(
        "run_datasets",
        "run_id TEXT NOT NULL, at_us BIGINT NOT NULL, role TEXT NOT NULL, dataset_id BIGINT NOT NULL, snapshot TEXT",
    ),
    # the runs that read or wrote a snapshot, for tracing by snapshot (backwards to its writer, forwards to readers)
    "CREATE INDEX run_datasets_by_snapshot ON run_datasets (dataset_id, snapshot)",
    "CREATE INDEX run_datasets_by_run ON run_datasets (run_id)",
    "CREATE INDEX completes_by_run ON completes (run_id, at_us)",
    # the events of one DAG run, for the runs with no COMPLETE
    "CREATE INDEX events_by_dag_run ON events (dag_run_id)",
)

VERSION_4 = (
    # per event source synced (a Marquez URL, an events file): the latest event time read from it, and when
    "CREATE TABLE source_watermarks (source TEXT PRIMARY KEY, watermark_us BIGINT, watermark_time TEXT, "
    "synced_at_us BIGINT NOT NULL)",
)

STRETCHES = (
    # each stretch of consecutive COMPLETEs of a job stating one shape, per table the shape writes: [from, until)
    "WITH ordered AS (SELECT c.job_id, c.at_us, c.valid_until_us, c.shape_id, ROW_NUMBER() OVER (PARTITION BY "
    "c.job_id ORDER BY c.at_us, c.run_id{text}, c.event_time{text}) AS place FROM {completes}), "
    "stated AS (SELECT job_id, shape_id, place, place - ROW_NUMBER() OVER (PARTITION BY job_id, shape_id ORDER BY "
    "place) AS island FROM ordered), "
    "islands AS (SELECT job_id, shape_id, MIN(place) AS first_place, MAX(place) AS last_place FROM stated GROUP BY "
    "job_id, shape_id, island) "
    "SELECT so.dataset_id, i.job_id, i.shape_id, f.at_us, l.valid_until_us, l.at_us FROM islands i "
    "JOIN ordered f ON f.job_id = i.job_id AND f.place = i.first_place "
    "JOIN ordered l ON l.job_id = i.job_id AND l.place = i.last_place "
    "JOIN shape_outputs so ON so.shape_id = i.shape_id{kept}"
)
"""The rows of `table_writers` from the COMPLETEs `c` that `{completes}` reads: `completes c` for every job's, or an
ingest's FROM items narrowing them to the jobs and times it re-derives; `{kept}` narrows the stretches kept (empty:
every one)."""

VERSION_5 = (
    # the writer of a table at a time, looked up by table: each job's stretches of one shape, per table it writes
    "CREATE TABLE table_writers (dataset_id BIGINT NOT NULL, job_id BIGINT NOT NULL, shape_id BIGINT NOT NULL, "
    "valid_from_us BIGINT NOT NULL, valid_until_us BIGINT, last_at_us BIGINT NOT NULL)",
    "INSERT INTO table_writers (dataset_id, job_id, shape_id, valid_from_us, valid_until_us, last_at_us) "
    + STRETCHES.replace("{completes}", "completes c").replace("{kept}", ""),
    "CREATE INDEX table_writers_by_dataset ON table_writers (dataset_id)",
    "CREATE INDEX table_writers_by_job ON table_writers (job_id)",
    # a shape's columns, and a job's COMPLETEs, by that key alone: DuckDB looks a key up in an index of one column only
    "CREATE INDEX shape_columns_by_shape ON shape_columns (shape_id)",
    "CREATE INDEX completes_by_job_alone ON completes (job_id)",
)

VERSION_6 = (
    # where the last sync of an events file stopped (after its last whole line), and the file it read then
    "ALTER TABLE source_watermarks ADD COLUMN read_to_byte BIGINT",
    "ALTER TABLE source_watermarks ADD COLUMN read_to_line BIGINT",
    "ALTER TABLE source_watermarks ADD COLUMN file_size BIGINT",
    "ALTER TABLE source_watermarks ADD COLUMN file_inode BIGINT",
    "ALTER TABLE source_watermarks ADD COLUMN first_line_sha256 TEXT",
    # each governance run (`<dag_id>/<run_id>`), and its findings in the version 2 table, by subject
    "CREATE TABLE governance_runs (governance_run TEXT PRIMARY KEY, dag_id TEXT NOT NULL, run_id TEXT NOT NULL, "
    "logical_date TEXT NOT NULL, checked_at_us BIGINT NOT NULL, source TEXT, target_dag_id TEXT, target_run_id TEXT, "
    "errors INTEGER NOT NULL, warnings INTEGER NOT NULL, coverage TEXT NOT NULL)",
    "ALTER TABLE findings ADD COLUMN subject_kind TEXT",
    "CREATE INDEX findings_by_subject ON findings (subject)",
)

SNAPSHOT_PAIRS = (
    "SELECT o.k, i.k, COALESCE(o.at_us, i.at_us) AS at_us{each_run} FROM (SELECT {run}, at_us, {snapshot_key} AS "
    "k FROM {datasets} WHERE role = 'output' AND snapshot IS NOT NULL) o FULL JOIN (SELECT {run}, at_us, "
    "{snapshot_key} AS k FROM {datasets} WHERE role = 'input' AND snapshot IS NOT NULL) i ON i.{run} = o.{run} AND "
    "i.at_us = o.at_us"
)
"""The rows of `snapshot_reads` (written key, read key, instant, then `{each_run}`) of the `run_datasets` rows of the
relation `{datasets}`, each key `ids.SNAPSHOT_KEY` (`{snapshot_key}`), their runs told apart by the column `{run}`
(`run_id` before version 16, `run_key` from it on). `{each_run}` is `EACH_RUN` from version 20 on (each row's run
key), else empty."""

EACH_RUN = ", COALESCE(o.run_key, i.run_key)"
"""What `SNAPSHOT_PAIRS` returns after a row's instant from schema version 20 on: the key of the row's run."""

READ_RUNS_FROM = 20
"""The schema version from which each `snapshot_reads` row keeps its run's key (`run_key`)."""

VERSION_7 = (
    # per COMPLETE, each snapshot it read into each snapshot it wrote, by `ids.snapshot_key`: what a trace walks on
    # DuckDB (a snapshot it wrote with none read, or read with none written, beside NULL)
    "CREATE TABLE snapshot_reads (written_key BIGINT, read_key BIGINT, at_us BIGINT NOT NULL)",
    "INSERT INTO snapshot_reads (written_key, read_key, at_us) "
    + SNAPSHOT_PAIRS.replace("{datasets}", "run_datasets").replace("{run}", "run_id").replace("{each_run}", ""),
)


@dataclass(frozen=True)
class OnlyOn:
    """A migration statement run on one engine only (`Engine.dialect`)."""

    dialect: str
    statement: str


VERSION_8 = (
    # DuckDB looks a key up in an index of one column only: it never reads these indexes of two, which take about a
    # quarter of its file (PostgreSQL reads them)
    OnlyOn("duckdb", "DROP INDEX IF EXISTS completes_by_job"),
    OnlyOn("duckdb", "DROP INDEX IF EXISTS completes_by_run"),
    OnlyOn("duckdb", "DROP INDEX IF EXISTS run_datasets_by_snapshot"),
)

VERSION_9 = (
    # DuckDB reads `run_datasets` by run id (and instant) with a scan, and `runs` only in the ingest's DELETE, a
    # join: these indexes were a seventh of its file (PostgreSQL reads them)
    OnlyOn("duckdb", "DROP INDEX IF EXISTS run_datasets_by_run"),
    OnlyOn("duckdb", "DROP INDEX IF EXISTS runs_by_job"),
)

EDGE_COLUMNS_READ = "valid_from_us, valid_until_us, target_id, into_table, type, subtype, masking, job_id"
"""The columns of `column_edges` an impact walk and every edge as of a time read, besides the source."""

VERSION_10 = (
    # PostgreSQL answers from the index alone (an index-only scan; the table's rows are far wider, with run ids): a
    # walk looks up each column's edges in a few index pages, and every edge as of a time scans the index
    OnlyOn("postgres", "DROP INDEX IF EXISTS column_edges_by_source"),
    OnlyOn(
        "postgres",
        f"CREATE INDEX column_edges_by_source ON column_edges (source_column_id) INCLUDE ({EDGE_COLUMNS_READ})",
    ),
)

EDGE_FILL_FACTOR = 70
"""How full PostgreSQL fills a page of `column_edges` and `table_writers` (percent) when it writes rows anew."""

VERSION_11 = (
    # an ingest moves the open interval of every edge of each job it touches on in place: with room left on each page,
    # PostgreSQL writes the new row beside the old one and leaves the indexes as they are (a HOT update), where on a
    # full page it wrote the row elsewhere and added an entry to every index
    OnlyOn("postgres", f"ALTER TABLE column_edges SET (fillfactor = {EDGE_FILL_FACTOR})"),
    OnlyOn("postgres", f"ALTER TABLE table_writers SET (fillfactor = {EDGE_FILL_FACTOR})"),
)

VERSION_12 = (
    # which run first wrote each snapshot: no question reads it (a trace finds a snapshot's latest writer in
    # `run_datasets`), and keeping its key unique cost an ingest a look-up per snapshot written (half a second a batch
    # at 10,000,000 events on DuckDB) and a tenth of the store
    "DROP TABLE IF EXISTS snapshots",
    # PostgreSQL's traces walk `run_datasets` by its indexes and never read what DuckDB's walk (5% of the store)
    OnlyOn("postgres", "DROP TABLE IF EXISTS snapshot_reads"),
)

VERSION_13 = (
    # the SHA-256 of each event's JSON: no question reads it (a block's id is its content's hash), and working it out
    # cost an ingest a twentieth of its parsing; an event stored from this version on leaves it NULL (DuckDB alters
    # no table another index depends on: the index by DAG run is made again)
    OnlyOn("duckdb", "DROP INDEX IF EXISTS events_by_dag_run"),
    "ALTER TABLE events ALTER COLUMN content_sha256 DROP NOT NULL",
    OnlyOn("duckdb", "CREATE INDEX events_by_dag_run ON events (dag_run_id)"),
)

VERSION_14 = (
    # a trace back looks up the writers of each snapshot it meets, a trace forward its readers: by snapshot alone,
    # PostgreSQL read every row of the snapshot from the table to keep those of the role (a source's snapshot of a day
    # has hundreds of readers), with the role in the index it reads only the rows it keeps
    OnlyOn("postgres", "DROP INDEX IF EXISTS run_datasets_by_snapshot"),
    OnlyOn("postgres", "CREATE INDEX run_datasets_by_snapshot ON run_datasets (dataset_id, snapshot, role)"),
)

FAR_APART_US = 86_400_000_000
"""How far apart (a day, in microseconds) the `snapshot_reads` rows of a snapshot may lie before `snapshot_spans` marks
it `far_apart`. Stored with each key: changing it needs a migration that works the marks out again."""

VERSION_15 = (
    # per snapshot key of `snapshot_reads`, the earliest and latest instant of its rows (written or read), and
    # whether they lie more than FAR_APART_US apart: a trace on DuckDB finds a snapshot's rows by its key's span
    # instead of scanning the whole table (its keys are hashes, in no order), and looks beyond the instants it walks
    # only for the keys far apart
    OnlyOn(
        "duckdb",
        "CREATE TABLE snapshot_spans (snapshot_key BIGINT PRIMARY KEY, first_at_us BIGINT NOT NULL, last_at_us BIGINT "
        "NOT NULL, far_apart BOOLEAN NOT NULL)",
    ),
    OnlyOn(
        "duckdb",
        "INSERT INTO snapshot_spans SELECT k, MIN(at_us), MAX(at_us), MAX(at_us) - MIN(at_us) > "
        f"{FAR_APART_US} FROM (SELECT written_key AS k, at_us FROM snapshot_reads WHERE written_key IS NOT NULL "
        "UNION ALL SELECT read_key, at_us FROM snapshot_reads WHERE read_key IS NOT NULL) AS named GROUP BY k",
    ),
)

COMPLETES_16 = (
    "run_id TEXT NOT NULL, at_us BIGINT NOT NULL, event_time TEXT NOT NULL, job_id BIGINT NOT NULL, shape_id BIGINT "
    "NOT NULL, sql_hash TEXT, try_number INTEGER, dag_run_id TEXT, valid_until_us BIGINT, run_key BIGINT NOT NULL"
)
RUN_DATASETS_16 = (
    "run_key BIGINT NOT NULL, at_us BIGINT NOT NULL, role TEXT NOT NULL, dataset_id BIGINT NOT NULL, snapshot TEXT"
)

EVENTS_16 = (
    "run_id TEXT NOT NULL, event_type TEXT NOT NULL, at_us BIGINT NOT NULL, event_time TEXT NOT NULL, job_id BIGINT "
    "NOT NULL, content_sha256 TEXT, body {blob}, ingested_at_us BIGINT NOT NULL, dag_run_id TEXT, try_number INTEGER, "
    "block_id BIGINT, block_line INTEGER, run_key BIGINT NOT NULL, PRIMARY KEY (run_key, event_type, at_us)"
)

VERSION_16 = (
    # a run keyed by a number (`ids.run_key`, `{run_key}` in SQL): `run_datasets` keeps the key instead of the run id's
    # text (about 40 bytes a row, three rows a COMPLETE on PostgreSQL), `events` and `completes` the key beside the id,
    # and the events' primary key and PostgreSQL's indexes by run hold the key (each table made anew, its rows kept
    # in their order)
    "DROP INDEX IF EXISTS events_by_dag_run",
    "ALTER TABLE events RENAME TO events_before_16",
    OnlyOn("postgres", "ALTER TABLE events_before_16 RENAME CONSTRAINT events_pkey TO events_before_16_pkey"),
    f"CREATE TABLE events ({EVENTS_16})",
    "INSERT INTO events SELECT run_id, event_type, at_us, event_time, job_id, content_sha256, body, ingested_at_us, "
    "dag_run_id, try_number, block_id, block_line, {run_key} FROM events_before_16",
    "DROP TABLE events_before_16",
    "CREATE INDEX events_by_dag_run ON events (dag_run_id)",
    "DROP INDEX IF EXISTS completes_by_job",
    "DROP INDEX IF EXISTS completes_by_job_alone",
    "DROP INDEX IF EXISTS completes_by_run",
    "ALTER TABLE completes RENAME TO completes_before_16",
    f"CREATE TABLE completes ({COMPLETES_16})",
    "INSERT INTO completes SELECT run_id, at_us, event_time, job_id, shape_id, sql_hash, try_number, dag_run_id, "
    "valid_until_us, {run_key} FROM completes_before_16",
    "DROP TABLE completes_before_16",
    OnlyOn("postgres", "CREATE INDEX completes_by_job ON completes (job_id, at_us)"),
    "CREATE INDEX completes_by_job_alone ON completes (job_id)",
    OnlyOn("postgres", "CREATE INDEX completes_by_run ON completes (run_key, at_us)"),
    "DROP INDEX IF EXISTS run_datasets_by_snapshot",
    "DROP INDEX IF EXISTS run_datasets_by_run",
    "ALTER TABLE run_datasets RENAME TO run_datasets_before_16",
    f"CREATE TABLE run_datasets ({RUN_DATASETS_16})",
    "INSERT INTO run_datasets SELECT {run_key}, at_us, role, dataset_id, snapshot FROM run_datasets_before_16",
    "DROP TABLE run_datasets_before_16",
    OnlyOn("postgres", "CREATE INDEX run_datasets_by_snapshot ON run_datasets (dataset_id, snapshot, role)"),
    OnlyOn("postgres", "CREATE INDEX run_datasets_by_run ON run_datasets (run_key)"),
)


def final_states(text_order: str, where: str = "") -> str:
    """Return the query of each run's final state, as `final_events` reads it, over the events `where` keeps.

    A run's final state is its latest terminal event, else its latest event: by instant, then type (COMPLETE beats
    START at one instant: `TYPE_RANK`), then the time as written.

    Args:
        text_order: What follows a text expression in ORDER BY (`Engine.text_order`, or `{text}` in a migration).
        where: A condition on `events` (with its `?` parameters), or empty for every event.

    Returns:
        A SELECT of the columns of `runs`: run_id, job_id, state, state_terminal, state_at_us, state_rank,
        state_time, dag_run_id, try_number.
    """
    rank = " ".join(f"WHEN '{kind}' THEN {rank}" for kind, rank in TYPE_RANK.items())
    terminal = ", ".join(f"'{kind}'" for kind in TERMINAL)
    return (
        "SELECT run_id, job_id, state, state_terminal, state_at_us, state_rank, state_time, dag_run_id, try_number "
        "FROM (SELECT e.*, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY state_terminal DESC, state_at_us DESC, "
        f"state_rank DESC, state_time{text_order} DESC) AS place FROM (SELECT run_id, job_id, event_type AS state, "
        f"event_type IN ({terminal}) AS state_terminal, at_us AS state_at_us, CASE event_type {rank} ELSE 1 END AS "
        "state_rank, event_time AS state_time, dag_run_id, try_number FROM events"
        f"{f' WHERE {where}' if where else ''}) AS e) AS ranked WHERE place = 1"
    )


VERSION_17 = (
    # each run's final state worked out from its events when asked, instead of rows each batch replaced: no question
    # reads it often, and the rows repeated each run's id, time as written and DAG run (with their index, about an
    # eighth of a PostgreSQL store)
    "DROP TABLE runs",
    "CREATE VIEW runs AS " + final_states("{text}"),
)

COMPLETES_IN_EVENTS_FROM = 18
"""The schema version from which, on PostgreSQL, a COMPLETE's `completes` columns are in its `events` row."""

EVENTS_18 = (
    "run_id TEXT NOT NULL, event_type TEXT NOT NULL, at_us BIGINT NOT NULL, event_time TEXT NOT NULL, job_id BIGINT "
    "NOT NULL, content_sha256 TEXT, body {blob}, ingested_at_us BIGINT NOT NULL, dag_run_id TEXT, try_number INTEGER, "
    "block_id BIGINT, block_line INTEGER, run_key BIGINT NOT NULL, shape_id BIGINT, sql_hash TEXT, valid_until_us "
    "BIGINT, PRIMARY KEY (run_key, event_type, at_us)"
)

COMPLETES_VIEW = (
    "SELECT run_id, at_us, event_time, job_id, shape_id, sql_hash, try_number, dag_run_id, valid_until_us, run_key "
    "FROM events WHERE event_type = 'COMPLETE' AND shape_id IS NOT NULL"
)
COMPLETES_BY_JOB = (
    "CREATE INDEX completes_by_job ON events (job_id, at_us) WHERE event_type = 'COMPLETE' AND shape_id IS NOT NULL"
)
"""On PostgreSQL from schema version 18, a job's COMPLETEs by instant: a partial index of `events` on the view's
condition, which PostgreSQL matches to it."""

VERSION_18 = tuple(
    OnlyOn("postgres", statement)
    for statement in (
        # on PostgreSQL, whose rows are not compressed, a COMPLETE's `completes` row repeated its event's run id, key,
        # instant, time as written, job, try and DAG run (about 130 of its 190 bytes): its shape, SQL hash and
        # interval go into its events row, and `completes` reads them there (a view PostgreSQL inlines and updates
        # through); its events row is found by run key, type and instant (the events' primary key), by job and
        # instant through `completes_by_job`, now an index of `events`. DuckDB, which compresses each column, keeps
        # its table. The view `runs` reads the table it was made over: made again over the new one.
        "DROP VIEW runs",
        "DROP INDEX IF EXISTS events_by_dag_run",
        "ALTER TABLE events RENAME TO events_before_18",
        "ALTER TABLE events_before_18 RENAME CONSTRAINT events_pkey TO events_before_18_pkey",
        f"CREATE TABLE events ({EVENTS_18})",
        "INSERT INTO events SELECT e.*, c.shape_id, c.sql_hash, c.valid_until_us FROM events_before_18 e LEFT JOIN "
        "completes c ON e.event_type = 'COMPLETE' AND c.run_key = e.run_key AND c.at_us = e.at_us AND c.run_id = "
        "e.run_id",
        "DROP TABLE events_before_18",
        "CREATE VIEW runs AS " + final_states("{text}"),
        "CREATE INDEX events_by_dag_run ON events (dag_run_id)",
        "DROP TABLE completes",
        f"CREATE VIEW completes AS {COMPLETES_VIEW}",
        COMPLETES_BY_JOB,
    )
)

EVENT_TYPE = "run_event_type"
"""PostgreSQL's type of `events.event_type` from schema version 19 on: one of the event types the store keeps."""
DATASET_ROLE = "run_dataset_role"
"""PostgreSQL's type of `run_datasets.role` from schema version 19 on: `input` or `output`."""

EVENTS_19 = (
    ("at_us", "BIGINT NOT NULL"),
    ("run_key", "BIGINT NOT NULL"),
    ("job_id", "BIGINT NOT NULL"),
    ("ingested_at_us", "BIGINT NOT NULL"),
    ("block_id", "BIGINT"),
    ("shape_id", "BIGINT"),
    ("valid_until_us", "BIGINT"),
    ("try_number", "INTEGER"),
    ("block_line", "INTEGER"),
    ("event_type", f"{EVENT_TYPE} NOT NULL"),
    ("run_id", "TEXT NOT NULL"),
    ("event_time", "TEXT NOT NULL"),
    ("dag_run_id", "TEXT"),
    ("sql_hash", "TEXT"),
    ("content_sha256", "TEXT"),
    ("body", "BYTEA"),
)
RUN_DATASETS_19 = (
    ("run_key", "BIGINT NOT NULL"),
    ("at_us", "BIGINT NOT NULL"),
    ("dataset_id", "BIGINT NOT NULL"),
    ("role", f"{DATASET_ROLE} NOT NULL"),
    ("snapshot", "TEXT"),
)
"""The columns (name, type) of `events` and `run_datasets` on PostgreSQL from schema version 19 on, in their order."""


def made_anew(table: str, version: int, columns: tuple[tuple[str, str], ...], key: str = "") -> tuple[str, ...]:
    """Return the statements that make `table` anew with `columns` (name, type) in their order, its rows kept.

    Each row's value is cast to its column's new type; the old table is renamed `<table>_before_<version>` (with its
    primary key's constraint, when `key` gives the new table one) and dropped once its rows are copied.
    """
    before = f"{table}_before_{version}"
    names = ", ".join(name for name, _ in columns)
    values = ", ".join(f"CAST({name} AS {kind.removesuffix(' NOT NULL')})" for name, kind in columns)
    defined = ", ".join(f"{name} {kind}" for name, kind in columns)
    return (
        f"ALTER TABLE {table} RENAME TO {before}",
        *((f"ALTER TABLE {before} RENAME CONSTRAINT {table}_pkey TO {before}_pkey",) if key else ()),
        f"CREATE TABLE {table} ({defined}{f', PRIMARY KEY ({key})' if key else ''})",
        f"INSERT INTO {table} ({names}) SELECT {values} FROM {before}",
        f"DROP TABLE {before}",
    )


VERSION_19 = tuple(
    OnlyOn("postgres", statement)
    for statement in (
        # PostgreSQL aligns each number to 8 bytes and keeps each text with its length: an event type (`COMPLETE`, 9
        # bytes) or a role (`output`, 7) before a number took up to 16 or 8, and a text between two numbers padded
        # the second. The event type and the role become enumerated types (4 bytes, written and compared as the
        # same text), and each table's columns are ordered numbers first, then texts: a COMPLETE's events row about
        # 30 bytes narrower, its primary key's entry 8, a `run_datasets` row 4 to 8 and its entry by snapshot 8 (each
        # table made anew, its rows kept). The views over `events` are made again over the new table.
        "CREATE TYPE " + EVENT_TYPE + " AS ENUM (" + ", ".join(f"'{kind}'" for kind in sorted(EVENT_TYPES)) + ")",
        f"CREATE TYPE {DATASET_ROLE} AS ENUM ('input', 'output')",
        "DROP VIEW runs",
        "DROP VIEW completes",
        "DROP INDEX IF EXISTS events_by_dag_run",
        "DROP INDEX IF EXISTS completes_by_job",
        *made_anew("events", 19, EVENTS_19, key="run_key, event_type, at_us"),
        "CREATE VIEW runs AS " + final_states("{text}"),
        f"CREATE VIEW completes AS {COMPLETES_VIEW}",
        "CREATE INDEX events_by_dag_run ON events (dag_run_id)",
        COMPLETES_BY_JOB,
        "DROP INDEX IF EXISTS run_datasets_by_snapshot",
        "DROP INDEX IF EXISTS run_datasets_by_run",
        *made_anew("run_datasets", 19, RUN_DATASETS_19),
        "CREATE INDEX run_datasets_by_snapshot ON run_datasets (dataset_id, snapshot, role)",
        "CREATE INDEX run_datasets_by_run ON run_datasets (run_key)",
    )
)

VERSION_20 = tuple(
    OnlyOn("duckdb", statement)
    for statement in (
        # each row of `snapshot_reads` names its run (`run_key`): a trace forward hands the runs it met to the query of
        # their rows as they are, where it picked them out again among the runs at the instants it met, by the key of
        # each table's snapshot worked out anew (an MD5 a row). The table is made anew in the order of its instants,
        # which a trace's ranges of instants read by
        "ALTER TABLE snapshot_reads RENAME TO snapshot_reads_before_20",
        "CREATE TABLE snapshot_reads (written_key BIGINT, read_key BIGINT, at_us BIGINT NOT NULL, run_key BIGINT NOT "
        "NULL)",
        "INSERT INTO snapshot_reads (written_key, read_key, at_us, run_key) "
        + SNAPSHOT_PAIRS.replace("{datasets}", "run_datasets")
        .replace("{run}", "run_key")
        .replace("{each_run}", EACH_RUN)
        + " ORDER BY at_us",
        "DROP TABLE snapshot_reads_before_20",
    )
)

MIGRATIONS: dict[int, tuple[str | OnlyOn, ...]] = {
    1: VERSION_1,
    2: VERSION_2,
    3: VERSION_3,
    4: VERSION_4,
    5: VERSION_5,
    6: VERSION_6,
    7: VERSION_7,
    8: VERSION_8,
    9: VERSION_9,
    10: VERSION_10,
    11: VERSION_11,
    12: VERSION_12,
    13: VERSION_13,
    14: VERSION_14,
    15: VERSION_15,
    16: VERSION_16,
    17: VERSION_17,
    18: VERSION_18,
    19: VERSION_19,
    20: VERSION_20,
}
"""Each schema version's statements, applied in order from the store's version to `SCHEMA_VERSION`."""

SCHEMA_VERSION = max(MIGRATIONS)
"""The schema version this provider writes."""

TABLES = (
    "jobs",
    "datasets",
    "dataset_columns",
    "events",
    "runs",
    "shapes",
    "shape_columns",
    "shape_outputs",
    "shape_edges",
    "completes",
    "run_datasets",
    "column_edges",
    "classifications",
    "owners",
    "declarations",
    "findings",
    "source_watermarks",
    "table_writers",
    "governance_runs",
    "snapshot_reads",
    "snapshot_spans",
)
"""The store's tables (besides `store_versions` and `event_blocks`, how the events' JSON is kept), as `stats` counts
them."""

DUCKDB_ONLY = ("snapshot_reads", "snapshot_spans")
"""The tables only a DuckDB store keeps: what its traces walk (PostgreSQL's walk `run_datasets` by its indexes)."""


def tables_of(dialect: str) -> tuple[str, ...]:
    """Return the store's tables on an engine (`TABLES`, less those only DuckDB keeps on PostgreSQL).

    Args:
        dialect: The engine's dialect (`duckdb` or `postgres`).

    Returns:
        The tables' names, in `TABLES`' order.
    """
    return TABLES if dialect == "duckdb" else tuple(table for table in TABLES if table not in DUCKDB_ONLY)
