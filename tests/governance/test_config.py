"""metadata.toml and lineage.toml load, and bad files give one sentence naming the file and key."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.governance.config import load_metadata, load_rules
from airflow_lineage_governance.governance.errors import GovernanceConfigError


def test_repo_files_load():
    rules = load_rules()
    metadata = load_metadata(rules=rules)
    assert rules.namespace == "iceberg://platform"
    assert rules.classes == ("public", "internal", "personal", "sensitive")
    assert rules.propagate_through == ("DIRECT", "INDIRECT")
    declared = metadata.declared()
    assert {declared[c] for c in ("crm.learners.full_name", "crm.learners.email", "crm.learners.date_of_birth",
                                  "learning.reviews.body")} == {"personal"}
    assert set(metadata.tables["learning.courses"].columns.values()) == {"public"}
    assert "marketing.audience" not in metadata.tables and "ai.review_corpus" not in metadata.tables
    assert set(metadata.tables["marketing.birthday_offers"].columns.values()) == {"internal"}
    assert set(metadata.tables["marketing.campaign_list"].columns.values()) == {"internal"}
    assert sum(len(metadata.tables[t].columns) for t in ("analytics.course_performance",
                                                         "analytics.learner_activity")) == 13
    assert metadata.owner("crm.learners") == "crm-team"
    assert {name for name, table in metadata.tables.items() if table.source} == {
        "crm.learners", "learning.courses", "learning.enrollments", "learning.reviews", "learning.events",
        "billing.payments", "billing.refunds", "support.tickets"}


def test_malformed_toml_names_the_file(tmp_path):
    bad = tmp_path / "metadata.toml"
    bad.write_text('[tables."crm.learners"\nowner = "x"\n')
    with pytest.raises(GovernanceConfigError) as raised:
        load_metadata(bad)
    message = str(raised.value)
    assert message.startswith(f"{bad}: it is not valid TOML")
    assert message.count("\n") == 0


def test_unknown_class_names_file_and_key(tmp_path):
    bad = tmp_path / "metadata.toml"
    bad.write_text('[tables."crm.learners"]\ncolumns = { email = "secret" }\n')
    with pytest.raises(GovernanceConfigError) as raised:
        load_metadata(bad)
    assert str(raised.value) == (f'{bad}, key tables."crm.learners".columns.email: \'secret\' is not a class '
                                 "(use one of public, internal, personal, sensitive).")


def test_unknown_edge_type_names_file_and_key(tmp_path):
    bad = tmp_path / "lineage.toml"
    bad.write_text('propagate_through = ["DIRECT", "SIDEWAYS"]\n')
    with pytest.raises(GovernanceConfigError, match=r"key propagate_through: 'SIDEWAYS' is not an edge type"):
        load_rules(bad)


def test_wrong_type_names_file_and_key(tmp_path):
    bad = tmp_path / "lineage.toml"
    bad.write_text('namespace = 3\n')
    with pytest.raises(GovernanceConfigError, match=r"key namespace: must be a string, not 3"):
        load_rules(bad)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(GovernanceConfigError, match="does not exist"):
        load_rules(tmp_path / "nope.toml")


def test_blast_radius_weights_multiply_tier_and_owner(tmp_path):
    from airflow_lineage_governance.governance.checks import tier_weight

    rules_file = tmp_path / "lineage.toml"
    rules_file.write_text('[blast_radius]\ntier_weights = { 1 = 10.0, 3 = 1.0 }\ndefault_weight = 2.0\n'
                          'owner_weights = { "finance" = 3.0 }\n')
    metadata_file = tmp_path / "metadata.toml"
    metadata_file.write_text('[tables."a.gold"]\nowner = "finance"\ntier = 1\n'
                             '[tables."a.scratch"]\nowner = "someone"\ntier = 3\n'
                             '[tables."a.untiered"]\nowner = "finance"\n')
    rules = load_rules(rules_file)
    weight = tier_weight(load_metadata(metadata_file, rules), rules)
    assert (weight("a.gold"), weight("a.scratch"), weight("a.untiered"), weight("a.unknown")) == (30.0, 1.0, 6.0, 2.0)
