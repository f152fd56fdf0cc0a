"""What a breadth-first walk of lineage found.

A walk keeps, for each node reached, the node it was reached from and the edge between, so paths share their
beginnings and are listed only when asked for (the store's walk is `store/provenance.py`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from airflow_lineage_governance.graph.build import Edge

N = TypeVar("N", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Walk(Generic[N]):
    """Every node a walk reached from `start`, with the node it was reached from and the edge between.

    The node it was reached from is `parent`, the edge `edge_in`; in the order reached (`start` itself only when a cycle
    leads back to it), and, when the walk worked them out, the glance of each (`reach.mark`).
    """

    start: N
    parent: Mapping[N, N]
    edge_in: Mapping[N, Edge]
    marks: Mapping[N, int] | None = None
