"""The nightly governance run of the platform: waits for platform_nightly's run of the same logical date and
its lineage, then checks it — runs with no COMPLETE event, catalog tables no lineage accounts for, written
tables with no metadata, declared classes lower than lineage proposes — and writes governance-report.json and
.md. The run fails when there are error findings, so Airflow's alerting fires."""

from __future__ import annotations

from datetime import datetime

from airflow_lineage_governance.dags.governance import governance_dag

dag = governance_dag(
    "lineage_governance",
    "platform_nightly",
    schedule="0 2 * * *",  # the platform's schedule: the same logical date; the sensor waits for its run
    start_date=datetime(2026, 9, 1),
    tags=["governance", "lineage"],
    doc_md=__doc__,
)
