"""The checks that guard lineage itself: tables no lineage accounts for, written tables with no metadata,
and the blast-radius weight of a table."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from airflow_lineage_governance.governance.classify import Proposal
from airflow_lineage_governance.governance.config import Metadata, Rules
from airflow_lineage_governance.graph.build import LineageGraph


@dataclass(frozen=True)
class Unaccounted:
    """A catalog table that is neither a declared source nor the output of any job in the events."""

    table: str

    def to_dict(self) -> dict[str, object]:
        """Returns the finding as the report's JSON shows it."""
        return {"kind": "unaccounted_table", "table": self.table}


@dataclass(frozen=True)
class MissingMetadata:
    """A table some job wrote that metadata.toml says nothing about, with lineage's proposals for it."""

    table: str
    proposals: dict[str, str | None]

    def to_dict(self) -> dict[str, object]:
        """Returns the finding as the report's JSON shows it."""
        return {"kind": "missing_metadata", "table": self.table, "proposals": self.proposals}


def unaccounted(catalog_tables: Iterable[str], metadata: Metadata, lineage: LineageGraph) -> list[Unaccounted]:
    """Returns the catalog tables that are neither sources declared in metadata.toml nor outputs of a job."""
    sources = {name for name, table in metadata.tables.items() if table.source}
    return [Unaccounted(t) for t in sorted(set(catalog_tables)) if t not in sources and t not in lineage.outputs]


def missing_metadata(lineage: LineageGraph, metadata: Metadata,
                     proposals: Mapping[str, Proposal]) -> list[MissingMetadata]:
    """Returns every written table with no metadata, each with the class proposed for each of its columns."""
    found = []
    for table in sorted(lineage.outputs):
        if table in metadata.tables:
            continue
        columns = {c.rsplit(".", 1)[1]: proposals[c].proposed for c in lineage.columns_of(table) if c in proposals}
        found.append(MissingMetadata(table, columns))
    return found


def tier_weight(metadata: Metadata, rules: Rules) -> Callable[[str], float]:
    """Returns the blast-radius weight of a table: its tier's weight in lineage.toml (else the default weight),
    times its owner's weight there (else 1)."""

    def weight(table: str) -> float:
        known = metadata.tables.get(table)
        if known is None:
            return rules.default_weight
        tier = rules.tier_weights.get(known.tier, rules.default_weight) if known.tier is not None else \
            rules.default_weight
        return tier * rules.owner_weights.get(known.owner or "", 1.0)

    return weight
