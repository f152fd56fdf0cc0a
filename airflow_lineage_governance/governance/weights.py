"""The blast-radius weight of a table.

From its tier and owner in the governance metadata and the weights in lineage.toml.
"""

from __future__ import annotations

from collections.abc import Callable

from airflow_lineage_governance.governance.config import Metadata, Rules
from airflow_lineage_governance.refs import TableRef


def tier_weight(metadata: Metadata, rules: Rules) -> Callable[[TableRef], float]:
    """Return the blast-radius weight of a table.

    Its tier's weight in lineage.toml (else the default weight), times its owner's weight there (else 1).
    """

    def weight(table: TableRef) -> float:
        known = metadata.tables.get(table)
        if known is None:
            return rules.default_weight
        tier = (
            rules.tier_weights.get(known.tier, rules.default_weight) if known.tier is not None else rules.default_weight
        )
        return tier * rules.owner_weights.get(known.owner or "", 1.0)

    return weight
