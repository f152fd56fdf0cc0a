-- Writes the run's day of succeeded payments to analytics.daily_revenue (the DAG replaces that day's partition).
insert into analytics.daily_revenue
select cast(p.paid_at as date) as day, sum(p.amount) as revenue_usd
from billing.payments p
where p.status = 'succeeded' and cast(p.paid_at as date) = date '{{ ds }}'
group by cast(p.paid_at as date)
