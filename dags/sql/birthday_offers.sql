-- Consenting learners born in the month of the run, for a birthday offer.
create or replace table marketing.birthday_offers as
select l.learner_id, l.country
from crm.learners l
where l.marketing_consent and month(l.date_of_birth) = {{ logical_date.month }}
