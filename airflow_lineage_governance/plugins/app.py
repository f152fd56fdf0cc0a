"""The governance UI's FastAPI app, mounted by the plugin on the api-server at /lineage-governance.

Every route needs an Airflow user: the auth manager reads the JWT of the `Authorization: Bearer` header or the
UI's `_token` cookie (Airflow's own `get_user`); without one the answer is 401 (403 for a bad token) and no data.
Only DAGs the auth manager lets the user read are shown.

    governance                               the latest governance run's findings, and the latest runs
    run?dag_id=&run_id=                      one run's findings
    report?dag_id=&run_id=&format=json|md    its report, as the report files hold it

The Governance pages read the governance runs and findings the lineage store keeps; while it holds none (or cannot be
read), they read the report files under the report folder.
    lineage?dag_id=&run_id=&task_id=         a task's column lineage (the Lineage tab)
    impact?column=                           the impact explorer
    impact.json?column=                      the impact as the CLI's `impact --json` prints it
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.governance.store_session import StoredGovernance
from airflow_lineage_governance.graph.answers import Impact
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.kinds import FindingKind
from airflow_lineage_governance.plugins.data import UiData, airflow_sources
from airflow_lineage_governance.plugins.pages import render
from airflow_lineage_governance.plugins.views import (
    ReportLine,
    finding_subject,
    impact_picture,
    lineage_picture,
    moment,
    report_line,
    stored_line,
    task_lineage,
)
from airflow_lineage_governance.refs import TableRef
from airflow_lineage_governance.store import lookups

if TYPE_CHECKING:
    from airflow_lineage_governance.governance.report import GovernanceReport

MAX_RUNS = 50
MAX_KEPT_RUNS = 500
"""The most governance runs read from the store for the listing, before those the user may not read are left out."""
MAX_COMPLETION = 5000
MAX_LISTED = 500
"""The most reached columns the Impact page lists (the JSON holds them all)."""
DagFilter = Callable[[str], bool]


async def current_user(request: Request) -> Any:
    """Return the Airflow user of the request, as Airflow's own routes find it.

    Raises HTTPException 401 (no credential) or 403 (a bad one).
    """
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    return await get_user(request, None, await bearer_scheme(request))


def readable_dags(user: Annotated[Any, Depends(current_user)]) -> DagFilter:
    """Return the test of whether the user may read a DAG, as the auth manager answers it."""
    from airflow.api_fastapi.app import get_auth_manager

    allowed = frozenset(get_auth_manager().get_authorized_dag_ids(user=user, method="GET"))
    return allowed.__contains__


Readable = Annotated[DagFilter, Depends(readable_dags)]


def _login_url() -> str:
    try:
        from airflow.api_fastapi.app import get_auth_manager

        return str(get_auth_manager().get_url_login())
    except Exception:  # no auth manager to ask (a test app): the simple auth manager's page
        return "../auth/login"


def _refused(request: Request, error: HTTPException) -> Response:
    if "text/html" in request.headers.get("accept", ""):
        title = "Log in to see lineage governance" if error.status_code == 401 else "Not allowed"
        return HTMLResponse(
            render("refused.html", title=title, detail=error.detail, login=_login_url()), status_code=error.status_code
        )
    return JSONResponse({"detail": error.detail}, status_code=error.status_code)


def _html(text: str) -> HTMLResponse:
    return HTMLResponse(text, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


def create_app(data: UiData | None = None) -> FastAPI:
    """Return the app over `data` (default: the sources the provider's settings name).

    Every answer about lineage is asked of the lineage store when the request comes; nothing is loaded before.
    """
    app = FastAPI(title="Lineage governance", docs_url=None, redoc_url=None, openapi_url=None)
    ui = data or UiData(airflow_sources())
    app.state.data = ui
    app.add_exception_handler(HTTPException, _refused)  # type: ignore[arg-type]

    @app.get("/", include_in_schema=False)
    def home(_: Annotated[Any, Depends(current_user)]) -> RedirectResponse:
        return RedirectResponse("governance")

    @app.get("/governance", response_class=HTMLResponse)
    def governance_runs(may_read: Readable) -> HTMLResponse:
        listing = _listing(ui, may_read)
        latest = listing.latest
        return _html(
            render(
                "runs.html",
                title="Governance",
                runs=[_listed(line) for line in listing.lines],
                latest=latest.line if latest else None,
                latest_href=_listed(latest.line)["href"] if latest else "",
                groups=_groups(ui, latest.findings) if latest else [],
                store=listing.store,
                reason=listing.reason,
                folder=str(ui.sources.report_folder()),
            )
        )

    @app.get("/run", response_class=HTMLResponse)
    def governance_run(dag_id: str, run_id: str, may_read: Readable) -> HTMLResponse:
        shown = _shown_run(ui, dag_id, run_id, may_read)
        query = urlencode({"dag_id": dag_id, "run_id": run_id})
        return _html(
            render(
                "run.html",
                title=f"Governance {run_id}",
                line=shown.line,
                where=shown.where,
                groups=_groups(ui, shown.findings),
                back="governance",
                report_json=f"report?{query}&format=json",
                report_md=f"report?{query}&format=md",
                airflow_run=f"../dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}",
            )
        )

    @app.get("/report")
    def report_file(dag_id: str, run_id: str, may_read: Readable, format: str = "json") -> Response:
        shown = _shown_run(ui, dag_id, run_id, may_read)
        if format not in ("json", "md"):
            raise HTTPException(404, "no such report")
        kind = "application/json" if format == "json" else "text/markdown; charset=utf-8"
        if shown.report is not None:  # the store's record, written out as the report files are
            from airflow_lineage_governance.governance.report import markdown

            text = json.dumps(shown.report.to_dict(), indent=2) + "\n" if format == "json" else markdown(shown.report)
            return PlainTextResponse(text, media_type=kind)
        path = ui.report_path(dag_id, run_id)
        if path is None:
            raise HTTPException(404, "no such report")
        chosen = path if format == "json" else path.with_suffix(".md")
        return PlainTextResponse(chosen.read_text(), media_type=kind)

    @app.get("/lineage", response_class=HTMLResponse)
    def lineage(dag_id: str, run_id: str, task_id: str, may_read: Readable) -> HTMLResponse:
        return _lineage_page(ui, dag_id, run_id, task_id, may_read)

    @app.get("/impact", response_class=HTMLResponse)
    def impact_page(may_read: Readable, column: str = "") -> HTMLResponse:
        return _impact_page(ui, column, may_read)

    @app.get("/impact.json")
    def impact_json(column: str, may_read: Readable) -> Response:
        try:
            with ui.governance() as stored:
                impact = stored.impact(column)
                _check_reach(stored, [*impact.owners], may_read)
                text = impact.to_json()
        except ColumnNotInLineageError as error:
            raise HTTPException(404, str(error)) from None
        except LineageGovernanceError as error:
            raise HTTPException(503, str(error)) from None
        return Response(text, media_type="application/json")

    return app


def _lineage_page(ui: UiData, dag_id: str, run_id: str, task_id: str, may_read: DagFilter) -> HTMLResponse:
    """Render the Lineage tab: the column lineage of a task's COMPLETE event in one run."""
    if not may_read(dag_id):
        raise HTTPException(403, f"you may not read the DAG {dag_id}")
    job, event, problem = f"{dag_id}.{task_id}", None, None
    try:
        with ui.governance() as stored:
            engine, namespaces = stored.store.engine, stored.job_namespaces
            event = stored.store.answer(
                "read a task's COMPLETE event", lambda: lookups.task_complete(engine, job, run_id, namespaces)
            )
    except LineageGovernanceError as error:
        problem = str(error)
    found = task_lineage(event) if event is not None else None
    message = None
    if problem is not None:
        message = problem
    elif found is None or not found.outputs:
        message = (
            f"No column lineage from {job} in run {run_id}: only IcebergSqlOperator tasks "
            "send it, in the COMPLETE event they send when they end."
        )
    outputs = [(o, lineage_picture(o)) for o in found.outputs] if found else []
    return _html(
        render(
            "lineage.html",
            title=f"Lineage of {task_id}",
            dag_id=dag_id,
            task_id=task_id,
            outputs=outputs,
            reads=found.reads if found else [],
            message=message,
            event_time=found.event_time if found else "",
        )
    )


def _impact_page(ui: UiData, column: str, may_read: DagFilter) -> HTMLResponse:
    """Render the impact explorer, with the impact of `column` when one is asked."""
    values: dict[str, Any] = {"title": "Impact", "column": column, "problem": None, "columns": [], "impact": None}
    try:
        with ui.governance() as stored:
            engine, namespaces = stored.store.engine, stored.job_namespaces
            values["columns"] = stored.store.answer(
                "listed its columns", lambda: lookups.column_names(engine, namespaces, MAX_COMPLETION)
            )
            if column:
                values.update(_impact_values(stored, column, may_read))
    except LineageGovernanceError as error:  # the column is in no event, or the store cannot be read
        values["problem"] = str(error)
    return _html(render("impact.html", **values))


def _impact_values(stored: StoredGovernance, column: str, may_read: DagFilter) -> dict[str, Any]:
    """Return what the Impact page shows of the impact of `column`, asked of the open store."""
    impact = stored.impact(column)
    _check_reach(stored, [*impact.owners], may_read)
    walker = stored.walker()
    picture, hidden = stored.store.answer("drew an impact", lambda: impact_picture(impact, walker.leaving))
    return {
        "impact": impact,
        "score": f"{impact.score:g}",
        "picture": picture,
        "hidden": hidden,
        "reached": _reached(stored, impact),
        "more": max(0, len(impact.columns_reached) - MAX_LISTED),
        "observed": _observed_count(impact),
        "json_href": "impact.json?" + urlencode({"column": column}),
    }


Found = list[tuple[dict[str, Any], str | None]]
"""A run's findings: each one's fields as the report has them, and its sentence (None: made from the fields)."""


@dataclass
class ShownRun:
    """A governance run as a page shows it: its line, its findings, where they were read, and the store's report."""

    line: ReportLine
    findings: Found
    where: str
    report: GovernanceReport | None = None


@dataclass
class Listing:
    """The governance runs the Governance page lists, newest first, and the latest one's findings.

    `store` names the lineage store they were read from; None when they are the report files' (`reason` says why).
    """

    lines: list[ReportLine]
    latest: ShownRun | None
    store: str | None = None
    reason: str | None = None


def _readable(dag_id: str, target_dag_id: str | None, may_read: DagFilter) -> bool:
    return may_read(dag_id) and (not target_dag_id or may_read(target_dag_id))


def _listing(ui: UiData, may_read: DagFilter) -> Listing:
    """Return the runs the user may read: the store's when it holds any governance run, else the report files'."""
    try:
        with ui.governance_store() as store:
            kept = store.governance_runs(limit=MAX_KEPT_RUNS)
            where = store.engine.description
            if kept:
                readable = [r for r in kept if _readable(r.dag_id, r.target_dag_id, may_read)][:MAX_RUNS]
                latest = None
                if readable:
                    found = store.governance_findings(readable[0].dag_id, readable[0].run_id)
                    latest = ShownRun(
                        stored_line(readable[0]),
                        [(f.fields, f.message) for f in found],
                        f"from the lineage store {where}",
                    )
                return Listing([stored_line(r) for r in readable], latest, where)
            reason = f"The lineage store {where} holds no governance run yet"
    except LineageGovernanceError as error:  # no store yet, busy, unreachable, of an older schema
        reason = str(error).rstrip(".")
    reports = [r for r in ui.reports() if _may_read_report(r, may_read)]
    reports.sort(key=lambda r: (str(r.get("logical_date")), str(r.get("run_id"))), reverse=True)
    lines = [report_line(r) for r in reports[:MAX_RUNS]]
    latest = None
    if reports:
        path = ui.report_path(lines[0].dag_id, lines[0].run_id)
        latest = ShownRun(lines[0], [(f, None) for f in reports[0]["findings"]], f"from its report file {path}")
    return Listing(lines, latest, None, reason)


def _listed(line: ReportLine) -> dict[str, Any]:
    return {**line.__dict__, "href": "run?" + urlencode({"dag_id": line.dag_id, "run_id": line.run_id})}


def _shown_run(ui: UiData, dag_id: str, run_id: str, may_read: DagFilter) -> ShownRun:
    """Return one governance run: the store's record when the store holds any governance run, else its report file.

    Raises HTTPException 404 when there is no such run, 403 when the user may not read its DAG or the DAG it checks.
    """
    from airflow_lineage_governance.governance.recorded_runs import report_of

    try:
        with ui.governance_store() as store:
            if store.latest_governance_run() is not None:
                run = store.governance_run(dag_id, run_id)
                if run is None:
                    raise HTTPException(404, f"no governance run {run_id} of {dag_id} in the lineage store")
                if not _readable(run.dag_id, run.target_dag_id, may_read):
                    raise HTTPException(403, f"you may not read the DAG {dag_id} or the DAG it checks")
                found = store.governance_findings(dag_id, run_id)
                try:
                    report: GovernanceReport | None = report_of(run, found)
                except ValueError:  # a finding of a kind this provider does not know
                    report = None
                where = f"from the lineage store {store.engine.description}"
                return ShownRun(stored_line(run), [(f.fields, f.message) for f in found], where, report)
    except LineageGovernanceError:  # no store to read: the report files
        pass
    data = _report(ui, dag_id, run_id, may_read)
    path = ui.report_path(dag_id, run_id)
    line = report_line(data)
    if path is not None:
        line.checked_at = moment(datetime.fromtimestamp(path.stat().st_mtime, UTC))
    return ShownRun(line, [(f, None) for f in data["findings"]], f"from its report file {path}")


def _may_read_report(report: dict[str, Any], may_read: DagFilter) -> bool:
    target = (report.get("coverage") or {}).get("target_dag_id")
    return _readable(str(report.get("dag_id")), str(target) if target else None, may_read)


def _report(ui: UiData, dag_id: str, run_id: str, may_read: DagFilter) -> dict[str, Any]:
    for report in ui.reports():
        if report.get("dag_id") == dag_id and report.get("run_id") == run_id:
            if not _may_read_report(report, may_read):
                raise HTTPException(403, f"you may not read the DAG {dag_id} or the DAG it checks")
            return report
    raise HTTPException(404, f"no governance report of {dag_id} run {run_id}")


def _groups(ui: UiData, findings: Found) -> list[dict[str, Any]]:
    from airflow_lineage_governance.governance.findings import Finding

    owners = ui.owners()
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for data, sentence in findings:
        data = data if isinstance(data, dict) else {}
        subject, table = finding_subject(data)
        evidence = {k: v for k, v in data.items() if k not in ("kind", "table", "column", "job")}
        if sentence is None:
            try:
                sentence = Finding.from_dict(data).sentence()
            except (ValueError, KeyError, TypeError):
                sentence = ""
        grouped[str(data.get("kind"))].append(
            {
                "subject": subject,
                "owner": owners.get(table) if table else None,
                "sentence": sentence,
                "evidence": _evidence(evidence),
            }
        )
    groups = []
    for kind in sorted(grouped, key=lambda k: (_severity_word(k) != "error", k)):
        groups.append({"heading": kind.replace("_", " "), "severity": _severity_word(kind), "findings": grouped[kind]})
    return groups


def _severity_word(kind: str) -> str:
    try:
        return str(FindingKind(kind).severity)
    except ValueError:
        return "error"


def _evidence(evidence: dict[str, Any]) -> str:
    return "; ".join(f"{k}: {_flat(v)}" for k, v in evidence.items())


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(_flat, value))
    return str(value)


def writer_dag(writer: lookups.Writer) -> str:
    """Return the DAG whose task is the job writing a table: its COMPLETE's Airflow facet's, else the job's prefix.

    The prefix is the job name before its last dot (the whole name when it has none).
    """
    run = (writer.event or {}).get("run")
    facets = run.get("facets") if isinstance(run, dict) else None
    airflow = facets.get("airflow") if isinstance(facets, dict) else None
    dag = airflow.get("dag") if isinstance(airflow, dict) else None
    dag_id = dag.get("dag_id") if isinstance(dag, dict) else None
    return dag_id if isinstance(dag_id, str) else writer.job.rpartition(".")[0] or writer.job


def _check_reach(stored: StoredGovernance, tables: list[TableRef], may_read: DagFilter) -> None:
    engine, namespaces = stored.store.engine, stored.job_namespaces
    found = stored.store.answer("listed the tables' writers", lambda: lookups.writers(engine, tables, namespaces))
    hidden = sorted({dag for writers in found.values() for w in writers if not may_read(dag := writer_dag(w))})
    if hidden:
        raise HTTPException(403, f"the impact reaches tables written by DAGs you may not read ({', '.join(hidden)})")


def _observed_count(impact: Any) -> int:
    """Return how many reached columns every hop of whose path an event observed.

    The rest are candidates: reached through declared or designed lineage.
    """
    reached = impact.reached
    return sum(1 for c in impact.columns_reached if c not in reached or reached[c].confidence == "observed")


def _reached(stored: StoredGovernance, impact: Impact) -> list[dict[str, Any]]:
    values = set(impact.values)
    tables = stored.metadata.tables
    found = []
    for column in impact.columns_reached[:MAX_LISTED]:
        path = impact.paths[column]
        meta = tables.get(column.table)
        evidence = impact.reached.get(column)
        found.append(
            {
                "column": str(column),
                "how": "values" if column in values else "rows",
                "confidence": str(evidence.confidence) if evidence else "observed",
                "stale": bool(evidence and evidence.stale),
                "owner": impact.owners.get(column.table),
                "tier": meta.tier if meta else None,
                "path": " -> ".join([str(path[0].source), *(f"{e.target} ({e.type} {e.subtype})" for e in path)])
                if path
                else "",
            }
        )
    return found
