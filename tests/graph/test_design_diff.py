"""Design lineage read from SQL, and its diff with the runtime lineage in a store, on in-process events whose facets the
lineage layer itself wrote (the operator's facet code)."""

from __future__ import annotations

from datetime import UTC, datetime

from airflow_lineage_governance.graph.design import facet_sql_hash
from airflow_lineage_governance.graph.diff import DESIGNED_NOT_OBSERVED, OBSERVED_NOT_DESIGNED, design_diff
from airflow_lineage_governance.lineage import redacted_sql
from airflow_lineage_governance.lineage.fingerprint import facet_sql
from tests.support.design import CHANGED, OFFERS, T, design_of, observed_jobs, run_event, stored_of


def test_the_hash_is_the_facets_whatever_the_comments_case_and_literals():
    assert facet_sql(OFFERS) == redacted_sql(OFFERS) == facet_sql(redacted_sql(OFFERS))
    assert facet_sql_hash(OFFERS) == facet_sql_hash(OFFERS.replace("'NL'", "'DE'").upper().replace("-- OFFERS", ""))
    assert facet_sql_hash(OFFERS) != facet_sql_hash(CHANGED)
    assert facet_sql_hash("not sql at all ((") == facet_sql_hash("not  sql at all ((")


def test_design_and_the_run_of_the_same_sql_agree():
    design = design_of(offers=OFFERS)
    [task] = design.readable()
    assert (task.job, task.target, task.sources) == ("p.offers", T("marketing.offers"), (T("crm.learners"),))
    diff = design_diff(
        design, observed_jobs(stored_of(run_event("p.offers", OFFERS, "2026-10-01T02:00:00Z", "r1"))), "now"
    )
    assert diff.count == 0 and diff.compared == ["p.offers"]


def test_a_run_of_other_sql_is_a_mismatch_with_the_edges_of_each_side():
    history = stored_of(run_event("p.offers", CHANGED, "2026-10-01T02:00:00Z", "r1"))
    diff = design_diff(design_of(offers=OFFERS), observed_jobs(history), "now")
    [mismatch] = diff.sql_mismatches
    assert (mismatch.job, mismatch.run_id, mismatch.designed) == ("p.offers", "r1", facet_sql_hash(OFFERS))
    [designed] = diff.of_kind(DESIGNED_NOT_OBSERVED)
    assert {e.line() for e in designed.column_edges} == {
        "crm.learners.country -> marketing.offers.country (DIRECT IDENTITY)",
        "crm.learners.country -> marketing.offers (INDIRECT FILTER)",
        "crm.learners.marketing_consent -> marketing.offers (INDIRECT FILTER)",
    }
    [observed] = diff.of_kind(OBSERVED_NOT_DESIGNED)
    assert [e.line() for e in observed.column_edges] == [
        "crm.learners.email -> marketing.offers.email (DIRECT IDENTITY)"
    ]
    assert observed.evidence["run_id"] == "r1" and "other SQL" in observed.reason
    assert diff.count == 3 and diff.tables == []


def test_as_of_picks_the_run_then_and_a_job_never_run_is_designed_not_observed():
    history = stored_of(
        run_event("p.offers", OFFERS, "2026-10-01T02:00:00Z", "r1"),
        run_event("p.offers", CHANGED, "2026-10-02T02:00:00Z", "r2"),
    )
    design = design_of(offers=OFFERS, other=CHANGED.replace("marketing.offers", "marketing.other"))
    then = design_diff(design, observed_jobs(history, datetime(2026, 10, 1, 12, tzinfo=UTC)), "then")
    assert then.sql_mismatches == []
    [never] = then.of_kind(DESIGNED_NOT_OBSERVED)
    assert never.job == "p.other" and never.reason.startswith("no COMPLETE event of p.other as of then")
    assert [(t.kind, str(t.table)) for t in then.tables] == [(DESIGNED_NOT_OBSERVED, "marketing.other")]
    now = design_diff(design, observed_jobs(history), "now")
    assert [m.run_id for m in now.sql_mismatches] == ["r2"]


def test_an_unreadable_design_is_not_compared_and_a_stray_job_is_observed_not_designed():
    design = design_of(offers="create table marketing.offers as select l.nope from crm.learners l")
    history = stored_of(
        run_event("p.offers", OFFERS, "2026-10-01T02:00:00Z", "r1"),
        run_event("adhoc.copy", CHANGED.replace("marketing.offers", "marketing.copy"), "2026-10-01T03:00:00Z", "r2"),
    )
    diff = design_diff(design, observed_jobs(history), "now")
    assert list(diff.not_compared) == ["p.offers"] and "nope" in diff.not_compared["p.offers"]
    [stray] = diff.jobs
    assert (stray.kind, stray.job) == (OBSERVED_NOT_DESIGNED, "adhoc.copy")
    assert "no task of the DAGs folder" in stray.reason
    assert [str(t.table) for t in diff.tables] == ["crm.learners", "marketing.copy"]  # no readable design reads them
    assert design_diff(design, observed_jobs(history), "now", dag_ids=["p"]).count == 0
