"""Importing the operator and the hook (as every DAG file does, at every parse) loads none of the heavy
libraries the work needs: those load when a task runs."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pyiceberg", "duckdb", "pyarrow", "sqlglot", "openlineage.client")


def test_the_operator_and_hook_import_without_heavy_libraries():
    code = (
        "import json, sys\n"
        "import airflow_lineage_governance.operators.iceberg_sql\n"
        "import airflow_lineage_governance.hooks.iceberg\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_operator_default_edge_bound_is_the_facet_s():
    from airflow_lineage_governance.lineage.facet import DEFAULT_MAX_EDGES
    from airflow_lineage_governance.operators import iceberg_sql

    assert iceberg_sql.DEFAULT_MAX_EDGES == DEFAULT_MAX_EDGES


def test_the_extra_is_read_without_registering_short_values_as_secrets():
    from airflow_lineage_governance.hooks.iceberg import connection_extra

    extra = connection_extra(
        '{"type": "sql", "extra__iceberg_catalog__warehouse": "file:///w", "uri": "", "token": "s3cr3t-token"}'
    )
    assert extra == {"type": "sql", "warehouse": "file:///w", "token": "s3cr3t-token"}
