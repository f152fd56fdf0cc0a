"""LineageCompleteSensor.

Waits for a DAG's run of the same logical date to finish, then for a COMPLETE lineage event of every task instance that
succeeded in it. It never waits forever: when its timeout ends the wait with events still missing, it succeeds and hands
the missing list on (XCom) for the checks to report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowSensorTimeout

from airflow_lineage_governance import settings

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_lineage_governance.graph.events import RunEvent


def default_event_source() -> str | None:
    """Return `[lineage_governance] events`, else where the OpenLineage provider's transport sends events.

    A file transport's path or an HTTP transport's URL, read the way the provider reads its config; else None.
    """
    return settings.event_source()


def default_job_namespace() -> str:
    """Return the OpenLineage job namespace the provider uses.

    `[openlineage] namespace`, else OPENLINEAGE_NAMESPACE, else `default`.
    """
    return settings.openlineage_namespace()


class LineageCompleteSensor(BaseSensorOperator):
    """Holds a DAG run's task states against the lineage events received for it.

    The task states are read from the scheduler through the Task SDK.

    :param target_dag_id: the DAG whose run of the same logical date is checked.
    :param events: an OpenLineage JSONL file or a Marquez URL (default: where the provider sends events).
    :param job_namespace: the OpenLineage job namespace of the target's events (default: the provider's).
    :param store: a lineage store (a DuckDB file or a postgresql:// URL) to read the target run's events from,
        instead of the event source: only that run's events are read.
    """

    template_fields: Sequence[str] = ("target_dag_id", "events", "store")

    def __init__(
        self,
        *,
        target_dag_id: str,
        events: str | None = None,
        job_namespace: str | None = None,
        store: str | None = None,
        mode: str = "reschedule",
        poke_interval: float = 30,
        timeout: float = 600,
        **kwargs: Any,
    ) -> None:
        super().__init__(mode=mode, poke_interval=poke_interval, timeout=timeout, **kwargs)
        self.target_dag_id = target_dag_id
        self.events = events
        self.job_namespace = job_namespace
        self.store = store

    def _verdict(self, context: Context) -> dict[str, Any]:
        # The governance and graph layers load here, not when the DAG file is parsed.
        from airflow_lineage_governance.governance.runs import FINISHED, missing_completes
        from airflow_lineage_governance.graph.errors import EventSourceError
        from airflow_lineage_governance.graph.events import read_events
        from airflow_lineage_governance.graph.sources import open_event_source

        ti = context["ti"]
        runs = ti.get_task_states(dag_id=self.target_dag_id, logical_dates=[context["logical_date"]])
        verdict: dict[str, Any] = {
            "target_dag_id": self.target_dag_id,
            "target_run_id": None,
            "finished": False,
            "task_states": {},
            "missing": [],
            "backend_problem": None,
            "events": self.events or default_event_source(),
            "job_namespace": self.job_namespace or default_job_namespace(),
        }
        if not runs:
            verdict["backend_problem"] = (
                f"no run of {self.target_dag_id} exists for the logical date {context['logical_date'].isoformat()}"
            )
            return verdict
        run_id, states = sorted(runs.items())[-1]
        states = {task: str(getattr(state, "value", state)) for task, state in states.items()}
        verdict.update(
            target_run_id=run_id, task_states=states, finished=all(state in FINISHED for state in states.values())
        )
        if not verdict["finished"]:
            return verdict
        source, reason = verdict["events"], ""
        events: list[RunEvent] = []
        if self.store:
            verdict["events"] = None
            events, reason = self._stored_events(run_id, verdict["job_namespace"])
        elif source is None:
            reason = f"no event source is configured (set {settings.SETTINGS['events'].flag_or_setting})"
        else:
            try:
                events, _ = read_events(open_event_source(source), verdict["job_namespace"])
            except EventSourceError as error:
                reason = f"the lineage backend was unreachable: {error}"
        verdict["backend_problem"] = reason or None
        verdict["missing"] = [
            m.to_dict() for m in missing_completes(states, events, self.target_dag_id, run_id, reason)
        ]
        return verdict

    def _stored_events(self, run_id: str, job_namespace: str) -> tuple[list[RunEvent], str]:
        """Return the target run's events of the job namespace in the store, and why none could be read (or "")."""
        from airflow_lineage_governance.store.errors import StoreError
        from airflow_lineage_governance.store.lineage_store import LineageStore

        assert self.store is not None
        try:
            with LineageStore.open(self.store, read_only=True) as store:
                events = store.run_events(self.target_dag_id, run_id)
        except StoreError as error:
            return [], f"the lineage store could not be read: {error}"
        return [e for e in events if e.job_namespace == job_namespace], ""

    def poke(self, context: Context) -> PokeReturnValue | bool:
        """Return done (with the verdict) once the target run finished and every success has its COMPLETE."""
        verdict = self._verdict(context)
        if not verdict["finished"]:
            self.log.info(
                "Waiting for %s run %s to finish: %s",
                self.target_dag_id,
                verdict["target_run_id"],
                verdict["backend_problem"] or verdict["task_states"],
            )
            return False
        if verdict["missing"]:
            self.log.info("Waiting for COMPLETE events of %s", ", ".join(m["job"] for m in verdict["missing"]))
            return False
        self.log.info(
            "Every successful task of %s run %s has its COMPLETE event", self.target_dag_id, verdict["target_run_id"]
        )
        return PokeReturnValue(is_done=True, xcom_value=verdict)

    def execute(self, context: Context) -> dict[str, Any]:
        """Return the verdict: the target run, its task states, the missing COMPLETE events and any backend problem.

        A timeout ends the wait with what is missing rather than failing.
        """
        try:
            done = super().execute(context)
        except AirflowSensorTimeout:
            verdict = self._verdict(context)
            self.log.warning(
                "Stopped waiting after %s s; %d task(s) of %s have no COMPLETE event%s",
                self.timeout,
                len(verdict["missing"]),
                self.target_dag_id,
                f" ({verdict['backend_problem']})" if verdict["backend_problem"] else "",
            )
            return verdict
        return done if isinstance(done, dict) else self._verdict(context)
