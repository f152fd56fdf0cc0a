"""SQL templates rendered in Jinja's sandbox with the variables Airflow gives for a logical date."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.templating import (
    TemplateRenderError,
    parse_logical_date,
    render_sql,
    start_of_today,
    template_context,
)

NIGHT = datetime(2025, 1, 31, 2, 0, tzinfo=UTC)


def test_the_variables_airflow_gives_for_a_logical_date():
    context = template_context(NIGHT)
    assert context["ds"] == "2025-01-31"
    assert context["ds_nodash"] == "20250131"
    assert context["ts"] == "2025-01-31T02:00:00+00:00"
    assert context["ts_nodash"] == "20250131T020000"
    assert context["ts_nodash_with_tz"] == "20250131T020000+0000"
    assert context["logical_date"] == context["data_interval_start"] == context["data_interval_end"] == NIGHT


def test_renders_dates_methods_and_macros():
    sql = (
        "select {{ logical_date.month }}, '{{ ds }}', '{{ macros.ds_add(ds, 1) }}', "
        "'{{ logical_date.add(days=-1).strftime('%Y-%m-%d') }}', '{{ ds_nodash }}'"
    )
    assert render_sql(sql, NIGHT) == "select 1, '2025-01-31', '2025-02-01', '2025-01-30', '20250131'"
    filtered = "{{ data_interval_end | ds }} {{ logical_date | ts_nodash }} {{ logical_date | ts_nodash_with_tz }}"
    assert render_sql(filtered, NIGHT) == "2025-01-31 20250131T020000 20250131T020000+0000"


def test_keeps_text_without_templates_byte_for_byte():
    sql = "-- a comment\ncreate table a.b as select 1 as x\n"
    assert render_sql(sql, NIGHT) == sql


@pytest.mark.reliability
@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ logical_date.__class__.__init__.__globals__ }}",
        "{{ macros.ds_add.__globals__['os'] }}",
        "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    ],
)
def test_python_internals_are_refused_with_one_sentence(template):
    with pytest.raises(TemplateRenderError) as caught:
        render_sql(f"select {template}", NIGHT, "q.sql")
    message = str(caught.value)
    assert message.startswith("q.sql: the template ")
    assert "\n" not in message and message.endswith(".")


def test_an_undefined_name_is_refused_naming_the_names_there_are():
    with pytest.raises(
        TemplateRenderError,
        match=r"^q\.sql: the template uses a name that is not defined "
        r"\('params' is undefined\); use only ds, ds_nodash",
    ):
        render_sql("select {{ params.x }}", NIGHT, "q.sql")


def test_bad_syntax_names_the_line():
    with pytest.raises(TemplateRenderError, match=r"^q\.sql: line 2 is not valid Jinja"):
        render_sql("select 1\nwhere {{ ds ", NIGHT, "q.sql")


def test_a_failure_inside_the_template_is_one_sentence():
    with pytest.raises(TemplateRenderError, match=r"failed to render \(ZeroDivisionError"):
        render_sql("select {{ 1 / 0 }}", NIGHT, "q.sql")


def test_errors_derive_from_the_package_root():
    assert issubclass(TemplateRenderError, LineageGovernanceError)


def test_logical_dates_parse_as_iso_with_utc_when_no_zone_is_given():
    assert parse_logical_date("2025-01-31") == datetime(2025, 1, 31, tzinfo=UTC)
    assert parse_logical_date("2025-01-31T02:00:00+02:00") == datetime(
        2025, 1, 31, 2, tzinfo=timezone(timedelta(hours=2))
    )
    with pytest.raises(TemplateRenderError, match="--logical-date 'yesterday' is not an ISO date"):
        parse_logical_date("yesterday")


def test_the_default_logical_date_is_midnight_utc_today():
    today = start_of_today()
    assert (today.hour, today.minute, today.second, today.microsecond, today.tzinfo) == (0, 0, 0, 0, UTC)
    assert today.date() == datetime.now(UTC).date() or today.date() == (datetime.now(UTC) - timedelta(days=1)).date()
