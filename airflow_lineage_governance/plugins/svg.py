"""Server-side SVG pictures of column lineage.

Tables drawn as boxes of column rows, laid out left to right by depth, and one curve per edge styled by its type (solid
DIRECT, dashed INDIRECT), subtype (colour) and masking (dotted, marked). Every name is escaped: names come from events,
which anyone able to send one can write.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from html import escape

BOX_WIDTH = 250
GAP = 150
ROW = 22
TITLE = 28
MARGIN = 16
LABEL_CHARS = 34


@dataclass
class Box:
    """A table drawn as a titled box of rows (its columns, and `every row` when rows are reached)."""

    key: Hashable
    title: str
    rows: list[str] = field(default_factory=list)
    depth: int = 0
    marked: set[int] = field(default_factory=set)  # rows drawn as the start or an answer

    def row(self, label: str) -> int:
        """Return the index of the row labelled `label`, added at the end when missing."""
        try:
            return self.rows.index(label)
        except ValueError:
            self.rows.append(label)
            return len(self.rows) - 1


@dataclass(frozen=True)
class Link:
    """An edge from a row of one box to a row of another."""

    source: tuple[Hashable, int]
    target: tuple[Hashable, int]
    type: str
    subtype: str
    masking: bool = False
    highlighted: bool = True
    title: str = ""


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _css_word(text: str) -> str:
    """Returns the text as a CSS class word (letters, digits, `-` and `_` only)."""
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text.lower())[:40] or "unknown"


def layout(boxes: Sequence[Box]) -> dict[Hashable, tuple[float, float]]:
    """Return the top-left corner of every box.

    One column of boxes per depth, left to right, boxes of a depth stacked top to bottom in the order given.
    """
    corners: dict[Hashable, tuple[float, float]] = {}
    heights: dict[int, float] = {}
    for box in boxes:
        top = heights.get(box.depth, MARGIN)
        corners[box.key] = (MARGIN + box.depth * (BOX_WIDTH + GAP), top)
        heights[box.depth] = top + TITLE + ROW * max(1, len(box.rows)) + MARGIN
    return corners


def _anchor(corner: tuple[float, float], row: int, right: bool) -> tuple[float, float]:
    x, y = corner
    return (x + BOX_WIDTH if right else x, y + TITLE + ROW * row + ROW / 2)


def _curve(start: tuple[float, float], end: tuple[float, float]) -> str:
    (x1, y1), (x2, y2) = start, end
    bend = max(60.0, abs(x2 - x1) / 2)
    return f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


def _box(box: Box, corner: tuple[float, float]) -> list[str]:
    x, y = corner
    height = TITLE + ROW * max(1, len(box.rows))
    parts = [
        f'<g class="table"><title>{escape(box.title)}</title>',
        f'<rect class="box" x="{x:.1f}" y="{y:.1f}" width="{BOX_WIDTH}" height="{height}" rx="6"/>',
        f'<text class="box-title" x="{x + 10:.1f}" y="{y + 19:.1f}">{escape(_short(box.title))}</text>',
    ]
    for index, label in enumerate(box.rows):
        top = y + TITLE + ROW * index
        marked = " marked" if index in box.marked else ""
        parts.append(
            f'<rect class="row{marked}" x="{x + 1:.1f}" y="{top:.1f}" width="{BOX_WIDTH - 2}" height="{ROW}"/>'
        )
        parts.append(
            f'<text class="column{marked}" x="{x + 10:.1f}" y="{top + 15:.1f}">'
            f"<title>{escape(label)}</title>{escape(_short(label))}</text>"
        )
    parts.append("</g>")
    return parts


def _link(link: Link, corners: dict[Hashable, tuple[float, float]]) -> str:
    start = _anchor(corners[link.source[0]], link.source[1], right=True)
    end = _anchor(corners[link.target[0]], link.target[1], right=False)
    classes = ["edge", _css_word(link.type), _css_word(link.subtype)]
    if link.masking:
        classes.append("masked")
    classes.append("path" if link.highlighted else "other")
    title = f"<title>{escape(link.title)}</title>" if link.title else ""
    return f'<path class="{" ".join(classes)}" d="{_curve(start, end)}">{title}</path>'


def draw(boxes: Sequence[Box], links: Sequence[Link], label: str) -> str:
    """Returns the SVG of the boxes and links (`label` is its accessible name).

    Links whose ends are not among the boxes are left out. Every name is escaped.
    """
    corners = layout(boxes)
    rows = {box.key: len(box.rows) for box in boxes}
    drawn = [
        link
        for link in links
        if link.source[0] in corners
        and link.target[0] in corners
        and link.source[1] < rows[link.source[0]]
        and link.target[1] < rows[link.target[0]]
    ]
    width = max((x + BOX_WIDTH for x, _ in corners.values()), default=0) + MARGIN
    height = max((y + TITLE + ROW * max(1, rows[key]) for key, (_, y) in corners.items()), default=0) + MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lineage" role="img" aria-label="{escape(label)}" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
    ]
    for box in boxes:
        parts.extend(_box(box, corners[box.key]))
    parts.append('<g class="edges">')
    parts.extend(_link(link, corners) for link in sorted(drawn, key=lambda link: link.highlighted))
    parts.append("</g></svg>")
    return "\n".join(parts)
