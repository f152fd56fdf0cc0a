"""The graph, impact, proposals and checks on the events of the platform's nightly run through real Airflow,
and the CLI run as a user runs it."""

from __future__ import annotations

import json
import subprocess

import pytest

from airflow_lineage_governance.governance.checks import run_checks, unaccounted
from airflow_lineage_governance.governance.classify import propose, understated
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.iceberg.catalog import open_local_catalog, table_names
from airflow_lineage_governance.refs import ColumnRef, TableRef
from tests.support.sandbox import VENV_BIN

pytestmark = pytest.mark.integration
C = ColumnRef.parse


def names(refs) -> list[str]:
    return [str(ref) for ref in refs]


@pytest.fixture(scope="module")
def governance(platform_run):
    sandbox, run = platform_run
    return StoredGovernance.from_events(run.events_path)


def test_every_platform_task_completed_with_events(platform_run):
    _, run = platform_run
    for task in (
        "course_performance",
        "learner_activity",
        "marketing_audience",
        "review_corpus",
        "birthday_offers",
        "daily_revenue",
        "marketing_export",
    ):
        assert len(run.task_events(task, "COMPLETE")) == 1, task
    assert run.task_events("marketing_export", "COMPLETE")[0]["outputs"] == []


def test_start_names_each_output_with_the_schema_complete_gives_it(platform_run):
    # A backend (Marquez) stores a schema-less output as a new, empty dataset version, and keeps a field sent
    # untyped in START and typed in COMPLETE twice, which breaks its column lineage.
    _, run = platform_run
    for start in (e for e in run.events if e["eventType"] == "START" and "." in e["job"]["name"]):
        for dataset in start.get("outputs") or []:
            assert dataset["facets"]["schema"]["fields"], (start["job"]["name"], dataset["name"])
    for task in ("birthday_offers", "marketing_audience", "daily_revenue", "learner_dim"):
        start = run.task_events(task, "START")[0]["outputs"][0]
        complete = run.task_events(task, "COMPLETE")[0]["outputs"][0]
        assert [(f["name"], f["type"]) for f in start["facets"]["schema"]["fields"]] == [
            (f["name"], f["type"]) for f in complete["facets"]["schema"]["fields"]
        ], task
    birthday = run.task_events("birthday_offers", "START")[0]["outputs"][0]  # a new table: DuckDB's binding
    assert [(f["name"], f["type"]) for f in birthday["facets"]["schema"]["fields"]] == [
        ("learner_id", "long"),
        ("country", "string"),
    ]


def test_a_staging_complete_of_the_same_job_changes_no_finding(platform_run, tmp_path):
    # On a shared Marquez a COMPLETE of a same-named job from "staging" replaced ours (5 findings became 3).
    sandbox, run = platform_run
    catalog = table_names(open_local_catalog(sandbox.catalog_folder))
    ours = StoredGovernance.from_events(run.events_path, job_namespaces=["platform"])
    before = [f.to_dict() for f in run_checks(ours.nightly(str(run.events_path)), catalog)]
    assert len(before) == 5
    staging = json.loads(json.dumps(run.task_events("birthday_offers", "COMPLETE")[0]))
    staging["job"]["namespace"] = "staging"
    staging["run"]["runId"] = "01999a2e-0000-7000-8000-00000000beef"
    staging["eventTime"] = "2099-01-01T00:00:00Z"
    staging["outputs"][0]["facets"]["columnLineage"]["dataset"] = []
    shared = tmp_path / "shared.jsonl"
    shared.write_text(run.events_path.read_text() + json.dumps(staging) + "\n")
    scoped = StoredGovernance.from_events(shared, job_namespaces=["platform"])
    assert [f.to_dict() for f in run_checks(scoped.nightly(str(shared)), catalog)] == before
    assert scoped.report().other_namespace == 1
    unscoped = StoredGovernance.from_events(shared).nightly(str(shared))
    assert len(run_checks(unscoped, catalog)) == 3  # every namespace read: what went wrong


def test_email_reaches_only_the_audience_email(governance):
    impact = governance.impact(C("crm.learners.email"))
    observed = [c for c in impact.columns_reached if impact.reached[c].confidence == "observed"]
    assert observed == [C("marketing.audience.email")]
    assert [(e.type, e.subtype) for e in impact.paths[C("marketing.audience.email")]] == [("DIRECT", "IDENTITY")]
    # the campaign export sends no events; its [[declared]] lineage in metadata.toml carries on, as
    # `declared`, so the email's reach into the campaign list stays a candidate, not silently missing
    assert impact.values == [C("marketing.audience.email"), C("marketing.campaign_list.email")]
    declared = impact.reached[C("marketing.campaign_list.email")]
    assert declared.confidence == "declared" and declared.hops[-1].record.owner == "marketing-team"


def test_consent_reaches_no_values_but_every_audience_row(governance):
    impact = governance.impact(C("crm.learners.marketing_consent"))
    assert impact.values == []
    audience = [c for c in impact.columns_reached if c.table == TableRef.parse("marketing.audience")]
    assert names(audience) == sorted(
        f"marketing.audience.{c}" for c in ("learner_id", "full_name", "email", "country", "favourite_category")
    )
    assert all([(e.type, e.subtype) for e in impact.paths[c]] == [("INDIRECT", "FILTER")] for c in audience)
    assert TableRef.parse("marketing.audience") in impact.rows


def test_category_reaches_two_values_and_more_in_all(governance):
    impact = governance.impact(C("learning.courses.category"))
    assert names(impact.values) == ["analytics.course_performance.category", "marketing.audience.favourite_category"]
    observed = [c for c in impact.columns_reached if impact.reached[c].confidence == "observed"]
    assert len(observed) == 12
    declared = [c for c in impact.columns_reached if c not in observed]  # the export's [[declared]]
    assert names(declared) == [f"marketing.campaign_list.{c}" for c in ("email", "full_name", "learner_id")]
    assert all(impact.reached[c].confidence == "declared" for c in declared)
    assert impact.owners[TableRef.parse("analytics.course_performance")] == "analytics-team"
    assert impact.score > len(impact.columns_reached)  # course_performance is tier 1


def test_proposals_as_the_seed_reads_them(governance):
    proposals = governance.proposals()
    personal = {str(c) for c, p in proposals.items() if p.proposed == "personal" and not p.declared}
    assert personal == {"marketing.audience.full_name", "marketing.audience.email", "ai.review_corpus.body"}
    for table in ("marketing.audience", "ai.review_corpus"):
        others = [p.proposed for c, p in proposals.items() if str(c.table) == table and str(c) not in personal]
        assert set(others) == {"internal"}
    favourite = proposals[C("marketing.audience.favourite_category")].decided_by
    assert (str(favourite.source), favourite.type, favourite.subtype) == ("crm.learners.learner_id", "INDIRECT", "JOIN")
    declared = governance.metadata.declared()
    classified = [
        c for c in proposals if str(c.table) in ("analytics.course_performance", "analytics.learner_activity")
    ]
    assert len(classified) == 13
    assert sum(proposals[c].proposed == declared[c] for c in classified) == 13
    direct_only = propose(governance.graph(), declared, governance.rules, ("DIRECT",))
    assert sum(direct_only[c].proposed == declared[c] for c in classified) == 10


def test_birthday_offers_understated_and_campaign_list_unaccounted(governance, platform_run):
    sandbox, _ = platform_run
    found = {
        (str(u.column), u.declared, u.proposed, str(u.decided_by.source), u.decided_by.subtype)
        for u in understated(governance.proposals(), governance.rules)
    }
    assert found == {
        (f"marketing.birthday_offers.{c}", "internal", "personal", "crm.learners.date_of_birth", "FILTER")
        for c in ("learner_id", "country")
    }
    tables = table_names(open_local_catalog(sandbox.catalog_folder))
    assert [str(u.table) for u in unaccounted(tables, governance.metadata, governance.graph())] == [
        "marketing.campaign_list"
    ]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "lineage-governance"), *args], capture_output=True, text=True, timeout=120)


def test_cli_impact_json_and_text(platform_run):
    _, run = platform_run
    done = cli("impact", "crm.learners.email", "--events", str(run.events_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["values"] == ["marketing.audience.email", "marketing.campaign_list.email"] and data["rows"] == []
    assert {c: r["confidence"] for c, r in data["reached"].items()} == {  # the export is declared
        "marketing.audience.email": "observed",
        "marketing.campaign_list.email": "declared",
    }
    assert data["paths"]["marketing.audience.email"] == [
        {
            "source": "crm.learners.email",
            "target": "marketing.audience.email",
            "type": "DIRECT",
            "subtype": "IDENTITY",
            "masking": False,
            "job": "platform_nightly.marketing_audience",
        }
    ]
    assert set(data) == {
        "column",
        "values",
        "rows",
        "columns_reached",
        "paths",
        "owners",
        "score",
        "reached",
        "retired",
        "reaches_itself",
        "as_of",
    }  # evidence and time added
    text = cli("impact", "crm.learners.marketing_consent", "--events", str(run.events_path))
    assert "0 columns through values" in text.stdout and "every row can change: marketing.audience" in text.stdout


def test_cli_check_exit_codes_and_findings(platform_run):
    sandbox, run = platform_run
    done = cli("check", "--events", str(run.events_path), "--catalog", str(sandbox.catalog_folder), "--json")
    assert done.returncode == 1
    kinds = sorted({f["kind"] for f in json.loads(done.stdout)["findings"]})
    assert kinds == ["missing_metadata", "unaccounted_table", "understated_classification"]


def test_cli_upstream_propose_and_gate(platform_run, tmp_path):
    sandbox, run = platform_run
    upstream = cli("upstream", "marketing.audience.email", "--events", str(run.events_path), "--json")
    assert "crm.learners.marketing_consent" in json.loads(upstream.stdout)["sources"]
    proposals = json.loads(cli("propose", "--events", str(run.events_path), "--json").stdout)
    assert {
        "column": "ai.review_corpus.body",
        "proposed": "personal",
        "declared": None,
        "decided_by": {"source": "learning.reviews.body", "type": "DIRECT", "subtype": "IDENTITY"},
        "stale": False,
    } in proposals  # `stale` added (no --active-since: never stale)
    from tests.support.sandbox import REPO

    before = REPO / "dags" / "sql" / "course_performance.sql"
    after = tmp_path / "course_performance.sql"
    after.write_text(before.read_text().replace("c.category,\n", "upper(c.category) as category,\n", 1))
    gate = cli(
        "gate",
        "--before",
        str(before),
        "--after",
        str(after),
        "--catalog",
        str(sandbox.catalog_folder),
        "--events",
        str(run.events_path),
        "--json",
    )
    data = json.loads(gate.stdout)
    assert [c["column"] for c in data["changes"]] == ["analytics.course_performance.category"]
    removed = cli(
        "gate",
        "--before",
        str(REPO / "dags" / "sql" / "marketing_audience.sql"),
        "--after",
        str(tmp_path / "gone.sql"),
        "--catalog",
        str(sandbox.catalog_folder),
        "--events",
        str(run.events_path),
        "--json",
    )
    assert {c["change"] for c in json.loads(removed.stdout)["changes"]} == {"removed"}


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (("impact", "crm.learners.emial"), "crm.learners.emial: no received lineage event mentions this column"),
        (
            ("impact", "email"),
            "email: no received lineage event mentions this column; name it as namespace.table.column.",
        ),
        (("check", "--catalog", "/nonexistent"), "/nonexistent: no local Iceberg catalog here"),
        (("propose", "--rules", "/nonexistent/lineage.toml"), "/nonexistent/lineage.toml: the file does not exist."),
    ],
)
def test_cli_bad_input_is_one_sentence_and_exit_2(platform_run, args, sentence):
    _, run = platform_run
    done = cli(*args, "--events", str(run.events_path))
    assert done.returncode == 2
    assert sentence in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_the_erasure_conditions_reach_the_learner_dimensions_rows(governance, platform_run):
    # The erasure DELETE's condition columns shape which rows the learner dimension keeps.
    impact = governance.impact(C("crm.erasure_requests.learner_id"))
    assert TableRef.parse("analytics.learner_dim") in impact.rows
    assert impact.values == []
    _, run = platform_run
    erasure = run.task_events("learner_erasure", "COMPLETE")[0]
    changes = erasure["outputs"][0]["outputFacets"]["rowChanges"]
    assert changes["deleted"] > 0 and changes["inserted"] == changes["updated"] == 0
    merge = run.task_events("learner_dim", "COMPLETE")[0]
    assert {i["name"] for i in merge["inputs"]} == {"analytics.learner_dim", "learning.events"}
    assert merge["outputs"][0]["outputFacets"]["rowChanges"]["inserted"] > 0
    assert "partitions written: day=2026-10-01" in run.log


def test_consent_still_reaches_seven_columns(governance):
    impact = governance.impact(C("crm.learners.marketing_consent"))
    observed = [c for c in impact.columns_reached if impact.reached[c].confidence == "observed"]
    assert len(observed) == 7  # the new MERGE, partition overwrite and DELETE pipelines add none
    # the export's [[declared]] lineage carries the audience on to the campaign list, as candidates
    assert names(c for c in impact.columns_reached if c not in observed) == [
        f"marketing.campaign_list.{c}" for c in ("email", "full_name", "learner_id")
    ]
