"""The governance UI at scale: 100,000 synthetic COMPLETE events (benchmarks/governance_scale.py's generator) in a
DuckDB lineage store and 30 governance reports, served by the plugin's FastAPI app in-process (Starlette's
TestClient, user and DAG access granted by dependency overrides: the time measured is the app's, not the auth
manager's).

    .venv/bin/python benchmarks/ui.py [--queries N]

Imports the events into the store once (a writer's cost, not the app's), then measures the first Governance page of
a fresh app (reports only), one run's page, then the Impact page and the impact JSON of 200 random columns (each
request opens the store read-only and asks it; `--queries N`: the first N of the same columns), and a Lineage tab.
Prints each column's times as it goes, then `RESULT ui first_page_ms=… impact_p50_ms=… impact_max_ms=…` (targets:
1000 and 300).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient  # noqa: E402

from airflow_lineage_governance.governance.findings import missing_metadata, unaccounted_table  # noqa: E402
from airflow_lineage_governance.governance.report import GovernanceReport  # noqa: E402
from airflow_lineage_governance.graph.events import FileEventSource  # noqa: E402
from airflow_lineage_governance.plugins.app import create_app, current_user, readable_dags  # noqa: E402
from airflow_lineage_governance.plugins.data import Sources, UiData  # noqa: E402
from airflow_lineage_governance.refs import TableRef  # noqa: E402
from airflow_lineage_governance.store.lineage_store import LineageStore  # noqa: E402
from benchmarks.governance_scale import COLUMNS, JOBS, NS, write_events  # noqa: E402

QUERIES = 200
REPORTS = 30


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def main(queries: int = QUERIES) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        events = root / "events.jsonl"
        write_events(events, JOBS)
        governance = root / "governance"
        governance.mkdir()
        (governance / "lineage.toml").write_text(f'namespace = "{NS}"\n')
        (governance / "metadata.toml").write_text('[tables."out.t1"]\nowner = "team"\ntier = 1\n')
        for night in range(REPORTS):
            run = f"scheduled__2026-10-{night % 28 + 1:02d}T0{night // 28}:00:00+00:00"
            findings = [
                unaccounted_table(TableRef.parse(f"src.s{night}")),
                missing_metadata(TableRef.parse(f"out.t{night}"), {"c0": "internal"}),
            ]
            GovernanceReport("governance", run, run[11:], findings, {"target_dag_id": "dag"}).write(
                root / "reports" / "governance" / run
            )
        store = root / "lineage-store.duckdb"
        started = time.perf_counter()
        with LineageStore.open(store, create=True) as writer:
            writer.ingest(FileEventSource(events))
        imported = _ms(started) / 1000
        sources = Sources(lambda: str(store), lambda: governance, lambda: root / "reports", lambda: None)
        app = create_app(UiData(sources))
        app.dependency_overrides[current_user] = lambda: "bench"
        app.dependency_overrides[readable_dags] = lambda: lambda dag: True
        client = TestClient(app)

        started = time.perf_counter()
        first = client.get("/governance")
        first_page = _ms(started)
        assert first.status_code == 200 and first.text.count('class="run"') == REPORTS
        started = time.perf_counter()
        client.get("/run", params={"dag_id": "governance", "run_id": "scheduled__2026-10-01T00:00:00+00:00"})
        run_page = _ms(started)

        rng = random.Random(11)
        columns = [f"out.t{rng.randrange(JOBS)}.c{rng.randrange(COLUMNS)}" for _ in range(queries)]
        pages, answers = [], []
        for column in columns:
            started = time.perf_counter()
            page = client.get("/impact", params={"column": column})
            pages.append(_ms(started))
            assert page.status_code == 200 and "columns reached" in page.text, column
            started = time.perf_counter()
            answers.append(client.get("/impact.json", params={"column": column}))
            answers[-1] = _ms(started)
            print(f"  {column}: Impact page {pages[-1]:.1f} ms, impact JSON {answers[-1]:.1f} ms", flush=True)
        started = time.perf_counter()
        tab = client.get("/lineage", params={"dag_id": "dag", "run_id": "", "task_id": "job5"})
        lineage = _ms(started)
        assert tab.status_code == 200

    print(f"events: 100,000 (10,000 jobs x 10 runs); reports: {REPORTS}")
    print(f"first Governance page: {first_page:.1f} ms; one run's page: {run_page:.1f} ms")
    print(f"store import (once, by a writer; the app loads nothing): {imported:.2f} s")
    for name, times in (("Impact page", pages), ("impact JSON", answers)):
        p95 = statistics.quantiles(times, n=20)[-1]
        slow = sum(1 for t in times if t > 300)
        print(
            f"{name} over {queries} columns: p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
            f"max {max(times):.1f} ms; {slow} above 300 ms"
        )
    print(f"Lineage tab of a DAG run the job sent no event in (one query of the store): {lineage:.1f} ms")
    print(
        f"RESULT ui first_page_ms={first_page:.1f} impact_p50_ms={statistics.median(pages):.1f} "
        f"impact_max_ms={max(pages):.1f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else QUERIES)
