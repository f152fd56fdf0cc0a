"""The CI gate: which output columns a change to a pipeline's SQL alters or removes, and how far each reaches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from airflow_lineage_governance.graph.answers import Impact
from airflow_lineage_governance.graph.errors import ColumnNotInLineageError
from airflow_lineage_governance.lineage import ColumnLineage
from airflow_lineage_governance.refs import ColumnRef, TableRef


class Answers(Protocol):
    """What the gate asks of the lineage: the impact of a column (`StoredGovernance`)."""

    def impact(self, column: ColumnRef) -> Impact:
        """Return the downstream impact of the column now; raise ColumnNotInLineageError when none names it."""
        ...


@dataclass(frozen=True)
class ColumnChange:
    """One output column a change alters or removes, with its impact on what lineage says reads it."""

    column: ColumnRef
    change: str
    impact: Impact | None

    @property
    def score(self) -> float:
        """Return the change's blast-radius score (0 when nothing downstream is known)."""
        return self.impact.score if self.impact else 0.0

    def to_dict(self) -> dict[str, object]:
        """Return the change as the CLI's JSON prints it."""
        return {
            "column": str(self.column),
            "change": self.change,
            "score": round(self.score, 3),
            "impact": self.impact.to_dict() if self.impact else None,
        }


def changed_columns(before: ColumnLineage, after: ColumnLineage | None) -> list[tuple[ColumnRef, str]]:
    """Return (column, 'removed' | 'changed') for every output column of `before` that `after` drops or alters.

    A column is altered when computed differently (other inputs, types or expression); a dropped statement removes every
    column.
    """
    now = {c.name: c for c in after.columns} if after and after.target == before.target else {}
    target = before.target if isinstance(before.target, TableRef) else TableRef.parse(before.target)
    found = []
    for column in before.columns:
        name = target.column(column.name)
        new = now.get(column.name)
        if new is None:
            found.append((name, "removed"))
        elif set(new.inputs) != set(column.inputs) or new.expression != column.expression:
            found.append((name, "changed"))
    return found


def gate(governance: Answers, before: ColumnLineage, after: ColumnLineage | None) -> list[ColumnChange]:
    """Return each changed or removed column with its downstream impact in the received lineage."""
    changes = []
    for column, change in changed_columns(before, after):
        try:
            impact = governance.impact(column)
        except ColumnNotInLineageError:
            impact = None
        changes.append(ColumnChange(column, change, impact))
    return changes
