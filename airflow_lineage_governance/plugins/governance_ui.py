"""The Airflow plugin of the provider.

Mounts the governance UI's FastAPI app on the api-server at /lineage-governance and adds the Governance and Impact pages
to the navigation and a Lineage tab to every task instance (the tab says so when the task sent no column lineage).

This module is imported wherever Airflow loads plugins (the scheduler, workers, the dag-processor), so it imports
nothing heavy: the app is built on the first request the api-server sends it.
"""

from __future__ import annotations

from typing import Any

try:  # the Task SDK's, so that a worker with no airflow-core installed loads it too
    from airflow.sdk.plugins_manager import AirflowPlugin
except ImportError:  # pragma: no cover - an Airflow before the SDK had it
    from airflow.plugins_manager import AirflowPlugin  # type: ignore[assignment]

URL_PREFIX = "/lineage-governance"
_PAGES = URL_PREFIX.lstrip("/")  # hrefs are relative to the UI's base URL (its <base href>)


class LazyApp:
    """An ASGI app that builds the governance UI's FastAPI app on its first request."""

    def __init__(self) -> None:
        self._app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Serve one ASGI call, building the app first when this is the first."""
        if self._app is None:
            from airflow_lineage_governance.plugins.app import create_app

            self._app = create_app()
        await self._app(scope, receive, send)

    def __repr__(self) -> str:
        return "airflow_lineage_governance.plugins.app:create_app"


class LineageGovernancePlugin(AirflowPlugin):
    """Governance (navigation), Impact (navigation) and Lineage (a task instance tab)."""

    name = "lineage_governance"
    fastapi_apps = [{"app": LazyApp(), "url_prefix": URL_PREFIX, "name": "Lineage governance"}]
    external_views = [
        {
            "name": "Governance",
            "href": f"{_PAGES}/governance",
            "destination": "nav",
            "category": "browse",
            "url_route": "lineage-governance",
        },
        {
            "name": "Impact",
            "href": f"{_PAGES}/impact",
            "destination": "nav",
            "category": "browse",
            "url_route": "lineage-impact",
        },
        {
            "name": "Lineage",
            "href": f"{_PAGES}/lineage?dag_id={{DAG_ID}}&run_id={{RUN_ID}}&task_id={{TASK_ID}}",
            "destination": "task_instance",
            "url_route": "column-lineage",
        },
    ]
