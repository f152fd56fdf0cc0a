"""The CLI's answers with time, in-process: --as-of and --active-since on impact, upstream, propose
and check; the two answers that were wrong (a column only superseded runs mention, a column on a cycle); trace
backwards and forwards by snapshot; bad times and durations (exit 2, one sentence)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from airflow_lineage_governance.cli import main
from tests.support.events import NS, complete, output, write

RULES = f'namespace = "{NS}"\n'
METADATA = (
    '[tables."crm.learners"]\nsource = true\ncolumns = { email = "personal", full_name = "personal" }\n'
    '[tables."out.t"]\nowner = "analytics"\ntier = 1\n'
)


def nightly(day: int, column: str, version: str) -> dict:
    event = complete(
        "dag.a",
        output("out.t", {"x": [f"crm.learners.{column}"]}),
        run=f"r{day}",
        time=f"2026-10-{day:02d}T02:00:00Z",
        dag_run=f"scheduled__{day}",
        try_number=1,
        inputs=[
            {"namespace": NS, "name": "crm.learners", "facets": {"version": {"datasetVersion": f"learners-{day}"}}}
        ],
    )
    event["outputs"][0]["facets"]["version"] = {"datasetVersion": version}
    event["job"]["facets"] = {"sql": {"query": f"SELECT {column} AS x FROM crm.learners"}}
    return event


@pytest.fixture
def options(tmp_path, monkeypatch):
    for variable in ("AIRFLOW__OPENLINEAGE__NAMESPACE", "OPENLINEAGE_NAMESPACE", "AIRFLOW_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    (tmp_path / "lineage.toml").write_text(RULES)
    (tmp_path / "metadata.toml").write_text(METADATA)
    cycle = complete(
        "dag.inc",
        output("out.totals", {"total": ["out.totals.total", "out.t.x"]}),
        run="i1",
        time="2026-10-02T03:00:00Z",
    )
    events = write(tmp_path / "events.jsonl", [nightly(1, "email", "t-1"), nightly(2, "full_name", "t-2"), cycle])
    return [
        "--events",
        str(events),
        "--rules",
        str(tmp_path / "lineage.toml"),
        "--metadata",
        str(tmp_path / "metadata.toml"),
    ]


def run_json(capsys, *args: str) -> object:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_json_any(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_a_column_only_superseded_runs_mention_is_answered_with_its_stale_edges(options, capsys):
    impact = run_json(capsys, "impact", "crm.learners.email", *options)
    assert impact["columns_reached"] == [] and impact["reached"] == {}
    (retired,) = impact["retired"]
    assert (retired["target"], retired["run_id"], retired["stale"]) == ("out.t.x", "r1", True)
    assert main(["impact", "crm.learners.email", *options]) == 0
    assert "retired (stale): crm.learners.email -> out.t.x" in capsys.readouterr().out


def test_as_of_answers_from_the_runs_then(options, capsys):
    impact = run_json(capsys, "impact", "crm.learners.email", *options, "--as-of", "2026-10-01T12:00:00Z")
    assert impact["columns_reached"] == ["out.t.x"] and impact["as_of"] == "2026-10-01T12:00:00+00:00"
    hop = impact["reached"]["out.t.x"]["hops"][0]
    assert (hop["run_id"], hop["try"], hop["input_snapshot"], hop["output_snapshot"]) == ("r1", 1, "learners-1", "t-1")
    assert impact["reached"]["out.t.x"]["last_written_by"]["outputs"] == {"out.t": "t-1"}
    upstream = run_json(capsys, "upstream", "out.t.x", *options, "--as-of", "2026-10-01T12:00:00Z")
    assert upstream["sources"] == ["crm.learners.email"]
    proposals = run_json(capsys, "propose", *options, "--as-of", "2026-10-01T12:00:00Z")
    assert {p["column"] for p in proposals} == {"out.t.x"}


def test_active_since_marks_old_edges_stale_at_a_glance(options, capsys):
    assert main(["impact", "crm.learners.full_name", *options, "--active-since", "36h"]) == 0
    assert "out.t.x [observed, STALE]" in capsys.readouterr().out  # the events are of October 2026
    impact = run_json(
        capsys, "impact", "crm.learners.full_name", *options, "--as-of", "2026-10-02T12:00:00Z", "--active-since", "36h"
    )
    assert impact["reached"]["out.t.x"]["stale"] is False and impact["reached"]["out.t.x"]["confidence"] == "observed"


def test_a_column_on_a_cycle_reaches_itself(options, capsys):
    impact = run_json(capsys, "impact", "out.totals.total", *options)
    assert impact["reaches_itself"] is True and impact["columns_reached"] == ["out.totals.total"]
    assert main(["impact", "out.totals.total", *options]) == 0
    assert "out.totals.total reaches itself" in capsys.readouterr().out


def test_trace_backwards_and_forwards(options, capsys):
    traced = run_json(capsys, "trace", "out.t@t-2", *options)["origin"]
    assert traced["written_by"]["run_id"] == "r2" and traced["written_by"]["try"] == 1
    assert traced["inputs"] == [
        {"table": "crm.learners", "snapshot": "learners-2", "written_by": None, "seen_before": False, "inputs": []}
    ]
    forward = run_json(capsys, "trace", "crm.learners@learners-1", "--forward", *options)["forward"]
    assert [(f["table"], f["snapshot"], f["owner"], f["tier"]) for f in forward] == [("out.t", "t-1", "analytics", 1)]
    assert main(["trace", "out.t@t-9", *options]) == 2
    assert "out.t@t-9: no received COMPLETE event wrote or read this snapshot" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "sentence"),
    [
        ("--as-of", "yesterday", "--as-of 'yesterday': not an ISO 8601 time"),
        ("--active-since", "a week", "--active-since 'a week': not a duration; write e.g. 7d, 36h or 90m."),
    ],
)
def test_a_bad_time_or_duration_is_one_sentence(options, capsys, flag, value, sentence):
    assert main(["impact", "crm.learners.email", *options, flag, value]) == 2
    assert sentence in capsys.readouterr().err


def test_check_lists_stale_jobs(options, capsys, tmp_path):
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog

    open_local_catalog(tmp_path / "catalog")
    result = main(["check", *options, "--catalog", str(tmp_path / "catalog"), "--active-since", "7d", "--json"])
    assert result in (0, 1)
    assert json.loads(capsys.readouterr().out)["stale_jobs"] == ["dag.a", "dag.inc"]


ANSWERS = Path(__file__).with_name("cli_history_answers.json")
"""What each command of `answered` printed (exit code and output) when the in-memory history answered it."""


def printed(argv: list[str]) -> list:
    """Returns the exit code and the standard output of the command."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return [code, out.getvalue()]


def answered(source: list[str], folder: Path) -> dict[str, list]:
    """Returns, per command asked of the events of `options` (from `source`: --events or --store with the TOML
    files), its exit code and output; `check --json` without its `events` (they name the source)."""
    times = ([], ["--as-of", "2026-10-01T12:00:00Z"], ["--as-of", "2026-10-02T12:00:00Z", "--active-since", "36h"])
    asked = [
        [command, column, *when, *as_json]
        for command, column in [
            *(("impact", c) for c in ("crm.learners.email", "crm.learners.full_name", "out.t.x", "out.totals.total")),
            *(("upstream", c) for c in ("out.t.x", "out.totals.total", "crm.learners.email")),
        ]
        for when in times
        for as_json in ([], ["--json"])
    ]
    asked += [["propose", *when, *as_json] for when in times for as_json in ([], ["--json"])]
    for snapshot in (["out.t@t-2"], ["crm.learners@learners-1", "--forward"], ["crm.learners@learners-2", "--forward"]):
        asked += [["trace", *snapshot], ["trace", *snapshot, "--json"]]
    catalog = ["--catalog", str(folder / "catalog")]
    asked += [["check", *when, *catalog] for when in ([], ["--as-of", "2026-10-01T12:00:00Z", "--active-since", "7d"])]
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"crm": {"learners": {"email": "string", "full_name": "string"}}}))
    (folder / "before.sql").write_text("create table out.t as select full_name as x from crm.learners")
    (folder / "after.sql").write_text("create table out.t as select email as x from crm.learners")
    gated = ["gate", "--before", str(folder / "before.sql"), "--after", str(folder / "after.sql")]
    asked += [[*gated, "--schema", str(schema), *as_json] for as_json in ([], ["--json"])]
    found = {" ".join(a).replace(str(folder), "TMP"): printed([*a, *source]) for a in asked}
    for when in ([], ["--as-of", "2026-10-01T12:00:00Z", "--active-since", "7d"]):
        code, out = printed(["check", *when, *catalog, *source, "--json"])
        checked = json.loads(out)
        assert checked.pop("events")["events"] == 3
        found[" ".join(["check", *when, "--json"])] = [code, checked]
    return found


def test_the_answers_from_events_and_from_the_lineage_store_are_the_in_memory_historys(options, tmp_path, monkeypatch):
    from airflow_lineage_governance.iceberg.catalog import open_local_catalog

    open_local_catalog(tmp_path / "catalog")
    store = str(tmp_path / "lineage-store.duckdb")
    assert printed(["store", "init", "--store", store])[0] == 0
    assert printed(["store", "import", options[1], "--store", store])[0] == 0
    expected = json.loads(ANSWERS.read_text())
    assert len(expected) == 60
    assert answered(options, tmp_path) == expected
    assert answered([*options[2:], "--store", store], tmp_path) == expected
    code, out = expected["gate --before TMP/before.sql --after TMP/after.sql --schema TMP/schema.json"]
    assert (code, out) == (0, "out.t.x changed: 1 columns downstream, score 1\n1 columns changed; passes\n")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__STORE", store)  # no event source given or configured
    monkeypatch.delenv("AIRFLOW__LINEAGE_GOVERNANCE__EVENTS", raising=False)
    assert printed(["impact", "out.t.x", *options[2:]]) == expected["impact out.t.x"]
    assert printed(["trace", "out.t@t-2", *options[2:]]) == expected["trace out.t@t-2"]


def test_a_snapshot_or_column_no_event_names_is_one_sentence_from_either_source(options, capsys, tmp_path):
    store = str(tmp_path / "lineage-store.duckdb")
    assert main(["store", "init", "--store", store]) == 0
    assert main(["store", "import", options[1], "--store", store]) == 0
    for source in (options, [*options[2:], "--store", store]):
        assert main(["trace", "out.t@t-9", *source]) == 2
        assert "out.t@t-9: no received COMPLETE event wrote or read this snapshot" in capsys.readouterr().err
        assert main(["impact", "crm.learners.nothing", *source]) == 2
        assert "crm.learners.nothing: no received lineage event mentions this column" in capsys.readouterr().err
