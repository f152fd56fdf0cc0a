"""The one-type-per-field invariant (tests/support/field_types.py) finds what breaks Marquez's column lineage, and its
session fixture fails a session whose provider events break it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.support.field_types import PROVIDER_PRODUCER, field_type_problems

REPO = Path(__file__).resolve().parents[1]
NS = "iceberg://platform"
OPERATOR = "airflow_lineage_governance.operators.iceberg_sql.IcebergSqlOperator"


def event(
    kind: str, run: str, inputs: list[dict] | None = None, outputs: list[dict] | None = None, operator: str = OPERATOR
) -> dict:
    return {
        "eventType": kind,
        "eventTime": "2026-10-01T02:00:00Z",
        "producer": PROVIDER_PRODUCER + "2.20.3",
        "run": {"runId": run, "facets": {"airflow": {"task": {"operator_class_path": operator}}}},
        "job": {"namespace": "platform", "name": f"nightly.{run}"},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }


def dataset(name: str, *fields: tuple[str, str | None]) -> dict:
    schema = [{"name": n, **({"type": t} if t is not None else {})} for n, t in fields]
    return {"namespace": NS, "name": name, "facets": {"schema": {"fields": schema}}}


LEARNERS = dataset("crm.learners", ("learner_id", "long"), ("email", "string"))


def test_an_untyped_start_is_found():
    events = [
        event("START", "r1", [LEARNERS], [dataset("marketing.audience", ("email", None))]),
        event("COMPLETE", "r1", [LEARNERS], [dataset("marketing.audience", ("email", "string"))]),
    ]
    assert field_type_problems(events, "e.jsonl") == [
        "e.jsonl: nightly.r1 (START) output iceberg://platform/marketing.audience field email has no type"
    ]


def test_typed_events_pass():
    audience = dataset("marketing.audience", ("email", "string"))
    assert (
        field_type_problems(
            [event("START", "r1", [LEARNERS], [audience]), event("COMPLETE", "r1", [LEARNERS], [audience])]
        )
        == []
    )


def test_two_types_in_one_run_are_found():
    events = [
        event("START", "r1", [LEARNERS], [dataset("marketing.audience", ("email", "varchar"))]),
        event("FAIL", "r1", [LEARNERS], [dataset("marketing.audience", ("email", "string"))]),
    ]
    assert field_type_problems(events) == [
        "events: nightly.r1 (FAIL) output iceberg://platform/marketing.audience "
        "field email is string, and varchar in another event of the run"
    ]


def test_an_input_without_a_schema_is_found():
    bare = {"namespace": NS, "name": "crm.learners", "facets": {}}
    assert field_type_problems([event("COMPLETE", "r1", [bare])]) == [
        "events: nightly.r1 (COMPLETE) input iceberg://platform/crm.learners has no schema facet"
    ]


def test_a_type_changes_across_runs_only_where_a_run_wrote_the_table():
    wide = dataset("analytics.x", ("n", "long"))
    narrow = dataset("analytics.x", ("n", "int"))
    rewritten = [
        event("COMPLETE", "r1", [], [wide]),
        event("COMPLETE", "r2", [], [narrow]),
        event("COMPLETE", "r3", [narrow]),
    ]
    assert field_type_problems(rewritten) == []
    misread = [event("COMPLETE", "r1", [], [wide]), event("COMPLETE", "r2", [narrow])]
    assert field_type_problems(misread) == [
        "events: nightly.r2 reads iceberg://platform/analytics.x field n as int, and an earlier run as long"
    ]


def test_other_operators_and_producers_are_left_out():
    untyped = dataset("marketing.audience", ("email", None))
    other = event("START", "r1", [], [untyped], operator="airflow.providers.standard.operators.python.PythonOperator")
    handmade = {**event("START", "r2", [], [untyped]), "producer": "tests"}
    assert field_type_problems([other]) == []
    from tests.support.field_types import read_events

    folder = Path(tempfile.mkdtemp())
    try:
        (folder / "events.jsonl").write_text(json.dumps(handmade) + "\n")
        assert read_events(folder / "events.jsonl") == []
    finally:
        shutil.rmtree(folder)


@pytest.mark.slow
def test_a_session_whose_provider_wrote_an_untyped_start_fails():
    start = event("START", "r1", [LEARNERS], [dataset("marketing.audience", ("email", None))])
    outside = Path(tempfile.mkdtemp(prefix="field-types-"))  # not under this session's folder, which is held too
    try:
        (outside / "test_writes_events.py").write_text(
            textwrap.dedent(f"""
            import json

            def test_a_dag_run(tmp_path):
                (tmp_path / "events.jsonl").write_text(json.dumps({start!r}) + "\\n")
            """)
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "tests.support.field_types",
                "--basetemp",
                str(outside / "tmp"),
                str(outside),
            ],
            cwd=outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 1 error" in done.stdout
    assert (
        "1 breaches of one type per field in 1 provider events:\ntest_a_dag_run0/events.jsonl: nightly.r1 "
        "(START) output iceberg://platform/marketing.audience field email has no type"
    ) in done.stdout
