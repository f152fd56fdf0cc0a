"""Breadth-first walks of lineage.

`breadth_first` over any nodes (the walks of a LineageGraph and of the history are in graph/history_walk.py). A walk
keeps, for each node reached, the node it was reached from and the edge between, so paths share their beginnings and
are listed only when asked for. The history as of a time is walked by node number (graph/history_walk.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from airflow_lineage_governance.graph.build import Edge

N = TypeVar("N", bound=Hashable)
Step = tuple[N, Edge]


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


def breadth_first(start: N, step: Callable[[N], list[Step[N]]]) -> Walk[N]:
    """Return every node reached from `start`, each with the first edge that reaches it.

    Breadth first, each node's steps in the order given; `start` itself only when a cycle leads back to it.
    """
    parent: dict[N, N] = {}
    edge_in: dict[N, Edge] = {}
    cycle: tuple[N, Edge] | None = None
    queue = deque([start])
    pop, push = queue.popleft, queue.append
    while queue:
        node = pop()
        for reached, edge in step(node):
            if reached == start:
                if cycle is None:
                    cycle = (node, edge)
            elif reached not in parent:
                parent[reached] = node
                edge_in[reached] = edge
                push(reached)
    if cycle is not None:
        parent[start], edge_in[start] = cycle
    return Walk(start, parent, edge_in)
