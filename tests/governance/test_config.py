"""metadata.toml and lineage.toml load, and bad files give one sentence naming the file and key."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.governance.config import Rules, load_metadata, load_rules
from airflow_lineage_governance.governance.errors import GovernanceConfigError, GovernanceError
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

C = ColumnRef.parse
T = TableRef.parse


def test_repo_files_load():
    rules = load_rules()
    metadata = load_metadata(rules=rules)
    assert rules.namespace == "iceberg://platform"
    assert rules.classes == ("public", "internal", "personal", "sensitive")
    assert rules.propagate_through == ("DIRECT", "INDIRECT") == (EdgeType.DIRECT, EdgeType.INDIRECT)
    declared = metadata.declared()
    assert {
        declared[C(c)]
        for c in ("crm.learners.full_name", "crm.learners.email", "crm.learners.date_of_birth", "learning.reviews.body")
    } == {"personal"}
    assert set(metadata.tables[T("learning.courses")].columns.values()) == {"public"}
    assert T("marketing.audience") not in metadata.tables and T("ai.review_corpus") not in metadata.tables
    assert set(metadata.tables[T("marketing.birthday_offers")].columns.values()) == {"internal"}
    assert set(metadata.tables[T("marketing.campaign_list")].columns.values()) == {"internal"}
    assert (
        sum(len(metadata.tables[T(t)].columns) for t in ("analytics.course_performance", "analytics.learner_activity"))
        == 13
    )
    assert metadata.owner(T("crm.learners")) == "crm-team"
    assert {str(name) for name, table in metadata.tables.items() if table.source} == {
        "crm.learners",
        "learning.courses",
        "learning.enrollments",
        "learning.reviews",
        "learning.events",
        "billing.payments",
        "billing.refunds",
        "support.tickets",
        "crm.erasure_requests",
    }


def test_every_key_of_lineage_toml_is_read():
    rules = load_rules()
    assert not hasattr(rules, "max_edges_per_event")
    assert (rules.tier_weights, rules.default_weight, rules.owner_weights, rules.gate_threshold) == (
        {1: 10.0, 2: 3.0, 3: 1.0},
        1.0,
        {"analytics-team": 1.5},
        25.0,
    )
    assert rules == Rules(namespace="iceberg://platform", owner_weights={"analytics-team": 1.5})


def test_a_nested_namespace_names_a_table_and_a_bare_name_is_refused(tmp_path):
    nested = tmp_path / "metadata.toml"
    nested.write_text('[tables."a.b.events"]\nowner = "x"\ncolumns = { tag = "internal" }\n')
    metadata = load_metadata(nested)
    assert metadata.declared() == {ColumnRef(TableRef(("a", "b"), "events"), "tag"): "internal"}
    bare = tmp_path / "bare.toml"
    bare.write_text('[tables."events"]\nowner = "x"\n')
    with pytest.raises(GovernanceConfigError) as raised:
        load_metadata(bare)
    assert str(raised.value) == f'{bare}, key tables."events": a table must be named namespace.table.'
    assert isinstance(raised.value, GovernanceError) and isinstance(raised.value, LineageGovernanceError)


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
    assert str(raised.value) == (
        f"{bad}, key tables.\"crm.learners\".columns.email: 'secret' is not a class "
        "(use one of public, internal, personal, sensitive)."
    )


def test_unknown_edge_type_names_file_and_key(tmp_path):
    bad = tmp_path / "lineage.toml"
    bad.write_text('propagate_through = ["DIRECT", "SIDEWAYS"]\n')
    with pytest.raises(GovernanceConfigError, match=r"key propagate_through: 'SIDEWAYS' is not an edge type"):
        load_rules(bad)


def test_wrong_type_names_file_and_key(tmp_path):
    bad = tmp_path / "lineage.toml"
    bad.write_text("namespace = 3\n")
    with pytest.raises(GovernanceConfigError, match=r"key namespace: must be a string, not 3"):
        load_rules(bad)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(GovernanceConfigError, match="does not exist"):
        load_rules(tmp_path / "nope.toml")


def test_the_repo_declares_the_campaign_export():
    (export,) = load_metadata().declarations
    assert (export.job, export.owner, export.inputs, export.outputs) == (
        "platform_nightly.marketing_export",
        "marketing-team",
        (T("marketing.audience"),),
        (T("marketing.campaign_list"),),
    )
    assert export.columns[C("marketing.campaign_list.email")] == (C("marketing.audience.email"),)
    assert "pyiceberg" in export.reason


DECLARED = """[[declared]]
job = "p.export"
owner = "marketing"
reason = "copies the audience with pyiceberg"
inputs = ["marketing.audience"]
outputs = ["marketing.list"]
"""


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (DECLARED.replace('owner = "marketing"\n', ""), "key declared[0].owner: must be given as a non-empty string"),
        (
            DECLARED.replace('reason = "copies the audience with pyiceberg"', 'reason = ""'),
            "key declared[0].reason: must be given as a non-empty string",
        ),
        (
            DECLARED.replace('outputs = ["marketing.list"]', "outputs = []"),
            "key declared[0]: must list the job's inputs and outputs (tables)",
        ),
        (
            DECLARED.replace('"marketing.audience"', '"audience"'),
            "key declared[0].inputs: every table must be named namespace.table.",
        ),
        (
            DECLARED + 'columns = { "marketing.list.email" = ["crm.learners.email"] }\n',
            'key declared[0].columns."marketing.list.email": must map a column of an output to columns of the inputs.',
        ),
        ('declared = "yes"\n', "key declared: must be an array of [[declared]] blocks, not 'yes'."),
    ],
)
def test_a_bad_declared_block_is_one_sentence(tmp_path, block, sentence):
    path = tmp_path / "metadata.toml"
    path.write_text(block)
    with pytest.raises(GovernanceConfigError) as raised:
        load_metadata(path)
    assert sentence in str(raised.value) and str(raised.value).count(". ") == 0


def test_a_declared_block_without_columns_is_dataset_level(tmp_path):
    from airflow_lineage_governance.governance.store_session import IN_MEMORY, declared_lineage
    from airflow_lineage_governance.store.lineage_store import LineageStore

    path = tmp_path / "metadata.toml"
    path.write_text(DECLARED + '[tables."marketing.audience"]\ncolumns = { email = "personal" }\n')
    with LineageStore.open(IN_MEMORY, create=True) as store:
        (declared,) = declared_lineage(load_metadata(path), store.engine)
    record = declared.record
    assert (record.source, record.owner) == ("declared", "marketing")
    assert [(str(e.source), str(e.target), e.type) for e in record.shape.edges] == [
        ("marketing.audience.email", "marketing.list", "INDIRECT")
    ]


def test_lineage_toml_without_a_namespace_names_the_setting_to_give(tmp_path):
    rules = tmp_path / "lineage.toml"
    rules.write_text('classes = ["public", "personal"]\n')
    with pytest.raises(GovernanceConfigError) as raised:
        load_rules(rules)
    assert str(raised.value) == (
        f"{rules}, key namespace: is not set; give the OpenLineage namespace of the catalog's tables, the "
        '`lineage_namespace` of the iceberg_catalog connection (e.g. namespace = "iceberg://<catalog_name>").'
    )
    assert Rules().namespace == ""
