"""The repository speaks for itself: no tracked file cites a tracker's issue or pull request, or a requirement
document. The patterns are spelt with character classes so that this file does not match them itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CITATIONS = re.compile(
    r"\b[i]ssues?\s*#?\d+"  # an issue by number, with or without `#`
    r"|\b(?:[p]ull request|[P]R|[t]icket|[b]ug)\s*#\d+"  # a pull request, ticket or bug by number
    r"|\b[g]ithub\.com/\S+/(?:issues|pull)/\d+"  # a tracker's address
    r"|\b[R]EQ-\d+"  # a requirement's id
    r"|\b[s]eeds/",  # the folder of a task's requirement documents
    re.IGNORECASE,
)
TRACKER_NUMBER = re.compile(r"(?:^|(?<=[\s(\[]))#\d+\b")
"""`#123` standing alone in text, as a tracker reference is written."""
COLOUR_BEFORE = re.compile(r"""(?:[:=,]|\bfill|\bstroke|\bcolou?r)\s*["']?$""", re.IGNORECASE)
"""What comes before a CSS or SVG colour (`color: #123`, `fill="#333"`), which is not a tracker number."""


def citations(text: str) -> list[str]:
    """Returns each citation in the text, as the line it is on."""
    found = []
    for line in text.splitlines():
        if CITATIONS.search(line):
            found.append(line.strip())
            continue
        for number in TRACKER_NUMBER.finditer(line):
            if not COLOUR_BEFORE.search(line[: number.start()]):
                found.append(line.strip())
                break
    return found


def tracked_text_files() -> list[Path]:
    """Returns every file git tracks that holds text."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    files = []
    for name in listed.decode().split("\0"):
        path = REPO / name
        if name and path.is_file():
            data = path.read_bytes()
            if b"\0" not in data[:8192]:
                files.append(path)
    return files


def test_no_tracked_file_cites_a_tracker_or_a_requirement_document():
    files = tracked_text_files()
    assert len(files) > 100
    cited = {
        str(path.relative_to(REPO)): lines
        for path in files
        if (lines := citations(path.read_text(encoding="utf-8", errors="replace")))
    }
    assert cited == {}


def test_the_patterns_find_citations():
    # Spelt in parts, so that this file holds no citation itself.
    issue, pull, seeds, req, mark = (
        "".join(["iss", "ue"]),  # codespell:ignore
        "".join(["P", "R"]),
        "".join(["see", "ds/"]),
        "RE" + "Q-",
        "#",
    )
    tracker = "/".join(["github.com", "o", "r", f"{issue}s", "4"])
    for text in (
        f"fixed in {issue} 12",
        f"see {issue} {mark}7",
        f"as {pull} {mark}31 did",
        f"({mark}123)",
        f"closes {mark}45",
        f"https://{tracker}",
        f"{req}12 says so",
        f"from {seeds}the-task.md",
    ):
        assert citations(text) == [text], text


def test_colours_and_other_numbers_are_not_citations():
    for text in (
        "--bg: #ffffff; --fg: #1a202c; --panel: #171923;",
        'fill="#333" stroke="#123456"',
        "color: #222",
        "# A heading",
        "x = 1  # a comment",
        "&#123; an HTML entity",
        "the issues a reader meets",
        "SELECT * FROM t WHERE id = 12",
    ):
        assert citations(text) == [], text
