"""`make demo`: seeds the platform, runs the nightly platform DAG through real Airflow, and prints what the
events say. Every file lives under .demo/.

    PYTHONPATH=dags python -m learning_platform.demo
    LINEAGE_GOVERNANCE_DEMO_CATALOG=rest PYTHONPATH=dags python -m learning_platform.demo   # `make demo CATALOG=rest`

The catalog is a local SQLite catalog (`sql`, the default) or a real Iceberg REST catalog server (`rest`) that
scripts/iceberg-rest starts on 127.0.0.1 for the demo's length.

By default the OpenLineage file transport writes .demo/events.jsonl and the governance reads it. Two variables,
when set, are honoured as given (every other AIRFLOW* variable is left out, so a developer's own Airflow
settings never leak in):

- AIRFLOW__OPENLINEAGE__TRANSPORT: the provider's transport, e.g. an HTTP transport pointed at Marquez:
  `{"type": "http", "url": "http://localhost:5000", "timeout": 2, "retry": {"total": 1, "connect": 1, "read": 1}}`
- LINEAGE_GOVERNANCE_EVENTS: the event source the governance DAG and the demo sync into the lineage store (a JSONL
  file or a Marquez URL). Unset: the file transport's file, or the HTTP transport's URL.

The governance DAG syncs the event source into the lineage store and answers from it, and the demo prints its answers
from the same store: .demo/lineage-store.duckdb (DuckDB), or what AIRFLOW__LINEAGE_GOVERNANCE__STORE names when set
(honoured as given, e.g. a `postgresql://user:password@host:5432/database` URL; every other AIRFLOW* variable of
the caller is still left out).

LINEAGE_GOVERNANCE_DEMO_NAMESPACE (default `platform`) names the demo's OpenLineage job namespace, and its
datasets' namespace `iceberg://<namespace>`: two demo runs sent to one Marquez stay apart by it. The declared
lineage of governance/lineage.toml is written for `iceberg://platform`, so under another namespace the governance
run no longer finds it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_catalog, open_local_catalog
from learning_platform.pipelines import NIGHTLY
from learning_platform.seed import CATALOG_NAME, seed_platform

DAGS_FOLDER = Path(__file__).resolve().parents[1]
"""The dags folder this package lives in (Airflow puts it on sys.path, so the DAGs import `learning_platform`)."""
GOVERNANCE_FOLDER = DAGS_FOLDER.parent / "governance"
"""The repository's governance/ folder: metadata.toml and lineage.toml of the platform."""
LOGICAL_DATE = NIGHTLY.isoformat()
REST_SCRIPTS = DAGS_FOLDER.parent / "scripts" / "iceberg-rest"
"""scripts/iceberg-rest: start.sh FOLDER and stop.sh FOLDER of the loopback Iceberg REST catalog server."""
CATALOG_KINDS = ("sql", "rest")


DEFAULT_NAMESPACE = "platform"


class DemoCatalogError(Exception):
    """Raised when the demo's catalog cannot be had; the message is one sentence saying what to do."""


def demo_catalog_kind() -> str:
    """Returns the demo's catalog kind (LINEAGE_GOVERNANCE_DEMO_CATALOG: `sql`, the default, or `rest`); raises
    DemoCatalogError for another."""
    kind = os.environ.get("LINEAGE_GOVERNANCE_DEMO_CATALOG", "").strip().lower() or "sql"
    if kind not in CATALOG_KINDS:
        raise DemoCatalogError(f"LINEAGE_GOVERNANCE_DEMO_CATALOG (make demo CATALOG=…) is {kind!r}; use sql or rest.")
    return kind


def _rest_script(name: str, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(REST_SCRIPTS / name), str(folder)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@contextmanager
def demo_catalog(folder: Path, kind: str) -> Iterator[dict[str, str]]:
    """Gives the pyiceberg properties of the demo's catalog of `kind`, empty: a SQLite catalog in FOLDER/catalog,
    or a REST catalog server started in FOLDER/rest-catalog (its log: server.log) and stopped afterwards.
    Raises DemoCatalogError with start.sh's sentence when the server does not start."""
    if kind == "sql":
        yield local_catalog_properties(folder / "catalog")
        return
    server = folder / "rest-catalog"
    _rest_script("stop.sh", server)  # one a killed demo left running
    shutil.rmtree(server, ignore_errors=True)
    started = _rest_script("start.sh", server)
    if started.returncode != 0:
        raise DemoCatalogError(started.stderr.strip() or f"start.sh exited {started.returncode}.")
    try:
        yield {"type": "rest", "uri": started.stdout.strip().splitlines()[-1]}
    finally:
        _rest_script("stop.sh", server)


def demo_namespace() -> str:
    """Returns the demo's OpenLineage job namespace: $LINEAGE_GOVERNANCE_DEMO_NAMESPACE, else `platform`. Its
    datasets are in `iceberg://<namespace>`."""
    return os.environ.get("LINEAGE_GOVERNANCE_DEMO_NAMESPACE", "").strip() or DEFAULT_NAMESPACE


def demo_transport(folder: Path) -> str:
    """Returns the OpenLineage transport of the demo: $AIRFLOW__OPENLINEAGE__TRANSPORT when set, else the file
    transport appending to events.jsonl in `folder`."""
    return os.environ.get("AIRFLOW__OPENLINEAGE__TRANSPORT") or json.dumps(
        {"type": "file", "log_file_path": str(folder / "events.jsonl"), "append": True}
    )


def demo_events(folder: Path) -> str:
    """Returns where the demo reads events: $LINEAGE_GOVERNANCE_EVENTS when set, else where the transport sends
    them (the file transport's file, the HTTP transport's URL), else events.jsonl in `folder`."""
    configured = os.environ.get("LINEAGE_GOVERNANCE_EVENTS")
    if configured:
        return configured
    try:
        transport = json.loads(demo_transport(folder))
    except ValueError:
        transport = {}
    if isinstance(transport, dict):
        found = transport.get({"file": "log_file_path", "http": "url"}.get(str(transport.get("type")), ""))
        if isinstance(found, str) and found:
            return found
    return str(folder / "events.jsonl")


def demo_store(folder: Path) -> str:
    """Returns the lineage store of the demo: $AIRFLOW__LINEAGE_GOVERNANCE__STORE when set (a DuckDB file or a
    postgresql:// URL), else lineage-store.duckdb in `folder`."""
    return os.environ.get("AIRFLOW__LINEAGE_GOVERNANCE__STORE") or str(folder / "lineage-store.duckdb")


def demo_env(folder: Path, catalog_properties: dict[str, str] | None = None) -> dict[str, str]:
    """Returns the environment of the demo's Airflow: its catalog (`catalog_properties`, the local SQLite catalog
    by default), SQLite, the OpenLineage transport and event source of `demo_transport` and `demo_events`
    (the file transport unless the caller's environment names another), the lineage store of `demo_store`, and
    the job and dataset namespaces of `demo_namespace`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    properties = catalog_properties or local_catalog_properties(folder / "catalog")
    namespace = demo_namespace()
    catalog = {**properties, "catalog_name": CATALOG_NAME, "lineage_namespace": f"iceberg://{namespace}"}
    env.update(
        {
            "AIRFLOW_HOME": str(folder / "airflow"),
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__OPENLINEAGE__NAMESPACE": namespace,
            "AIRFLOW__OPENLINEAGE__TRANSPORT": demo_transport(folder),
            "AIRFLOW_CONN_ICEBERG_DEFAULT": json.dumps({"conn_type": "iceberg_catalog", "extra": catalog}),
            "LINEAGE_GOVERNANCE_REPORT_DIR": str(folder),
            "LINEAGE_GOVERNANCE_EVENTS": demo_events(folder),
            "AIRFLOW__LINEAGE_GOVERNANCE__STORE": demo_store(folder),
            "LINEAGE_GOVERNANCE_DIR": str(GOVERNANCE_FOLDER),
            "LINEAGE_GOVERNANCE_WAIT_SECONDS": os.environ.get("LINEAGE_GOVERNANCE_WAIT_SECONDS", "20"),
            "LINEAGE_GOVERNANCE_POKE_SECONDS": "2",
            "AIRFLOW__LINEAGE_GOVERNANCE__DESIGN_DAGS_FOLDER": str(DAGS_FOLDER),  # the nightly compares design too
            "AIRFLOW__LINEAGE_GOVERNANCE__CATALOG_NAME": CATALOG_NAME,
            "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        }
    )
    if os.environ.get("OPENLINEAGE_DISABLED"):
        env["OPENLINEAGE_DISABLED"] = os.environ["OPENLINEAGE_DISABLED"]
    return env


def airflow(args: list[str], env: dict[str, str], log: Path) -> int:
    """Runs the `airflow` CLI of this venv, its output into `log`; returns its exit code."""
    with log.open("w") as handle:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "airflow"), *args],
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            check=False,
        )
    return done.returncode


def print_events(events: str) -> None:
    """Prints, per task, what its COMPLETE event says it wrote and where each column came from (the events read
    from a JSONL file or a Marquez URL)."""
    from airflow_lineage_governance.graph.errors import EventSourceError
    from airflow_lineage_governance.graph.events import ReadReport
    from airflow_lineage_governance.graph.sources import open_event_source

    if not events.startswith(("http://", "https://")) and not Path(events).exists():
        print("No OpenLineage events were written (is OPENLINEAGE_DISABLED set?).")
        return
    try:
        received = [e for e in open_event_source(events).raw_events(ReadReport()) if isinstance(e, dict)]
    except EventSourceError as error:
        print(f"The events could not be read: {error}")
        return
    for event in received:
        if event.get("eventType") != "COMPLETE" or not event.get("outputs"):
            continue
        output = event["outputs"][0]
        rows = (output.get("outputFacets") or {}).get("outputStatistics", {}).get("rowCount")
        facets = output.get("facets") or {}
        lineage = facets.get("columnLineage") or {}
        print(
            f"\n{event['job']['name']} wrote {output['name']}: {rows} rows, "
            f"snapshot {(facets.get('version') or {}).get('datasetVersion')}"
        )
        for column, entry in (lineage.get("fields") or {}).items():
            sources = ", ".join(f"{f['name']}.{f['field']} ({transformation_kinds(f)})" for f in entry["inputFields"])
            print(f"  {column} <- {sources or 'no source column'}")
        shaping = ", ".join(
            f"{d['name']}.{d['field']} {'/'.join(t['subtype'] for t in d['transformations'])}"
            for d in lineage.get("dataset") or []
        )
        print(f"  every row shaped by: {shaping or 'none'}")


def transformation_kinds(source: dict[str, Any]) -> str:
    """Return a column-lineage input field's transformations as `TYPE SUBTYPE` words."""
    return " ".join(f"{t['type']} {t['subtype']}" for t in source["transformations"])


def print_governance(folder: Path, code: int) -> None:
    """Prints the governance report's findings and coverage."""
    reports = sorted((folder / "lineage_governance").glob("*/governance-report.md"), key=lambda p: p.stat().st_mtime)
    report = reports[-1] if reports else folder / "lineage_governance" / "governance-report.md"
    verdict = "passed" if code == 0 else "ended failed (it fails on error findings, so alerting fires)"
    print(f"\nlineage_governance {verdict}; its log: {folder / 'lineage_governance.log'}")
    if report.exists():
        print(report.read_text())
    else:
        print("No governance report was written; see the log.")


def sync_store(store: str, events: str) -> bool:
    """Brings the events the demo reads into its lineage store (the governance DAG did already: nothing new is
    added) and prints what the sync read; returns False, having said why, when the store or events cannot be
    had."""
    from airflow_lineage_governance.errors import LineageGovernanceError
    from airflow_lineage_governance.store.sync import sync

    try:
        synced = sync(store, events, create=True)
    except LineageGovernanceError as error:
        print(f"\nThe lineage store could not be filled: {error}")
        return False
    print(f"\nLineage store {synced.store}, the answers below read from it; its last sync: {synced.line()}")
    return True


def stored_governance(store: str) -> Any:
    """Returns the governance over the demo's lineage store, the platform's rules and metadata, its namespace."""
    from airflow_lineage_governance.governance.config import load_metadata, load_rules
    from airflow_lineage_governance.governance.store_session import StoredGovernance
    from airflow_lineage_governance.store.sync import open_waiting

    rules = load_rules(GOVERNANCE_FOLDER / "lineage.toml")
    return StoredGovernance(
        rules, load_metadata(GOVERNANCE_FOLDER / "metadata.toml", rules), open_waiting(store), [demo_namespace()]
    )


def print_impact(store: str) -> None:
    """Prints the demo's three impact answers, from the lineage store."""
    from airflow_lineage_governance.errors import LineageGovernanceError

    print("Impact of a change, read from the lineage store:")
    with stored_governance(store) as governance:
        for column in ("crm.learners.email", "crm.learners.marketing_consent", "learning.courses.category"):
            try:
                impact = governance.impact(column)
            except LineageGovernanceError as error:
                print(f"  {error}")
                continue
            values, rows = ", ".join(map(str, impact.values)), ", ".join(map(str, impact.rows))
            print(
                f"  {column}: values of {len(impact.values)} columns ({values or 'none'}); "
                f"every row of {rows or 'no table'}; {len(impact.columns_reached)} columns in "
                f"all; score {impact.score:g}"
            )


def print_trace(store: str) -> None:
    """Prints where the latest snapshot of analytics.course_performance came from, from the lineage store: the run
    that wrote it, its try and SQL hash, and the snapshot of each input it read (the incident trace)."""
    from airflow_lineage_governance.refs import TableRef
    from airflow_lineage_governance.store.sync import open_waiting

    table = TableRef.parse("analytics.course_performance")
    with open_waiting(store) as lineage:
        snapshot = lineage.latest_snapshot(table)
        if snapshot is None:
            print(f"\nNo snapshot of {table} to trace.")
            return
        origin, where = lineage.trace_back(table, snapshot), lineage.engine.description  # no password in it
    print(f"\nTrace of {table}@{snapshot} (lineage-governance trace {table}@{snapshot} --store {where}):")
    for line in origin.lines(1):
        print(line)


def print_diff(store: str, catalog: Any, env: dict[str, str]) -> None:
    """Prints where the design of the DAG files (their SQL rendered for the nightly's logical date, read against
    the catalog) and the lineage in the store differ (`lineage-governance diff`). Airflow's DagBag reads the
    demo's AIRFLOW_HOME."""
    os.environ.update({k: env[k] for k in ("AIRFLOW_HOME", "AIRFLOW__CORE__LOAD_EXAMPLES")})
    from airflow_lineage_governance.cli.design import diff_lines
    from airflow_lineage_governance.design.dagbag import catalog_design
    from airflow_lineage_governance.graph.diff import design_diff

    design = catalog_design(DAGS_FOLDER, catalog, NIGHTLY)
    with stored_governance(store) as governance:
        observed, declared = governance.store.observed_jobs(), governance.declared_jobs()
        where = governance.store.engine.description  # no password in it
    diff = design_diff(design, observed, "now", ["platform_nightly"], declared)
    print(f"\nDesign against runtime (lineage-governance diff {DAGS_FOLDER} --dag platform_nightly --store {where}):")
    for line in diff_lines(diff):
        print(f"  {line}")


def main() -> int:
    """Runs the demo; returns 0 when it ran, whatever the governance run found (1 when its catalog or Airflow's
    database cannot be had)."""
    folder = Path(os.environ.get("LINEAGE_GOVERNANCE_DEMO_DIR", Path.cwd() / ".demo")).resolve()
    for stale in ("catalog", "events.jsonl", "lineage-store.duckdb", "lineage-store.duckdb.wal"):
        path = folder / stale
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        kind = demo_catalog_kind()
        with demo_catalog(folder, kind) as properties:
            return run_demo(folder, kind, properties)
    except DemoCatalogError as error:
        print(f"The demo's catalog could not be had: {error}", file=sys.stderr)
        return 1


def run_demo(folder: Path, kind: str, catalog_properties: dict[str, str]) -> int:
    """Seeds the platform into the catalog, runs the nightly and governance DAGs and prints what they say;
    returns 0 when it ran, 1 when Airflow's database cannot be created."""
    started = time.perf_counter()
    catalog = (
        open_local_catalog(folder / "catalog", CATALOG_NAME)
        if kind == "sql"
        else open_catalog(CATALOG_NAME, catalog_properties)
    )
    counts = seed_platform(catalog)
    where = "the local SQLite catalog" if kind == "sql" else f"the REST catalog at {catalog_properties['uri']}"
    print(f"Seeded the platform into {where}:", ", ".join(f"{name} {rows:,}" for name, rows in counts.items()))
    env = demo_env(folder, catalog_properties)
    if not (folder / "airflow" / "airflow.db").exists():
        if airflow(["db", "migrate"], env, folder / "airflow-migrate.log") != 0:
            print(f"Airflow's database could not be created; see {folder / 'airflow-migrate.log'}")
            return 1
    code = airflow(["dags", "test", "platform_nightly", LOGICAL_DATE], env, folder / "platform_nightly.log")
    print(
        f"platform_nightly ran ({'succeeded' if code == 0 else 'failed'}); its log: {folder / 'platform_nightly.log'}"
    )
    events = demo_events(folder)
    if events != str(folder / "events.jsonl"):
        print(f"Events sent with {env['AIRFLOW__OPENLINEAGE__TRANSPORT']}; read from {events}")
    print_events(events)
    code = airflow(["dags", "test", "lineage_governance", LOGICAL_DATE], env, folder / "lineage_governance.log")
    print_governance(folder, code)
    store = env["AIRFLOW__LINEAGE_GOVERNANCE__STORE"]
    if sync_store(store, events):
        print_impact(store)
        print_trace(store)
        print_diff(store, catalog, env)
    print(f"\nDemo finished in {time.perf_counter() - started:.1f} s; its files are under {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
