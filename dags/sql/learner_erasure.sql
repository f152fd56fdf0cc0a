-- Erases from analytics.learner_dim every learner with a right-to-erasure request in the CRM.
delete from analytics.learner_dim
where learner_id in (select r.learner_id from crm.erasure_requests r)
