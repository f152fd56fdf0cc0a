"""A tangled history of many jobs over days, with cycles and retries, for the tests of tracing by snapshot."""

from __future__ import annotations

import random

from airflow_lineage_governance.refs import TableRef
from tests.support.events import NS, complete, output


def dataset(name: str, version: str | None) -> dict:
    facets = {"version": {"datasetVersion": version}} if version is not None else {}
    return {"namespace": NS, "name": name, "facets": facets}


def tangled(seed: int) -> list[dict]:
    """Returns COMPLETE events of 40 jobs over 5 days, each reading 1 to 3 snapshots among sources, earlier jobs'
    outputs (of that day or before), later jobs' outputs (cycles) and its own; some write two tables, some
    inputs name no version, some runs are retries that wrote the same snapshot again."""
    rng = random.Random(seed)
    events = []
    for day in range(1, 6):
        for job in range(40):
            reads = []
            for _ in range(rng.randint(1, 3)):
                pick = rng.random()
                if pick < 0.3:
                    reads.append(dataset(f"src.s{rng.randrange(4)}", f"s-{rng.randrange(3)}"))
                elif pick < 0.9:
                    other, when = rng.randrange(40), rng.randint(max(day - 1, 1), day)
                    reads.append(dataset(f"out.t{other}", f"t{other}-{when}"))
                else:
                    reads.append(dataset(f"out.t{job}", None if rng.random() < 0.5 else f"t{job}-{day - 1}"))
            outputs = [output(f"out.t{job}")]
            outputs[0]["facets"]["version"] = {"datasetVersion": f"t{job}-{day}"}
            if job % 7 == 0:
                outputs.append(dataset(f"out.side{job}", f"side{job}-{day}"))
            tries = 2 if rng.random() < 0.1 else 1
            for attempt in range(1, tries + 1):
                events.append(
                    complete(
                        f"dag.job{job}",
                        *outputs,
                        run=f"r{job}-{day}-{attempt}",
                        time=f"2026-10-{day:02d}T{2 + attempt:02d}:{job:02d}:00Z",
                        dag_run=f"scheduled__{day}",
                        try_number=attempt,
                        inputs=reads,
                    )
                )
    return events


def about(table: TableRef) -> tuple[str | None, int | None]:
    return (None, None) if table.name.startswith("side") else (f"team-{table.name}", len(table.name))
