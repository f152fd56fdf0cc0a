"""A writer process for the reliability tests: one CTAS or a series of INSERTs through the operator's own
write path (iceberg.run.run_statement), against the catalog that PROPERTIES (pyiceberg properties as JSON) describe.

    python -m tests.reliability.writer PROPERTIES ctas K          # replace bench.dst with src values + K
    python -m tests.reliability.writer PROPERTIES insert WORKER N # N batches of INSERTs, each its own write key
"""

from __future__ import annotations

import json
import sys

from airflow_lineage_governance.iceberg.catalog import open_catalog
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef

SOURCE = TableRef(("bench",), "src")


def main() -> None:
    properties, mode, number = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    catalog = open_catalog("bench", properties)
    print("started", flush=True)
    if mode == "ctas":
        run_statement(
            catalog,
            kind=StatementKind.CREATE_TABLE_AS,
            target=TableRef(("bench",), "dst"),
            sources=[SOURCE],
            query=f"select s.id, s.value + {number} as value from bench.src s",
        )
    else:
        batches = int(sys.argv[4])
        for batch in range(batches):
            offset = (number * batches + batch) * 1000
            run_statement(
                catalog,
                kind=StatementKind.INSERT,
                target=TableRef(("bench",), "log"),
                sources=[SOURCE],
                insert_columns=["id", "value"],
                query=f"select s.id + {offset} as id, s.value from bench.src s where s.id < 1000",
                snapshot_properties={"airflow.write_key": f"worker{number}/batch{batch}"},
            )
    print("done", flush=True)


if __name__ == "__main__":
    main()
