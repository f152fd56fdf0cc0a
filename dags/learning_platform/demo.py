"""`make demo`: seeds the platform, runs the nightly platform DAG through real Airflow with the OpenLineage
file transport, and prints what the events say. Every file lives under .demo/.

    PYTHONPATH=dags python -m learning_platform.demo
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog
from learning_platform.pipelines import NIGHTLY
from learning_platform.seed import seed_platform

DAGS_FOLDER = Path(__file__).resolve().parents[1]
"""The dags folder this package lives in (Airflow puts it on sys.path, so the DAGs import `learning_platform`)."""
GOVERNANCE_FOLDER = DAGS_FOLDER.parent / "governance"
"""The repository's governance/ folder: metadata.toml and lineage.toml of the platform."""
LOGICAL_DATE = NIGHTLY.isoformat()


def demo_env(folder: Path) -> dict[str, str]:
    """Returns the environment of the demo's Airflow: local catalog, SQLite, OpenLineage file transport."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    catalog = {**local_catalog_properties(folder / "catalog"), "catalog_name": "platform",
               "lineage_namespace": "iceberg://platform"}
    env.update({
        "AIRFLOW_HOME": str(folder / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "platform",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(folder / "events.jsonl"), "append": True}),
        "AIRFLOW_CONN_ICEBERG_DEFAULT": json.dumps({"conn_type": "iceberg_catalog", "extra": catalog}),
        "LINEAGE_GOVERNANCE_REPORT_DIR": str(folder),
        "LINEAGE_GOVERNANCE_EVENTS": str(folder / "events.jsonl"),
        "LINEAGE_GOVERNANCE_DIR": str(GOVERNANCE_FOLDER),
        "LINEAGE_GOVERNANCE_WAIT_SECONDS": os.environ.get("LINEAGE_GOVERNANCE_WAIT_SECONDS", "20"),
        "LINEAGE_GOVERNANCE_POKE_SECONDS": "2",
        "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
    })
    if os.environ.get("OPENLINEAGE_DISABLED"):
        env["OPENLINEAGE_DISABLED"] = os.environ["OPENLINEAGE_DISABLED"]
    return env


def airflow(args: list[str], env: dict[str, str], log: Path) -> int:
    """Runs the `airflow` CLI of this venv, its output into `log`; returns its exit code."""
    with log.open("w") as handle:
        done = subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, stdout=handle,
                              stderr=subprocess.STDOUT, check=False)
    return done.returncode


def print_events(events_path: Path) -> None:
    """Prints, per task, what its COMPLETE event says it wrote and where each column came from."""
    if not events_path.exists():
        print("No OpenLineage events were written (is OPENLINEAGE_DISABLED set?).")
        return
    events = [json.loads(line) for line in events_path.read_text().splitlines() if line.strip()]
    for event in events:
        if event["eventType"] != "COMPLETE" or not event.get("outputs"):
            continue
        output = event["outputs"][0]
        rows = output.get("outputFacets", {}).get("outputStatistics", {}).get("rowCount")
        lineage = output.get("facets", {}).get("columnLineage", {})
        print(f"\n{event['job']['name']} wrote {output['name']}: {rows} rows, "
              f"snapshot {output.get('facets', {}).get('version', {}).get('datasetVersion')}")
        for column, entry in lineage.get("fields", {}).items():
            sources = ", ".join(
                f"{f['name']}.{f['field']} ({' '.join(t['type'] + ' ' + t['subtype'] for t in f['transformations'])})"
                for f in entry["inputFields"]) or "no source column"
            print(f"  {column} <- {sources}")
        shaping = ", ".join(f"{d['name']}.{d['field']} {'/'.join(t['subtype'] for t in d['transformations'])}"
                            for d in lineage.get("dataset", []))
        print(f"  every row shaped by: {shaping or 'none'}")


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


def print_impact(events_path: Path) -> None:
    """Prints the three impact answers of seed 000."""
    from airflow_lineage_governance.governance.session import Governance
    from airflow_lineage_governance.graph.errors import ColumnNotInLineageError

    governance, problem = Governance.load_tolerant(events_path, rules_path=GOVERNANCE_FOLDER / "lineage.toml",
                                                   metadata_path=GOVERNANCE_FOLDER / "metadata.toml")
    print("Impact of a change, read from the received events" + (f" ({problem})" if problem else "") + ":")
    for column in ("crm.learners.email", "crm.learners.marketing_consent", "learning.courses.category"):
        try:
            impact = governance.impact(column)
        except ColumnNotInLineageError as error:
            print(f"  {error}")
            continue
        values, rows = ", ".join(map(str, impact.values)), ", ".join(map(str, impact.rows))
        print(f"  {column}: values of {len(impact.values)} columns ({values or 'none'}); "
              f"every row of {rows or 'no table'}; {len(impact.columns_reached)} columns in "
              f"all; score {impact.score:g}")


def main() -> int:
    """Runs the demo; returns 0 when it ran, whatever the governance run found."""
    folder = Path(os.environ.get("LINEAGE_GOVERNANCE_DEMO_DIR", Path.cwd() / ".demo")).resolve()
    for stale in ("catalog", "events.jsonl"):
        path = folder / stale
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    counts = seed_platform(open_local_catalog(folder / "catalog"))
    print("Seeded the platform:", ", ".join(f"{name} {rows:,}" for name, rows in counts.items()))
    env = demo_env(folder)
    if not (folder / "airflow" / "airflow.db").exists():
        if airflow(["db", "migrate"], env, folder / "airflow-migrate.log") != 0:
            print(f"Airflow's database could not be created; see {folder / 'airflow-migrate.log'}")
            return 1
    code = airflow(["dags", "test", "platform_nightly", LOGICAL_DATE], env, folder / "platform_nightly.log")
    print(f"platform_nightly ran ({'succeeded' if code == 0 else 'failed'}); its log: "
          f"{folder / 'platform_nightly.log'}")
    print_events(folder / "events.jsonl")
    code = airflow(["dags", "test", "lineage_governance", LOGICAL_DATE], env, folder / "lineage_governance.log")
    print_governance(folder, code)
    print_impact(folder / "events.jsonl")
    print(f"\nDemo finished in {time.perf_counter() - started:.1f} s; its files are under {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
