"""The evidence of an edge: the run that stated it and whether it is stale, as every answer carries it."""

from __future__ import annotations

from typing import NamedTuple

from airflow_lineage_governance.graph.build import Edge
from airflow_lineage_governance.graph.records import RunRecord
from airflow_lineage_governance.kinds import Confidence, EdgeSource
from airflow_lineage_governance.refs import TableRef

CONFIDENCE_OF = {source: Confidence(str(source)) for source in EdgeSource}
"""The confidence of an edge of each source."""


class Evidence(NamedTuple):
    """What says an edge holds.

    The record (run) that stated it, the snapshots it read and wrote, and whether it is stale (its run is older than the
    answer's `--active-since` window). (A named tuple: a wide answer makes one per column reached.)
    """

    edge: Edge
    record: RunRecord | None
    stale: bool = False

    @property
    def confidence(self) -> Confidence:
        """Return the hop's confidence: its record's source.

        Without a record, the edge's own source when it names a run (a graph built straight from events), else
        `uncertain` (nothing says who stated it).
        """
        if self.record is not None:
            return CONFIDENCE_OF[self.record.source]
        if self.edge.source_kind is not EdgeSource.OBSERVED or self.edge.run_id:
            return CONFIDENCE_OF[self.edge.source_kind]
        return Confidence.UNCERTAIN

    def to_dict(self) -> dict[str, object]:
        """Return the hop as the CLI's JSON shows it: the edge, its source and the run's evidence."""
        edge, record = self.edge, self.record
        data: dict[str, object] = {**edge.to_dict(), "source_kind": str(self.confidence), "stale": self.stale}
        if record is None:
            return {**data, "run_id": edge.run_id or None, "event_time": edge.event_time or None}
        source_table = edge.source.table
        target_table = edge.target if isinstance(edge.target, TableRef) else edge.target.table
        event = record.event
        data.update(
            {
                "run_id": event.run_id or None,
                "try": event.try_number,
                "event_time": event.event_time or None,
                "input_snapshot": record.read(source_table),
                "output_snapshot": record.wrote(target_table),
                "sql_hash": record.sql_hash,
            }
        )
        if record.source is not EdgeSource.OBSERVED:
            data.update({"owner": record.owner, "reason": record.reason})
        return data
