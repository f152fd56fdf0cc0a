"""Every rule of the column lineage facet semantics, each on its own small statement with exact edges."""

from __future__ import annotations

from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef
from tests.support.lineage import fields, read, rows

CTAS = "create table out.t as "


def test_bare_column_is_direct_identity(schema):
    lineage = read(CTAS + "select l.email from crm.learners l", schema)
    assert fields(lineage) == {"email": ["crm.learners.email DIRECT IDENTITY"]}
    assert rows(lineage) == []


def test_identity_through_cte_subquery_and_union(schema):
    lineage = read(
        CTAS
        + """
        with c as (select l.email from crm.learners l)
        select s.email from (select c.email from c) s
        union all
        select l2.email from crm.learners l2""",
        schema,
    )
    assert fields(lineage) == {"email": ["crm.learners.email DIRECT IDENTITY"]}


def test_functions_operators_cast_and_coalesce_are_transformations(schema):
    lineage = read(
        CTAS
        + """select upper(l.email) as e, l.learner_id + 1 as n,
        cast(l.created_at as date) as d, coalesce(l.full_name, l.email) as who from crm.learners l""",
        schema,
    )
    assert fields(lineage) == {
        "e": ["crm.learners.email DIRECT TRANSFORMATION"],
        "n": ["crm.learners.learner_id DIRECT TRANSFORMATION"],
        "d": ["crm.learners.created_at DIRECT TRANSFORMATION"],
        "who": ["crm.learners.email DIRECT TRANSFORMATION", "crm.learners.full_name DIRECT TRANSFORMATION"],
    }


def test_case_branches_are_values_and_conditions_are_conditional(schema):
    lineage = read(
        CTAS
        + """select
        case when l.marketing_consent then l.email else l.full_name end as searched,
        case l.status when 'active' then l.country end as simple,
        if(l.status = 'active', l.email, null) as iffed
        from crm.learners l""",
        schema,
    )
    assert fields(lineage) == {
        "searched": [
            "crm.learners.email DIRECT TRANSFORMATION",
            "crm.learners.full_name DIRECT TRANSFORMATION",
            "crm.learners.marketing_consent INDIRECT CONDITIONAL",
        ],
        "simple": ["crm.learners.country DIRECT TRANSFORMATION", "crm.learners.status INDIRECT CONDITIONAL"],
        "iffed": ["crm.learners.email DIRECT TRANSFORMATION", "crm.learners.status INDIRECT CONDITIONAL"],
    }


def test_aggregates_and_aggregate_filter(schema):
    lineage = read(
        CTAS
        + """select p.course_id,
        sum(p.amount) filter (where p.status = 'succeeded') as revenue, count(*) as n
        from billing.payments p group by p.course_id""",
        schema,
    )
    assert fields(lineage) == {
        "course_id": ["billing.payments.course_id DIRECT IDENTITY"],
        "revenue": ["billing.payments.amount DIRECT AGGREGATION", "billing.payments.status INDIRECT FILTER"],
        "n": [],
    }
    assert rows(lineage) == ["billing.payments.course_id GROUP_BY"]


def test_window_aggregates_and_window_keys(schema):
    lineage = read(
        CTAS
        + """select p.payment_id,
        sum(p.amount) over (partition by p.learner_id order by p.paid_at) as running,
        row_number() over (partition by p.course_id order by p.paid_at desc) as rn,
        lag(p.amount) over (order by p.paid_at) as previous
        from billing.payments p""",
        schema,
    )
    assert fields(lineage) == {
        "payment_id": ["billing.payments.payment_id DIRECT IDENTITY"],
        "running": [
            "billing.payments.amount DIRECT AGGREGATION",
            "billing.payments.learner_id INDIRECT WINDOW",
            "billing.payments.paid_at INDIRECT WINDOW",
        ],
        "rn": ["billing.payments.course_id INDIRECT WINDOW", "billing.payments.paid_at INDIRECT WINDOW"],
        "previous": ["billing.payments.amount DIRECT TRANSFORMATION", "billing.payments.paid_at INDIRECT WINDOW"],
    }


def test_order_inside_an_aggregate_is_sort(schema):
    lineage = read(CTAS + "select string_agg(l.email, ',' order by l.created_at) as emails from crm.learners l", schema)
    assert fields(lineage) == {
        "emails": ["crm.learners.created_at INDIRECT SORT", "crm.learners.email DIRECT AGGREGATION"]
    }


def test_hashes_mask(schema):
    lineage = read(
        CTAS
        + """select md5(l.email) as a, sha256(l.email) as b, hash(l.email) as c,
        sha1(l.email) as d, upper(md5(l.email)) as e, l.email || md5(l.email) as f from crm.learners l""",
        schema,
    )
    masked = "crm.learners.email DIRECT TRANSFORMATION masked"
    assert fields(lineage) == {
        "a": [masked],
        "b": [masked],
        "c": [masked],
        "d": [masked],
        "e": [masked],
        "f": ["crm.learners.email DIRECT TRANSFORMATION"],
    }


def test_aggregation_beats_transformation_beats_identity_through_ctes(schema):
    lineage = read(
        CTAS
        + """
        with per_course as (select p.course_id, sum(p.amount) as total from billing.payments p group by p.course_id),
             scaled as (select pc.course_id, pc.total * 100 as cents from per_course pc)
        select s.cents, s.course_id, upper(cast(s.course_id as varchar)) as label from scaled s""",
        schema,
    )
    assert fields(lineage) == {
        "cents": ["billing.payments.amount DIRECT AGGREGATION"],
        "course_id": ["billing.payments.course_id DIRECT IDENTITY"],
        "label": ["billing.payments.course_id DIRECT TRANSFORMATION"],
    }


def test_derived_columns_carry_their_field_level_indirect_edges(schema):
    lineage = read(
        CTAS
        + """
        with c as (select l.learner_id, case when l.marketing_consent then l.email end as e from crm.learners l)
        select upper(c.e) as shout from c""",
        schema,
    )
    assert fields(lineage) == {
        "shout": ["crm.learners.email DIRECT TRANSFORMATION", "crm.learners.marketing_consent INDIRECT CONDITIONAL"]
    }


def test_derived_column_used_in_a_condition_counts_all_its_inputs(schema):
    lineage = read(
        CTAS
        + """
        with c as (select l.learner_id, case when l.marketing_consent then l.email end as e from crm.learners l)
        select c.learner_id from c where c.e is not null""",
        schema,
    )
    assert fields(lineage) == {"learner_id": ["crm.learners.learner_id DIRECT IDENTITY"]}
    assert rows(lineage) == ["crm.learners.email FILTER", "crm.learners.marketing_consent FILTER"]


def test_row_clauses_of_every_select(schema):
    lineage = read(
        CTAS
        + """
        with spenders as (
            select p.learner_id, sum(p.amount) as spent from billing.payments p
            where p.status = 'succeeded' group by p.learner_id having sum(p.amount) > 10)
        select l.learner_id, s.spent from crm.learners l
        join spenders s on s.learner_id = l.learner_id
        where l.country = 'DE'
        qualify row_number() over (partition by l.country order by s.spent desc) <= 5
        order by l.created_at""",
        schema,
    )
    assert rows(lineage) == [
        "billing.payments.amount FILTER",
        "billing.payments.learner_id GROUP_BY",
        "billing.payments.learner_id JOIN",
        "billing.payments.status FILTER",
        "crm.learners.country FILTER",
        "crm.learners.created_at SORT",
        "crm.learners.learner_id JOIN",
    ]


def test_subqueries_in_where_and_select_list_and_lateral(schema):
    lineage = read(
        CTAS
        + """select l.email,
        (select max(p.amount) from billing.payments p where p.learner_id = l.learner_id) as top_payment,
        x.n
        from crm.learners l,
        lateral (select count(*) as n from learning.events ev where ev.learner_id = l.learner_id) x
        where l.learner_id in (select e.learner_id from learning.enrollments e where e.completed_at is not null)
          and exists (select 1 from support.tickets t where t.learner_id = l.learner_id)""",
        schema,
    )
    assert fields(lineage) == {
        "email": ["crm.learners.email DIRECT IDENTITY"],
        "top_payment": ["billing.payments.amount DIRECT AGGREGATION"],
        "n": [],
    }
    assert rows(lineage) == [
        "billing.payments.learner_id FILTER",
        "crm.learners.learner_id FILTER",
        "learning.enrollments.completed_at FILTER",
        "learning.enrollments.learner_id FILTER",
        "learning.events.learner_id FILTER",
        "support.tickets.learner_id FILTER",
    ]


def test_union_branches_each_add_their_rows(schema):
    lineage = read(
        CTAS
        + """select l.email as contact from crm.learners l where l.marketing_consent
        union select t.subject from support.tickets t where t.status = 'open' order by contact""",
        schema,
    )
    assert fields(lineage) == {
        "contact": ["crm.learners.email DIRECT IDENTITY", "support.tickets.subject DIRECT IDENTITY"]
    }
    assert rows(lineage) == [
        "crm.learners.email SORT",
        "crm.learners.marketing_consent FILTER",
        "support.tickets.status FILTER",
        "support.tickets.subject SORT",
    ]


def test_distinct_and_limit_add_no_edges(schema):
    lineage = read(CTAS + "select distinct l.country from crm.learners l limit 10", schema)
    assert fields(lineage) == {"country": ["crm.learners.country DIRECT IDENTITY"]}
    assert rows(lineage) == []


def test_star_is_expanded_from_the_schema(schema):
    lineage = read(CTAS + "select * from learning.courses", schema)
    assert [c.name for c in lineage.columns] == ["course_id", "title", "category", "price_usd", "published_at"]
    assert fields(lineage)["title"] == ["learning.courses.title DIRECT IDENTITY"]


def test_using_keys_left_inner_right_and_full(schema):
    left = read(
        CTAS
        + """select learner_id, email from crm.learners
        left join billing.payments using (learner_id)""",
        schema,
    )
    inner = read(CTAS + "select learner_id from crm.learners join billing.payments using (learner_id)", schema)
    right = read(CTAS + "select learner_id from crm.learners right join billing.payments using (learner_id)", schema)
    full = read(CTAS + "select learner_id from crm.learners full join billing.payments using (learner_id)", schema)
    assert fields(left)["learner_id"] == ["crm.learners.learner_id DIRECT IDENTITY"]
    assert fields(inner)["learner_id"] == ["crm.learners.learner_id DIRECT IDENTITY"]
    assert fields(right)["learner_id"] == ["billing.payments.learner_id DIRECT IDENTITY"]
    assert fields(full)["learner_id"] == [
        "billing.payments.learner_id DIRECT TRANSFORMATION",
        "crm.learners.learner_id DIRECT TRANSFORMATION",
    ]
    assert rows(left) == ["billing.payments.learner_id JOIN", "crm.learners.learner_id JOIN"]


def test_columns_with_no_source_are_outputs_with_empty_inputs(schema):
    lineage = read(
        CTAS
        + """select 1 as one, current_date as today, count(*) as n, 'x' as label
        from crm.learners l""",
        schema,
    )
    assert fields(lineage) == {"one": [], "today": [], "n": [], "label": []}
    assert lineage.column("today").expression == "CURRENT_DATE"


def test_insert_takes_the_targets_names_by_position(schema):
    lineage = read(
        """insert into analytics.daily_revenue
        select cast(p.paid_at as date), sum(p.amount) from billing.payments p
        where p.status = 'succeeded' group by 1""",
        schema,
    )
    assert lineage.kind is StatementKind.INSERT
    assert fields(lineage) == {
        "day": ["billing.payments.paid_at DIRECT TRANSFORMATION"],
        "revenue_usd": ["billing.payments.amount DIRECT AGGREGATION"],
    }
    assert rows(lineage) == ["billing.payments.paid_at GROUP_BY", "billing.payments.status FILTER"]


def test_insert_with_a_column_list_follows_the_list(schema):
    lineage = read(
        """insert into analytics.daily_revenue (revenue_usd, day)
        select sum(p.amount) as whatever, cast(p.paid_at as date) as other from billing.payments p group by 2""",
        schema,
    )
    assert [c.name for c in lineage.columns] == ["revenue_usd", "day"]
    assert fields(lineage)["revenue_usd"] == ["billing.payments.amount DIRECT AGGREGATION"]


def test_sources_are_every_table_read(schema):
    lineage = read(
        CTAS
        + """select l.email from crm.learners l
        where exists (select 1 from support.tickets t where t.learner_id = l.learner_id)""",
        schema,
    )
    assert lineage.target == TableRef.parse("out.t")
    assert lineage.sources == (TableRef.parse("crm.learners"), TableRef.parse("support.tickets"))


def test_descriptions_never_carry_literals(schema):
    lineage = read(
        CTAS
        + """select case when l.email = 'bob@example.com' then 'vip' end as tier
        from crm.learners l where l.email <> 'alice@example.com'""",
        schema,
    )
    text = repr(lineage.to_dict())
    assert "example.com" not in text and "vip" not in text
    assert lineage.column("tier").expression == "CASE WHEN l.email = ? THEN ? END"


def test_identifiers_are_case_insensitive_as_in_duckdb(schema):
    lineage = read('CREATE TABLE Out.T AS SELECT L.EMAIL, "L"."Country" FROM CRM.Learners L', schema)
    assert lineage.target == TableRef.parse("out.t")
    assert fields(lineage) == {
        "email": ["crm.learners.email DIRECT IDENTITY"],
        "country": ["crm.learners.country DIRECT IDENTITY"],
    }
