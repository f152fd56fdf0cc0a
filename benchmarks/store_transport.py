"""The lineage store transport's cost per event against OpenLineage's own file transport, same events, same run.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/store_transport.py [events]

Emits `events` task events (START, then COMPLETE with column lineage, in turn) through the real OpenLineage client,
once into a DuckDB store (opened and closed per event, as the transport does) and once into a JSON Lines file, in
alternating blocks of 20, and ends with `RESULT store_transport ms_per_event=<store> file_ms_per_event=<file>
ratio=<store/file>`.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airflow_lineage_governance.store.lineage_store import LineageStore  # noqa: E402

NS = "iceberg://platform"


def task_event(number: int) -> RunEvent:
    """Returns the START (even numbers) or COMPLETE of run number // 2: ten columns, each from one source column."""
    fields = {
        f"c{i}": column_lineage_dataset.Fields(
            inputFields=[
                column_lineage_dataset.InputField(
                    namespace=NS,
                    name=f"raw.t{number // 2 % 50}",
                    field=f"c{i}",
                    transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")],
                )
            ]
        )
        for i in range(10)
    }
    state = RunState.START if number % 2 == 0 else RunState.COMPLETE
    outputs = (
        []
        if state == RunState.START
        else [
            OutputDataset(
                namespace=NS,
                name=f"out.t{number // 2 % 50}",
                facets={"columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(fields=fields)},
            )
        ]
    )
    return RunEvent(
        eventType=state,
        eventTime=f"2026-10-01T02:{number // 120 % 60:02d}:{number // 2 % 60:02d}Z",
        run=Run(runId=str(uuid.UUID(int=number // 2 + 1))),
        job=Job(namespace="platform", name=f"dag.task_{number // 2 % 50}"),
        producer="benchmark",
        inputs=[InputDataset(namespace=NS, name=f"raw.t{number // 2 % 50}")],
        outputs=outputs,
    )


def main(count: int) -> None:
    """Time both transports over the same events and print the RESULT line."""
    folder = Path(tempfile.mkdtemp(prefix="store-transport-"))
    store = folder / "lineage-store.duckdb"
    LineageStore.open(store, create=True).close()
    into_store = OpenLineageClient(
        config={"transport": {"type": "airflow_lineage_governance.store.transport.StoreTransport", "store": str(store)}}
    )
    into_file = OpenLineageClient(
        config={"transport": {"type": "file", "log_file_path": str(folder / "events.jsonl"), "append": True}}
    )
    events = [task_event(n) for n in range(count)]
    spent = {"store": 0.0, "file": 0.0}
    for block in range(0, count, 20):
        for name, client in (("store", into_store), ("file", into_file)):
            started = time.perf_counter()
            for event in events[block : block + 20]:
                client.emit(event)
            spent[name] += time.perf_counter() - started
    with LineageStore.open(store, read_only=True) as opened:
        stored = opened.stats()["rows"]["events"]
    assert stored == count, stored
    store_ms, file_ms = spent["store"] * 1000 / count, spent["file"] * 1000 / count
    print(f"{count} events: store {store_ms:.2f} ms each, file {file_ms:.2f} ms each; {stored} in the store")
    ratio = store_ms / file_ms
    print(f"RESULT store_transport ms_per_event={store_ms:.2f} file_ms_per_event={file_ms:.2f} ratio={ratio:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
