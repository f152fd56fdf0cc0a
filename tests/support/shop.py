"""A tiny shop, apart from the demo platform: one event, its rules and metadata, written where a test says.
The CLI and wheel tests use it to show the CLI works with nothing of the demo's."""

from __future__ import annotations

import json
from pathlib import Path

NAMESPACE = "iceberg://shop"


def _event() -> dict:
    fields = {
        "email": [("sales.customers", "email", "DIRECT", "IDENTITY")],
        "spend": [("sales.orders", "amount", "DIRECT", "AGGREGATION")],
    }
    facet = {
        "fields": {
            name: {
                "inputFields": [
                    {
                        "namespace": NAMESPACE,
                        "name": table,
                        "field": field,
                        "transformations": [{"type": kind, "subtype": subtype, "masking": False}],
                    }
                    for table, field, kind, subtype in sources
                ]
            }
            for name, sources in fields.items()
        },
        "dataset": [
            {
                "namespace": NAMESPACE,
                "name": "sales.orders",
                "field": "customer_id",
                "transformations": [{"type": "INDIRECT", "subtype": "JOIN"}],
            }
        ],
    }
    return {
        "eventType": "COMPLETE",
        "eventTime": "2025-01-31T02:00:00Z",
        "run": {"runId": "r1"},
        "job": {"namespace": "shop", "name": "nightly.customer_spend"},
        "inputs": [],
        "outputs": [{"namespace": NAMESPACE, "name": "marts.customer_spend", "facets": {"columnLineage": facet}}],
    }


def write_shop(folder: Path) -> tuple[Path, Path]:
    """Writes events.jsonl and governance/{lineage,metadata}.toml under `folder`; returns (events, governance)."""
    governance = folder / "governance"
    governance.mkdir(parents=True, exist_ok=True)
    (governance / "lineage.toml").write_text(f'namespace = "{NAMESPACE}"\n')
    (governance / "metadata.toml").write_text(
        '[tables."sales.customers"]\nowner = "sales"\nsource = true\ncolumns = { email = "personal" }\n'
    )
    events = folder / "events.jsonl"
    events.write_text(json.dumps(_event()) + "\n")
    return events, governance
