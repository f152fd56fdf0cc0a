"""The platform's pipelines, each with its expected column lineage."""

from __future__ import annotations

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef
from learning_platform.pipelines import pipeline_sql
from tests.support.lineage import fields, read, rows


def test_marketing_audience(schema):
    lineage = read(pipeline_sql("marketing_audience"), schema)
    assert lineage.target == TableRef.parse("marketing.audience")
    assert fields(lineage) == {
        "learner_id": ["crm.learners.learner_id DIRECT IDENTITY"],
        "full_name": ["crm.learners.full_name DIRECT IDENTITY"],
        "email": ["crm.learners.email DIRECT IDENTITY"],
        "country": ["crm.learners.country DIRECT IDENTITY"],
        "favourite_category": ["learning.courses.category DIRECT IDENTITY"],
    }
    assert rows(lineage) == [
        "crm.learners.learner_id JOIN",
        "crm.learners.marketing_consent FILTER",
        "crm.learners.status FILTER",
        "learning.courses.category GROUP_BY",
        "learning.courses.category JOIN",
        "learning.courses.course_id JOIN",
        "learning.enrollments.course_id JOIN",
        "learning.enrollments.learner_id GROUP_BY",
        "learning.enrollments.learner_id JOIN",
    ]


def test_course_performance(schema):
    lineage = read(pipeline_sql("course_performance"), schema)
    found = fields(lineage)
    assert found["completions"] == [
        "learning.enrollments.completed_at INDIRECT FILTER",
        "learning.enrollments.enrollment_id DIRECT AGGREGATION",
    ]
    assert found["revenue_usd"] == [
        "billing.payments.amount DIRECT AGGREGATION",
        "billing.payments.status INDIRECT FILTER",
    ]
    assert found["category"] == ["learning.courses.category DIRECT IDENTITY"]
    assert [c.name for c in lineage.columns] == [
        "course_id",
        "title",
        "category",
        "enrollments",
        "completions",
        "avg_rating",
        "revenue_usd",
    ]
    assert "learning.courses.category GROUP_BY" in rows(lineage)


def test_learner_activity_has_six_columns(schema):
    lineage = read(pipeline_sql("learner_activity"), schema)
    assert len(lineage.columns) == 6


def test_review_corpus(schema):
    lineage = read(pipeline_sql("review_corpus"), schema)
    assert fields(lineage)["body"] == ["learning.reviews.body DIRECT IDENTITY"]
    assert fields(lineage)["course_title"] == ["learning.courses.title DIRECT IDENTITY"]
    assert rows(lineage) == ["learning.courses.course_id JOIN", "learning.reviews.course_id JOIN"]


def test_birthday_offers_is_filtered_on_date_of_birth(schema):
    lineage = read(pipeline_sql("birthday_offers"), schema)
    assert rows(lineage) == ["crm.learners.date_of_birth FILTER", "crm.learners.marketing_consent FILTER"]


def test_daily_revenue_insert(schema):
    lineage = read(pipeline_sql("daily_revenue"), schema)
    assert lineage.kind is StatementKind.INSERT
    assert fields(lineage) == {
        "day": ["billing.payments.paid_at DIRECT TRANSFORMATION"],
        "revenue_usd": ["billing.payments.amount DIRECT AGGREGATION"],
    }
