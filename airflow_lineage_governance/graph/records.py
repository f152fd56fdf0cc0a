"""The evidence of a run: what an answer shows of each COMPLETE event.

A run record (job, run, try, time, the snapshots read and written, the SQL hash, its source) and the lineage it
stated; and the hash of a statement's normalised SQL.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.graph.events import RunEvent
from airflow_lineage_governance.kinds import EdgeSource
from airflow_lineage_governance.refs import TableRef

Versions = tuple[tuple[TableRef, str | None], ...]

_SQL_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\s+|[^\s'\"]+|['\"]")


def sql_hash(query: str) -> str:
    """Return the SHA-256 (first 16 hex digits) of the query normalised.

    Runs of whitespace made one space, text outside quotes lower-cased, quoted literals and identifiers kept as written.
    (sqlglot is not used: a history holds thousands of distinct statements and parsing each would cost more than reading
    the events; the operator's `sql` facet is sqlglot's own rendering already, so the same statement always hashes the
    same.)
    """
    parts = []
    for token in _SQL_TOKENS.findall(query.strip()):
        if token[0] in "'\"":
            parts.append(token)
        elif token.isspace():
            parts.append(" ")
        else:
            parts.append(token.lower())
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:16]


@dataclass(slots=True, eq=False)
class Shape:
    """The lineage a run (or a declaration) stated: its edges and the tables it wrote."""

    edges: list[Edge]
    outputs: list[TableRef]


@dataclass(slots=True, eq=False)
class RunRecord:
    """One COMPLETE event of a job (or a declared or designed statement of a job's lineage, with no run)."""

    event: RunEvent
    shape: Shape
    sql_hash: str | None = None
    inputs: Versions = ()
    outputs: Versions = ()
    source: EdgeSource = EdgeSource.OBSERVED
    owner: str | None = None
    reason: str | None = None

    @property
    def job(self) -> str:
        """Return the job's name."""
        return self.event.job_name

    def read(self, table: TableRef) -> str | None:
        """Return the snapshot of `table` the run read, or None when its event named no version."""
        return next((v for t, v in self.inputs if t == table), None)

    def wrote(self, table: TableRef) -> str | None:
        """Return the snapshot of `table` the run wrote, or None when its event named no version."""
        return next((v for t, v in self.outputs if t == table), None)

    def to_dict(self) -> dict[str, object]:
        """Return the run's evidence as the CLI's JSON shows it."""
        event = self.event
        return {
            "job": event.job_name,
            "source": str(self.source),
            "run_id": event.run_id or None,
            "try": event.try_number,
            "event_time": event.event_time or None,
            "sql_hash": self.sql_hash,
            "inputs": {str(t): v for t, v in self.inputs},
            "outputs": {str(t): v for t, v in self.outputs},
            **({"owner": self.owner, "reason": self.reason} if self.source is not EdgeSource.OBSERVED else {}),
        }
