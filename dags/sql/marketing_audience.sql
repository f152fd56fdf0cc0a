-- The learners marketing may email: consenting and active, with their favourite course category.
create or replace table marketing.audience as
with category_enrollments as (
    select e.learner_id, c.category, count(*) as enrollments
    from learning.enrollments e
    join learning.courses c on c.course_id = e.course_id
    group by e.learner_id, c.category
),
ranked as (
    select
        ce.learner_id,
        ce.category,
        row_number() over (partition by ce.learner_id order by ce.enrollments desc, ce.category) as rank
    from category_enrollments ce
)
select l.learner_id, l.full_name, l.email, l.country, r.category as favourite_category
from crm.learners l
left join ranked r on r.learner_id = l.learner_id and r.rank = 1
where l.marketing_consent and l.status = 'active'
