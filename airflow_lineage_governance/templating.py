"""SQL files rendered as Airflow renders them for one logical date, in Jinja's sandbox.

A SQL file from a pull request is untrusted input: the CLI (`lineage`, `gate`) renders it here, with the
variables Airflow gives a task for a logical date and nothing else, in `jinja2.sandbox.SandboxedEnvironment`
with undefined variables an error. A template that reaches for Python internals, names a variable Airflow would
not give, or fails to render raises `TemplateRenderError` with one sentence.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_lineage_governance.errors import LineageGovernanceError

VARIABLES = (
    "ds",
    "ds_nodash",
    "ts",
    "ts_nodash",
    "ts_nodash_with_tz",
    "logical_date",
    "data_interval_start",
    "data_interval_end",
    "macros",
)
"""The names a template may use (Airflow's names for the same values)."""

FILTERS = {
    "ds": lambda value: value.strftime("%Y-%m-%d"),
    "ds_nodash": lambda value: value.strftime("%Y%m%d"),
    "ts": lambda value: value.isoformat(),
    "ts_nodash": lambda value: value.strftime("%Y%m%dT%H%M%S"),
    "ts_nodash_with_tz": lambda value: value.isoformat().replace("-", "").replace(":", ""),
}
"""Airflow's date filters (`{{ data_interval_end | ds }}`)."""


class TemplateRenderError(LineageGovernanceError):
    """Raised when a SQL template cannot be rendered safely: unsafe access, an undefined name, bad syntax."""


class _Macros:
    """The date helpers of Airflow's `macros` that need nothing but the standard library."""

    datetime = datetime
    timedelta = timedelta

    @staticmethod
    def ds_add(ds: str, days: int) -> str:
        """Return `ds` (YYYY-MM-DD) moved by `days` days, as Airflow's `macros.ds_add`."""
        return (datetime.strptime(ds, "%Y-%m-%d") + timedelta(days=days)).strftime("%Y-%m-%d")

    @staticmethod
    def ds_format(ds: str, input_format: str, output_format: str) -> str:
        """Return `ds` read with `input_format` and written with `output_format`, as Airflow's."""
        return datetime.strptime(ds, input_format).strftime(output_format)


def start_of_today() -> datetime:
    """Return midnight UTC of the current day: the CLI's logical date when none is given."""
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def parse_logical_date(text: str) -> datetime:
    """Return the logical date an ISO 8601 text names (a date alone is midnight; no zone is UTC).

    Raises TemplateRenderError with one sentence when it is not an ISO date or timestamp.
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise TemplateRenderError(
            f"--logical-date {text!r} is not an ISO date or timestamp (e.g. 2025-01-31 or 2025-01-31T02:00:00+00:00)"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def template_context(logical_date: datetime) -> dict[str, Any]:
    """Return the variables Airflow gives a task of a cron-scheduled DAG for `logical_date`, as pendulum DateTimes.

    Airflow 3's default timetable: the data interval starts and ends at the logical date.
    """
    import pendulum

    moment = pendulum.instance(logical_date if logical_date.tzinfo else logical_date.replace(tzinfo=UTC))
    ts = moment.isoformat()
    return {
        "ds": moment.strftime("%Y-%m-%d"),
        "ds_nodash": moment.strftime("%Y%m%d"),
        "ts": ts,
        "ts_nodash": moment.strftime("%Y%m%dT%H%M%S"),
        "ts_nodash_with_tz": ts.replace("-", "").replace(":", ""),
        "logical_date": moment,
        "data_interval_start": moment,
        "data_interval_end": moment,
        "macros": _Macros(),
    }


def render_sql(text: str, logical_date: datetime, name: str = "the SQL template") -> str:
    """Return `text` rendered in Jinja's sandbox with `template_context(logical_date)`.

    Raises TemplateRenderError naming `name` when the template is malformed, uses an undefined name, reaches for Python
    internals, or fails while rendering.
    """
    from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import SandboxedEnvironment

    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    environment.filters.update(FILTERS)
    try:
        return environment.from_string(text).render(template_context(logical_date))
    except TemplateSyntaxError as error:
        raise TemplateRenderError(f"{name}: line {error.lineno} is not valid Jinja ({error.message})") from None
    except SecurityError as error:
        raise TemplateRenderError(
            f"{name}: the template reaches for Python internals, which the sandbox refuses "
            f"({error}); use only {', '.join(VARIABLES)}"
        ) from None
    except UndefinedError as error:
        raise TemplateRenderError(
            f"{name}: the template uses a name that is not defined ({error}); use only {', '.join(VARIABLES)}"
        ) from None
    except Exception as error:  # any other failure inside the template is still one sentence
        raise TemplateRenderError(f"{name}: the template failed to render ({type(error).__name__}: {error})") from None
