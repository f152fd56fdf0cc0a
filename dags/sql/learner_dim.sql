-- Upserts the run's day of learning events into analytics.learner_dim: one row per learner, its first and last
-- activity and its event count (a learner seen before keeps its first_seen_at and adds the day's events).
merge into analytics.learner_dim d
using (
    select e.learner_id, min(e.occurred_at) as first_seen_at, max(e.occurred_at) as last_seen_at,
           count(*) as events
    from learning.events e
    where cast(e.occurred_at as date) = date '{{ ds }}'
    group by e.learner_id
) s on d.learner_id = s.learner_id
when matched then update set last_seen_at = s.last_seen_at, events = d.events + s.events
when not matched then insert (learner_id, first_seen_at, last_seen_at, events)
    values (s.learner_id, s.first_seen_at, s.last_seen_at, s.events)
