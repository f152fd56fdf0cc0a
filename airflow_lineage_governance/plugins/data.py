"""Where the UI's answers come from.

The lineage store, opened read-only for each request and closed after it (the lineage, and the governance runs with
their findings); the rules and metadata TOML (read again when they change); the governance report files, read only
while the store holds no governance run (parsed once per file version).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_lineage_governance.plugins.errors import StoreNotReadError
from airflow_lineage_governance.refs import TableRef

if TYPE_CHECKING:
    from airflow_lineage_governance.governance.config import Metadata, Rules
    from airflow_lineage_governance.governance.store_session import StoredGovernance
    from airflow_lineage_governance.store.lineage_store import LineageStore

REPORT_NAME = "governance-report.json"
WAIT_SECONDS = 5.0
"""How long a request waits for a DuckDB store another process has open for writing before the page says so."""


@dataclass
class Sources:
    """Where to read.

    The lineage store's location (a DuckDB file or a `postgresql://` URL), the folder of lineage.toml and
    metadata.toml, the reports folder, the job namespaces read (None: every namespace), and the store the nightly
    governance DAG records its runs in (None: the lineage store). Each is a callable, so a change of configuration is
    seen.
    """

    store: Callable[[], str]
    governance_dir: Callable[[], Path]
    report_folder: Callable[[], Path]
    job_namespaces: Callable[[], list[str] | None]
    governance_store: Callable[[], str] | None = None


def airflow_sources() -> Sources:
    """Return the sources the provider's settings name, as the CLI reads them.

    The store of `[lineage_governance] store_conn_id`, else `[lineage_governance] store`; `governance_dir` else
    ./governance; `report_folder`; the OpenLineage provider's configured job namespace, else every namespace; and the
    nightly DAG's store (`settings.governance_store`: a relative DuckDB path is taken inside the report folder).
    """
    from airflow_lineage_governance import settings

    def namespaces() -> list[str] | None:
        configured = settings.configured_openlineage_namespace()
        return [configured] if configured else None

    return Sources(
        settings.store_location,
        lambda: Path(settings.setting("governance_dir") or "governance"),
        settings.report_folder,
        namespaces,
        settings.governance_store,
    )


def _file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size)


class UiData:
    """The UI's data, shared by every request.

    No lineage is kept between requests: each asks the store. What is kept is the rules and metadata (per version of
    their files) and the parsed reports (per file version).
    """

    def __init__(self, sources: Sources, wait_seconds: float = WAIT_SECONDS) -> None:
        self.sources = sources
        self.wait_seconds = wait_seconds
        self._reports: dict[Path, tuple[tuple[int, int], dict[str, Any] | None]] = {}
        self._toml: tuple[tuple[Any, ...], Rules, Metadata] | None = None

    def _rules_and_metadata(self) -> tuple[Rules, Metadata]:
        from airflow_lineage_governance.governance.config import load_metadata, load_rules

        folder = self.sources.governance_dir()
        key = (str(folder), _file_stamp(folder / "lineage.toml"), _file_stamp(folder / "metadata.toml"))
        if self._toml is None or self._toml[0] != key:
            rules = load_rules(folder / "lineage.toml")
            self._toml = (key, rules, load_metadata(folder / "metadata.toml", rules))
        return self._toml[1], self._toml[2]

    def owners(self) -> dict[TableRef, str | None]:
        """Return the owner of each table in metadata.toml, without opening the store; {} when it cannot be read."""
        from airflow_lineage_governance.errors import LineageGovernanceError

        try:
            return self._rules_and_metadata()[1].owners()
        except LineageGovernanceError:
            return {}

    @contextmanager
    def governance(self) -> Iterator[StoredGovernance]:
        """Open the governance over the store for one request, and close the store after it.

        A DuckDB file another process has open for writing is waited for, up to `wait_seconds`.

        Yields:
            The rules and metadata over the store, open read-only.

        Raises:
            StoreNotReadError: The store cannot be opened (none yet, busy, unreachable), a setting is missing or a
                TOML file is bad; its message is one sentence saying what to do.
        """
        from airflow_lineage_governance.errors import LineageGovernanceError
        from airflow_lineage_governance.governance.store_session import StoredGovernance

        try:
            rules, metadata = self._rules_and_metadata()
            store = self._open(self.sources.store())
        except LineageGovernanceError as error:
            raise StoreNotReadError(str(error)) from None
        try:
            yield StoredGovernance(rules, metadata, store, self.sources.job_namespaces())
        finally:
            store.close()

    @contextmanager
    def governance_store(self) -> Iterator[LineageStore]:
        """Open the store the nightly DAG records its runs in, read-only for one request, and close it after.

        A DuckDB file another process has open for writing is waited for, up to `wait_seconds`.

        Yields:
            The store.

        Raises:
            StoreNotReadError: The store cannot be opened (none yet, busy, unreachable, of an older schema); its message
                is one sentence saying what to do.
        """
        from airflow_lineage_governance.errors import LineageGovernanceError

        try:
            store = self._open((self.sources.governance_store or self.sources.store)())
        except LineageGovernanceError as error:
            raise StoreNotReadError(str(error)) from None
        try:
            yield store
        finally:
            store.close()

    def _open(self, location: str) -> LineageStore:
        from airflow_lineage_governance.store.errors import StoreBusyError, StoreMissingError
        from airflow_lineage_governance.store.lineage_store import LineageStore

        deadline = time.monotonic() + self.wait_seconds
        pause = 0.02
        while True:
            try:
                return LineageStore.open(location, read_only=True)
            except StoreMissingError as error:
                raise StoreNotReadError(
                    f"No lineage store at {error.store} yet: create it with `lineage-governance store init` and fill "
                    "it with `lineage-governance store import EVENTS` (or the OpenLineage StoreTransport), then "
                    "reload this page."
                ) from None
            except StoreBusyError:
                if time.monotonic() + pause > deadline:
                    raise StoreNotReadError(
                        f"{location}: another process is writing the lineage store's DuckDB file; reload this page "
                        "in a moment, or keep a store that many processes share on PostgreSQL."
                    ) from None
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, 0.5)

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


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) and isinstance(report.get("findings"), list) else None
