-- Each learner's events and last activity.
create or replace table analytics.learner_activity as
select
    l.learner_id,
    l.country,
    count(ev.event_id) as events,
    count(distinct ev.course_id) as courses_touched,
    count(ev.event_id) filter (where ev.event_type = 'lesson_completed') as lessons_completed,
    max(ev.occurred_at) as last_activity_at
from crm.learners l
left join learning.events ev on ev.learner_id = l.learner_id
group by l.learner_id, l.country
