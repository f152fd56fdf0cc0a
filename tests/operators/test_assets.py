"""The asset an IcebergSqlOperator task declares: its target read without a SQL parser, or given."""

from __future__ import annotations

import pytest
from airflow.sdk import DAG

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.operators.assets import asset_uri, target_in_text
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator
from airflow_lineage_governance.refs import TableRef


@pytest.mark.parametrize(
    ("sql", "target"),
    [
        ("-- a comment\ncreate or replace table Marketing.Audience as select 1", "marketing.audience"),
        ("/* block */ INSERT INTO analytics.daily_revenue select 1", "analytics.daily_revenue"),
        ('create table if not exists "a"."b" as select 1', "a.b"),
        ("create table cat.db.t as select 1", "cat.db.t"),
        (
            "-- upsert\nmerge into analytics.learner_dim d using s on d.id = s.id when matched then delete",
            "analytics.learner_dim",
        ),
        ("UPDATE shop.orders SET amount = 1", "shop.orders"),
        ("delete from analytics.learner_dim where learner_id = 1", "analytics.learner_dim"),
        ("select 1", None),
        ("create table {{ params.table }} as select 1", None),
        ("create table unqualified as select 1", None),
    ],
)
def test_the_target_is_read_from_the_text(sql, target):
    found = target_in_text(sql)
    assert (str(found) if found else None) == target


def test_the_asset_uri_is_the_lineage_namespace_and_the_table_path():
    assert (
        asset_uri("iceberg://platform", TableRef.parse("marketing.audience")) == "iceberg://platform/marketing/audience"
    )


def test_each_task_declares_its_table_as_an_outlet(tmp_path):
    (tmp_path / "report.sql").write_text("-- the report\ninsert into analytics.report select 1")
    with DAG("assets", schedule=None, template_searchpath=[str(tmp_path)]):
        from_file = IcebergSqlOperator(task_id="from_file", sql="report.sql", lineage_namespace="iceberg://platform")
        inline = IcebergSqlOperator(task_id="inline", sql="create table a.b as select 1")
        given = IcebergSqlOperator(task_id="given", sql="{{ var.value.statement }}", target="a.c")
        unknown = IcebergSqlOperator(task_id="unknown", sql="missing.sql")
    assert [a.uri for a in from_file.outlets] == ["iceberg://platform/analytics/report"]
    assert [a.uri for a in inline.outlets] == ["iceberg://iceberg_default/a/b"]
    assert [a.uri for a in given.outlets] == ["iceberg://iceberg_default/a/c"]
    assert unknown.outlets == []


def test_a_given_target_must_be_a_namespaced_table():
    with pytest.raises(InvalidNameError):
        IcebergSqlOperator(task_id="bad", sql="select 1", target="nodots")
