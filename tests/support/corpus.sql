-- The lineage test corpus: DuckDB CTAS and INSERT ... SELECT statements over the platform's tables, each of
-- which the engine must read. benchmarks/lineage_speed.py times the engine against sqlglot on all of them.
create table out.t as select l.email from crm.learners l;
create table out.t as with c as (select l.email from crm.learners l) select s.email from (select c.email from c) s union all select l2.email from crm.learners l2;
create table out.t as select upper(l.email) as e, l.learner_id + 1 as n, cast(l.created_at as date) as d, coalesce(l.full_name, l.email) as who from crm.learners l;
create table out.t as select case when l.marketing_consent then l.email else l.full_name end as searched, case l.status when 'active' then l.country end as simple, if(l.status = 'active', l.email, null) as iffed from crm.learners l;
create table out.t as select p.course_id, sum(p.amount) filter (where p.status = 'succeeded') as revenue, count(*) as n from billing.payments p group by p.course_id;
create table out.t as select p.payment_id, sum(p.amount) over (partition by p.learner_id order by p.paid_at) as running, row_number() over (partition by p.course_id order by p.paid_at desc) as rn, lag(p.amount) over (order by p.paid_at) as previous from billing.payments p;
create table out.t as select string_agg(l.email, ',' order by l.created_at) as emails from crm.learners l;
create table out.t as select md5(l.email) as a, sha256(l.email) as b, hash(l.email) as c, sha1(l.email) as d from crm.learners l;
create table out.t as with per_course as (select p.course_id, sum(p.amount) as total from billing.payments p group by p.course_id), scaled as (select pc.course_id, pc.total * 100 as cents from per_course pc) select s.cents, s.course_id from scaled s;
create table out.t as with c as (select l.learner_id, case when l.marketing_consent then l.email end as e from crm.learners l) select upper(c.e) as shout, c.learner_id from c where c.e is not null;
create table out.t as with spenders as (select p.learner_id, sum(p.amount) as spent from billing.payments p where p.status = 'succeeded' group by p.learner_id having sum(p.amount) > 10) select l.learner_id, s.spent from crm.learners l join spenders s on s.learner_id = l.learner_id where l.country = 'DE' qualify row_number() over (partition by l.country order by s.spent desc) <= 5 order by l.created_at;
create table out.t as select l.email, (select max(p.amount) from billing.payments p where p.learner_id = l.learner_id) as top_payment, x.n from crm.learners l, lateral (select count(*) as n from learning.events ev where ev.learner_id = l.learner_id) x where l.learner_id in (select e.learner_id from learning.enrollments e where e.completed_at is not null) and exists (select 1 from support.tickets t where t.learner_id = l.learner_id);
create table out.t as select l.email as contact from crm.learners l where l.marketing_consent union select t.subject from support.tickets t where t.status = 'open' order by contact;
create table out.t as select distinct l.country from crm.learners l limit 10;
create table out.t as select * from learning.courses;
create table out.t as select learner_id, email from crm.learners left join billing.payments using (learner_id);
create table out.t as select learner_id from crm.learners full join billing.payments using (learner_id);
create table out.t as select 1 as one, current_date as today, count(*) as n from crm.learners l;
insert into analytics.daily_revenue select cast(p.paid_at as date), sum(p.amount) from billing.payments p where p.status = 'succeeded' group by 1;
insert into analytics.daily_revenue (revenue_usd, day) select sum(p.amount), cast(p.paid_at as date) from billing.payments p group by 2;
create table out.t as select l.country, c.category, sum(p.amount) as spent, count(r.refund_id) as refunds from billing.payments p join crm.learners l on l.learner_id = p.learner_id join learning.courses c on c.course_id = p.course_id left join billing.refunds r on r.payment_id = p.payment_id group by l.country, c.category;
