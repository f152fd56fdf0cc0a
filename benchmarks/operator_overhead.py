"""Operator overhead: a CTAS of 1,000,000 rows through IcebergSqlOperator.execute and its OpenLineage facet
methods; the share of wall time spent reading lineage and building facets.

    .venv/bin/python benchmarks/operator_overhead.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.iceberg.catalog import local_catalog_properties, open_local_catalog  # noqa: E402
from airflow_lineage_governance.iceberg.write import create_or_replace  # noqa: E402
from airflow_lineage_governance.lineage.facet import column_lineage_facet  # noqa: E402
from benchmarks.iceberg_scan import facts  # noqa: E402

ROWS = 1_000_000
SQL = """create or replace table bench.summary as
select f.id, f.learner_id, f.course_id, upper(f.category) as category, f.amount * 100 as cents,
       case when f.status = 'succeeded' then f.amount end as paid, f.score, f.at
from bench.facts f where f.score > 0.01"""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        catalog = open_local_catalog(folder, "bench")
        create_or_replace(catalog, "bench.facts", facts(ROWS), {})
        extra = {**local_catalog_properties(folder), "catalog_name": "bench"}
        os.environ.setdefault("AIRFLOW_HOME", str(Path(folder) / "airflow"))
        os.environ["AIRFLOW_CONN_ICEBERG_DEFAULT"] = json.dumps({"conn_type": "iceberg_catalog", "extra": extra})
        import airflow.providers.openlineage.plugins.listener  # noqa: F401  (loaded in a task when OpenLineage is on)

        from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator

        shares, totals = [], []
        for attempt in range(5):
            operator = IcebergSqlOperator(task_id="summary", sql=SQL)
            ti = SimpleNamespace(dag_id="bench", run_id=f"run{attempt}", task_id="summary", map_index=-1, try_number=1)
            started = time.perf_counter()
            # As the task runner does: render the template (which parses the statement and reads its lineage), then
            # the listener's START facets (in a fork of this process, which inherits that read), then execute(),
            # which runs on the same read, then COMPLETE.
            operator.render_template_fields({}, jinja2.Environment())
            operator.get_openlineage_facets_on_start()
            before_execute = time.perf_counter() - started
            operator.execute({"ti": ti, "outlet_events": defaultdict(SimpleNamespace)})
            begun = time.perf_counter()
            operator.get_openlineage_facets_on_complete(ti)
            from openlineage.client.serde import Serde

            Serde.to_json(column_lineage_facet(operator.lineage_read().lineage, "iceberg://bench"))
            complete_facets = time.perf_counter() - begun
            total = time.perf_counter() - started
            shares.append((before_execute + complete_facets) / total)
            totals.append(total)
    print(
        f"CTAS of {ROWS:,} rows through the operator: {statistics.median(totals):.3f} s wall; lineage and facets "
        f"{statistics.median(shares) * 100:.2f}% of it (median of 5)"
    )
    print(f"RESULT operator_overhead share={statistics.median(shares):.4f}")


if __name__ == "__main__":
    main()
