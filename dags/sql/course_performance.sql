-- Enrollments, completions, ratings and revenue per course.
create or replace table analytics.course_performance as
with ratings as (
    select r.course_id, avg(r.rating) as avg_rating
    from learning.reviews r
    group by r.course_id
),
revenue as (
    select p.course_id, sum(p.amount) filter (where p.status = 'succeeded') as revenue_usd
    from billing.payments p
    group by p.course_id
)
select
    c.course_id,
    c.title,
    c.category,
    count(e.enrollment_id) as enrollments,
    count(e.enrollment_id) filter (where e.completed_at is not null) as completions,
    any_value(ra.avg_rating) as avg_rating,
    any_value(rv.revenue_usd) as revenue_usd
from learning.courses c
left join learning.enrollments e on e.course_id = c.course_id
left join ratings ra on ra.course_id = c.course_id
left join revenue rv on rv.course_id = c.course_id
group by c.course_id, c.title, c.category
