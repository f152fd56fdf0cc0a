"""The checks, run by one function for the nightly DAG and the CLI: unaccounted tables, missing metadata,
understated classes, and the sensor's verdict; and the blast-radius weight."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.governance.checks import run_checks, tables_without_metadata, unaccounted
from airflow_lineage_governance.governance.config import load_metadata, load_rules
from airflow_lineage_governance.governance.weights import tier_weight
from airflow_lineage_governance.kinds import FindingKind
from airflow_lineage_governance.refs import TableRef
from tests.support.events import complete, output, source
from tests.support.governance import governance_of

T = TableRef.parse


@pytest.fixture
def governance(tmp_path):
    return governance_of(
        tmp_path,
        complete(
            "p.offers",
            output(
                "marketing.offers",
                {"learner_id": ["crm.learners.learner_id"], "country": ["crm.learners.country"]},
                [source("crm.learners.email", "INDIRECT", "FILTER")],
            ),
        ),
        complete(
            "p.audience",
            output("marketing.audience", {"email": ["crm.learners.email"], "country": ["crm.learners.country"]}),
        ),
    )


def test_run_checks_without_a_verdict(governance):
    found = run_checks(governance, ["crm.learners", "marketing.offers", "marketing.audience", "marketing.list"])
    assert [f.to_dict() for f in found] == [
        {
            "kind": "understated_classification",
            "column": "marketing.offers.country",
            "declared": "internal",
            "proposed": "personal",
            "decided_by": {"source": "crm.learners.email", "type": "INDIRECT", "subtype": "FILTER"},
        },
        {
            "kind": "understated_classification",
            "column": "marketing.offers.learner_id",
            "declared": "internal",
            "proposed": "personal",
            "decided_by": {"source": "crm.learners.email", "type": "INDIRECT", "subtype": "FILTER"},
        },
        {"kind": "unaccounted_table", "table": "marketing.list"},
        {
            "kind": "missing_metadata",
            "table": "marketing.audience",
            "proposals": {"email": "personal", "country": "internal"},
        },
    ]


def test_run_checks_with_the_sensors_verdict_puts_the_runs_first(governance):
    missing = {"kind": "missing_complete", "job": "p.x", "task_id": "x", "try_number": 1, "state": "success"}
    verdict = {
        "finished": False,
        "target_dag_id": "p",
        "target_run_id": "r",
        "backend_problem": "still running",
        "missing": [missing],
    }
    found = run_checks(governance, [T("crm.learners"), T("marketing.offers"), T("marketing.audience")], verdict)
    assert [f.kind for f in found] == [
        FindingKind.TARGET_RUN_UNFINISHED,
        FindingKind.MISSING_COMPLETE,
        FindingKind.UNDERSTATED_CLASSIFICATION,
        FindingKind.UNDERSTATED_CLASSIFICATION,
        FindingKind.MISSING_METADATA,
    ]
    assert found[0].to_dict() == {
        "kind": "target_run_unfinished",
        "dag_id": "p",
        "run_id": "r",
        "reason": "still running",
    }
    assert found[1].to_dict() == missing
    assert [f.kind for f in run_checks(governance, [], {"finished": True, "missing": []})][
        0
    ] is FindingKind.UNDERSTATED_CLASSIFICATION


def test_unaccounted_and_missing_metadata_alone(governance):
    assert [
        str(f.table)
        for f in unaccounted(
            ["z.t", T("a.t"), "crm.learners", "marketing.offers"], governance.metadata, governance.graph
        )
    ] == ["a.t", "z.t"]
    found = tables_without_metadata(governance.graph, governance.metadata, governance.proposals)
    assert [(str(f.table), dict(f.evidence["proposals"])) for f in found] == [
        ("marketing.audience", {"email": "personal", "country": "internal"})
    ]


def test_blast_radius_weights_multiply_tier_and_owner(tmp_path):
    rules_file = tmp_path / "lineage.toml"
    rules_file.write_text(
        'namespace = "iceberg://lake"\n[blast_radius]\ntier_weights = { 1 = 10.0, 3 = 1.0 }\ndefault_weight = 2.0\n'
        'owner_weights = { "finance" = 3.0 }\n'
    )
    metadata_file = tmp_path / "metadata.toml"
    metadata_file.write_text(
        '[tables."a.gold"]\nowner = "finance"\ntier = 1\n'
        '[tables."a.scratch"]\nowner = "someone"\ntier = 3\n'
        '[tables."a.untiered"]\nowner = "finance"\n'
    )
    rules = load_rules(rules_file)
    weight = tier_weight(load_metadata(metadata_file, rules), rules)
    assert (weight(T("a.gold")), weight(T("a.scratch")), weight(T("a.untiered")), weight(T("a.unknown"))) == (
        30.0,
        1.0,
        6.0,
        2.0,
    )
