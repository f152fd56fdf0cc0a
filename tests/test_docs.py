"""The code blocks of docs/: each `lineage-governance` line of them (a command or its synopsis) is one the CLI's
parser accepts, and every fenced block is a command run by a test or a listing of output."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from airflow_lineage_governance.cli.main import parser

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def code_lines(page: Path) -> list[str]:
    """Return the lines of the page's code blocks: fenced ones, and ones indented by four spaces after a blank line."""
    found: list[str] = []
    fenced = indented = False
    previous = ""
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            found.append(line.strip())
        elif line.startswith("    ") and (indented or not previous.strip()):
            indented = True
            found.append(line.strip())
        else:
            indented = False
        previous = line
    return found


def synopsis_arguments(line: str) -> list[list[str]]:
    """Return the arguments of each `lineage-governance` command of a line, its optional parts and comment left out
    and its placeholders given a value."""
    commands: list[list[str]] = []
    if not line.startswith("lineage-governance "):
        return commands
    for command in line.split(" #")[0].split(";"):
        text = re.sub(r"\[[^\[\]]*\]", "", command)
        text = re.sub(r"(--[\w-]+) …", r"\1 x", re.sub(r"<[^<>]*>", "x", text))  # an option's value left out
        text = text.replace("…", "").replace("...", "")  # the rest of a line left out
        words = shlex.split(text)
        if words and words[0] == "lineage-governance":
            commands.append(words[1:])
    return commands


CLI_LINES = [
    pytest.param(page.name, arguments, id=f"{page.stem}-{' '.join(arguments[:2])}")
    for page in PAGES
    for line in code_lines(page)
    for arguments in synopsis_arguments(line)
]


def test_the_docs_show_the_cli_commands():
    assert {page for page, _ in (p.values for p in CLI_LINES)} == {"cli.md", "lineage.md", "store.md"}
    assert len(CLI_LINES) == 24


@pytest.mark.parametrize(("page", "arguments"), CLI_LINES)
def test_each_cli_line_of_the_docs_is_one_the_cli_accepts(page, arguments, capsys):
    try:
        parser().parse_args(arguments)
    except SystemExit as refused:
        pytest.fail(f"{page}: lineage-governance {' '.join(arguments)}: {capsys.readouterr().err} ({refused})")


def test_every_fenced_block_is_a_command_a_test_runs_or_a_listing():
    fences = {page.name: re.findall(r"^```(\w*)$", page.read_text(), flags=re.M)[::2] for page in PAGES}
    commands = {name: [f for f in found if f != "text"] for name, found in fences.items()}
    # docs/deployment.md's sh blocks are run, and held to the stack the suite ran, by tests/distributed.
    assert {name: found for name, found in commands.items() if found} == {"deployment.md": ["sh", "sh"]}
