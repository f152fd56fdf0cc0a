"""One type per field: the invariant every event our operators emit holds, and the session fixture that holds
every event the test suite produced to it.

For the runs of our operators (their events name an `airflow_lineage_governance` operator), read in the order
the events were written, one events file at a time (each test's sandbox is its own catalog):

- every field of a schema facet has a type, and every input carries a schema facet;
- within a run, each (namespace, dataset, field) has one type, whatever the event (START, RUNNING, COMPLETE,
  FAIL, ABORT) and whether the dataset is read or written;
- across runs, a field keeps its type unless a run wrote the dataset with another schema: a run that only reads a
  dataset sees the types the latest earlier run saw or wrote.

A backend that keys a dataset's fields by (dataset, name, type), as Marquez does, holds a field typed two ways
twice, and its column lineage then fails for that column."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

PROVIDER_PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/"
OUR_OPERATORS = "airflow_lineage_governance."
MAX_FILE_BYTES = 256 * 1024 * 1024


def _operator(event: dict[str, Any]) -> str:
    task = (((event.get("run") or {}).get("facets") or {}).get("airflow") or {}).get("task") or {}
    return str(task.get("operator_class_path") or "") if isinstance(task, dict) else ""


def _datasets(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for side in ("inputs", "outputs"):
        for dataset in event.get(side) or []:
            if isinstance(dataset, dict):
                yield side, dataset


def field_type_problems(events: Iterable[dict[str, Any]], where: str = "events") -> list[str]:
    """Returns one sentence per breach of the invariant among `events` (in the order written); only the runs of
    our operators are held to it."""
    events = [e for e in events if isinstance(e, dict)]
    ours = {str((e.get("run") or {}).get("runId")) for e in events if _operator(e).startswith(OUR_OPERATORS)}
    problems: list[str] = []
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        run_id = str((event.get("run") or {}).get("runId"))
        if run_id in ours:
            runs.setdefault(run_id, []).append(event)
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for run_events in runs.values():
        job = str((run_events[0].get("job") or {}).get("name"))
        view: dict[tuple[str, str], dict[str, str]] = {}
        written: set[tuple[str, str]] = set()
        for event in run_events:
            kind = event.get("eventType")
            for side, dataset in _datasets(event):
                key = (str(dataset.get("namespace")), str(dataset.get("name")))
                shown = f"{where}: {job} ({kind}) {side[:-1]} {key[0]}/{key[1]}"
                if side == "outputs":
                    written.add(key)
                schema = (dataset.get("facets") or {}).get("schema")
                if schema is None:
                    if side == "inputs":
                        problems.append(f"{shown} has no schema facet")
                    continue
                fields = schema.get("fields") or []
                if not fields:
                    problems.append(f"{shown} has a schema facet without fields")
                for field in fields:
                    name, kind_of = field.get("name"), field.get("type")
                    if not kind_of:
                        problems.append(f"{shown} field {name} has no type")
                        continue
                    known = view.setdefault(key, {}).setdefault(name, kind_of)
                    if known != kind_of:
                        problems.append(f"{shown} field {name} is {kind_of}, and {known} in another event of the run")
        for key, fields in view.items():
            before = seen.setdefault(key, {})
            if key not in written:
                changed = sorted(n for n, t in fields.items() if before.get(n, t) != t)
                problems.extend(
                    f"{where}: {job} reads {key[0]}/{key[1]} field {name} as {fields[name]}, and an "
                    f"earlier run as {before[name]}"
                    for name in changed
                )
            before.update(fields)
    return problems


def read_events(path: Path) -> list[dict[str, Any]]:
    """Returns the events of the provider in an events file (JSON Lines; other lines are left out)."""
    found = []
    with path.open(errors="replace") as lines:
        for line in lines:
            if PROVIDER_PRODUCER not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and str(event.get("producer", "")).startswith(PROVIDER_PRODUCER):
                found.append(event)
    return found


def folder_problems(folder: Path) -> tuple[int, list[str]]:
    """Returns how many provider events the JSON Lines files under `folder` hold, and the invariant's breaches."""
    count, problems = 0, []
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            path = Path(root, name)
            if not name.endswith((".jsonl", ".json")) or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            events = read_events(path)
            count += len(events)
            problems.extend(field_type_problems(events, str(path.relative_to(folder))))
    return count, problems


@pytest.fixture(scope="session", autouse=True)
def field_types_hold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the session's last test, holds every event the tests made the provider write (under the session's
    temporary folder) to the invariant; a breach fails the session, naming the file, run, dataset and field."""
    yield
    count, problems = folder_problems(tmp_path_factory.getbasetemp())
    if problems:
        shown = "\n".join(problems[:50])
        pytest.fail(
            f"{len(problems)} breaches of one type per field in {count} provider events:\n{shown}", pytrace=False
        )
