"""Where the UI's answers come from, read once and kept.

The governance (events, graph, rules and metadata) of the configured event source, rebuilt only when the source changes;
the governance reports; one task's COMPLETE event.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_lineage_governance.governance.session import Governance
from airflow_lineage_governance.graph.events import (
    COMPLETE,
    ReadReport,
    keep_for_the_process,
    to_run_event,
)
from airflow_lineage_governance.graph.sources import open_event_source
from airflow_lineage_governance.refs import TableRef

MARQUEZ_SECONDS = 60
"""How long the graph read from a Marquez server is kept before it is read again (a file is re-read when its
modification time or size changes)."""
REPORT_NAME = "governance-report.json"


@dataclass
class Sources:
    """Where to read.

    The event source, the folder of lineage.toml and metadata.toml, the reports folder and the job namespaces read
    (None: every namespace). Each is a callable, so a change of configuration is seen.
    """

    events: Callable[[], str | None]
    governance_dir: Callable[[], Path]
    report_folder: Callable[[], Path]
    job_namespaces: Callable[[], list[str] | None]


def airflow_sources() -> Sources:
    """Return the sources the provider's settings name, as the CLI reads them.

    `[lineage_governance] events` else the OpenLineage transport's file or URL; `governance_dir` else ./governance;
    `report_folder`; the OpenLineage provider's configured job namespace, else every namespace.
    """
    from airflow_lineage_governance import settings
    from airflow_lineage_governance.sensors.lineage_complete import default_event_source

    def namespaces() -> list[str] | None:
        configured = settings.configured_openlineage_namespace()
        return [configured] if configured else None

    return Sources(
        default_event_source,
        lambda: Path(settings.setting("governance_dir") or "governance"),
        settings.report_folder,
        namespaces,
    )


def _fingerprint(spec: str) -> tuple[Any, ...]:
    if spec.startswith(("http://", "https://")):
        return ("marquez", int(time.monotonic() // MARQUEZ_SECONDS))
    try:
        found = Path(spec).stat()
    except OSError:
        return ("missing",)
    return (found.st_mtime_ns, found.st_size)


def _file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size)


@dataclass
class Loaded:
    """The governance built for one version of the sources, or why it could not be."""

    key: tuple[Any, ...]
    governance: Governance | None
    problem: str | None
    spec: str | None
    task_events: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    columns: list[str] | None = None  # the graph's column names for completion, made when first asked


class UiData:
    """The UI's data, shared by every request.

    The governance of the current sources (built once per version of them, under a lock so concurrent requests build it
    once) and the parsed reports (per file version).
    """

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._lock = threading.Lock()
        self.query_lock = threading.Lock()  # the graph sorts its edge lists when first asked: one query at a time
        self._loaded: Loaded | None = None
        self._reports: dict[Path, tuple[tuple[int, int], dict[str, Any] | None]] = {}
        self._owners: tuple[tuple[Any, ...], dict[TableRef, str | None]] | None = None

    def warm_up(self) -> threading.Thread:
        """Start building the governance in a background thread (the first Impact or Lineage page then find it built).

        Returns the thread.
        """
        thread = threading.Thread(target=self.governance, name="lineage-governance-ui-warm-up", daemon=True)
        thread.start()
        return thread

    def owners(self) -> dict[TableRef, str | None]:
        """Return the owner of each table in metadata.toml, without building the graph.

        Read again only when it or lineage.toml changes; {} when they cannot be read.
        """
        from airflow_lineage_governance.errors import LineageGovernanceError
        from airflow_lineage_governance.governance.config import load_metadata, load_rules

        folder = self.sources.governance_dir()
        key = (str(folder), _file_stamp(folder / "lineage.toml"), _file_stamp(folder / "metadata.toml"))
        if self._owners is None or self._owners[0] != key:
            try:
                owners = load_metadata(folder / "metadata.toml", load_rules(folder / "lineage.toml")).owners()
            except LineageGovernanceError:
                owners = {}
            self._owners = (key, owners)
        return self._owners[1]

    def _key(self) -> tuple[Any, ...]:
        spec = self.sources.events()
        folder = self.sources.governance_dir()
        return (
            spec,
            _fingerprint(spec) if spec else None,
            tuple(self.sources.job_namespaces() or ()),
            str(folder),
            _file_stamp(folder / "lineage.toml"),
            _file_stamp(folder / "metadata.toml"),
        )

    def governance(self) -> Loaded:
        """Return the governance of the sources as they are now (rebuilt only when they changed).

        A source or TOML that cannot be read gives no governance and the sentence saying why.
        """
        key = self._key()
        loaded = self._loaded
        if loaded is not None and loaded.key == key:
            return loaded
        with self._lock:
            if self._loaded is not None and self._loaded.key == key:
                return self._loaded
            self._loaded = self._load(key)
            return self._loaded

    def _load(self, key: tuple[Any, ...]) -> Loaded:
        from airflow_lineage_governance.errors import LineageGovernanceError

        spec = key[0]
        if not spec:
            return Loaded(
                key,
                None,
                "no event source is configured: set [lineage_governance] events or the "
                "OpenLineage provider's file or HTTP transport.",
                None,
            )
        folder = self.sources.governance_dir()
        try:
            governance = Governance.load(
                spec,
                rules_path=folder / "lineage.toml",
                metadata_path=folder / "metadata.toml",
                job_namespaces=self.sources.job_namespaces(),
            )
        except LineageGovernanceError as error:
            return Loaded(key, None, str(error), spec)
        _sort_edges(governance)
        keep_for_the_process()  # again: the edge lists _sort_edges made after Governance.load froze the rest
        return Loaded(key, governance, None, spec)

    def task_event(self, dag_id: str, task_id: str, run_id: str) -> dict[str, Any] | None:
        """Return the latest COMPLETE event of the task's job (`<dag_id>.<task_id>`) in that DAG run, or None.

        From the graph when that run is the job's latest, else from one scan of the source (kept).
        """
        loaded = self.governance()
        if loaded.governance is None or loaded.spec is None:
            return None
        job = f"{dag_id}.{task_id}"
        latest = loaded.governance.graph.jobs.get(job)
        if latest is not None and latest.dag_run_id == run_id and latest.raw is not None:
            return latest.raw
        if (job, run_id) not in loaded.task_events:
            loaded.task_events[(job, run_id)] = _scan_for(loaded.spec, job, run_id, self.sources.job_namespaces())
        return loaded.task_events[(job, run_id)]

    def reports(self) -> list[dict[str, Any]]:
        """Return every governance report under the reports folder, each parsed once per file version.

        Reports are `<dag_id>/<run_id>/governance-report.json`; files that are not a report's JSON are left out.
        """
        found = []
        for path in sorted(self.sources.report_folder().glob(f"*/*/{REPORT_NAME}")):
            stamp = _file_stamp(path)
            if stamp is None:
                continue
            known = self._reports.get(path)
            if known is None or known[0] != stamp:
                known = (stamp, _read_report(path))
                self._reports[path] = known
            if known[1] is not None:
                found.append(known[1])
        return found

    def report_path(self, dag_id: str, run_id: str) -> Path | None:
        """Return the JSON report of one governance run, or None when there is none."""
        for path in self.sources.report_folder().glob(f"*/*/{REPORT_NAME}"):
            known = self._reports.get(path)
            report = known[1] if known else _read_report(path)
            if report and report.get("dag_id") == dag_id and report.get("run_id") == run_id:
                return path
        return None


def _sort_edges(governance: Governance) -> None:
    """Sort every column's outgoing edges now (the graph sorts a list when first asked).

    So that no impact query pays for sorting the part of the graph it walks first.
    """
    graph = governance.graph
    for columns in list(graph.table_columns.values()):
        for column in list(columns.values()):
            graph.out_edges(column)


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) and isinstance(report.get("findings"), list) else None


def _scan_for(spec: str, job: str, run_id: str, namespaces: list[str] | None) -> dict[str, Any] | None:
    from airflow_lineage_governance.errors import LineageGovernanceError

    best = None
    try:
        for raw in open_event_source(spec).raw_events(ReadReport(source=spec)):
            event = to_run_event(raw)
            if (
                event is None
                or event.event_type != COMPLETE
                or event.job_name != job
                or event.dag_run_id != run_id
                or (namespaces is not None and event.job_namespace not in namespaces)
            ):
                continue
            if best is None or event.order >= best.order:
                best = event
    except LineageGovernanceError:
        return None
    return best.raw if best is not None else None
