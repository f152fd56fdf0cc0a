"""Every code block of the README is run here as written, and its output compared with the `text` block after it;
the `make` lines are held to the Makefile's targets and to what CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
BIN = Path(sys.executable).parent


def blocks() -> list[tuple[str, str]]:
    """Returns each fenced block of the README as (language, text), in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", README.read_text(), flags=re.S | re.M)


def examples() -> list[tuple[str, str, str]]:
    """Returns each runnable block (sh or python) with the `text` block that follows it as its output."""
    found = blocks()
    return [
        (language, text, found[n + 1][1] if n + 1 < len(found) and found[n + 1][0] == "text" else "")
        for n, (language, text) in enumerate(found)
        if language != "text" and not text.startswith("make ")
    ]


def run(language: str, text: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """Runs one block in `folder`: a python block in this interpreter, a sh block in bash with the venv first on
    PATH (where `lineage-governance` is)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-c", text] if language == "python" else ["bash", "-euo", "pipefail", "-c", text]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_every_block_is_sh_python_or_the_output_of_one():
    languages = [language for language, _ in blocks()]
    assert set(languages) <= {"sh", "python", "text"}, languages
    assert all(languages[n - 1] != "text" for n, language in enumerate(languages) if language == "text")
    assert languages[0] == "sh"


def test_the_two_commands_come_first_and_are_what_ci_and_the_suite_run():
    language, first = blocks()[0]
    assert [line.split("#")[0].split() for line in first.splitlines()] == [["make", "demo"], ["make", "test"]]
    assert "make test" in (REPO / ".ci" / "run").read_text().splitlines()
    for target, runs in (("demo", "-m learning_platform.demo"), ("test", "-m pytest")):
        planned = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=False)
        assert planned.returncode == 0, planned.stderr
        assert runs in planned.stdout


EXAMPLES = examples()


@pytest.mark.parametrize(
    ("language", "text", "output"),
    [
        pytest.param(
            *example, id=f"{example[0]}-{n}", marks=[pytest.mark.slow] if "from airflow.sdk" in example[1] else []
        )
        for n, example in enumerate(EXAMPLES)
    ],
)
def test_the_block_runs_and_prints_what_the_readme_shows(language, text, output, tmp_path):
    done = run(language, text, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == output


def test_every_runnable_block_is_tested_and_shows_its_output():
    assert [language for language, _, _ in EXAMPLES] == ["python", "python", "sh"]
    assert all(output for _, _, output in EXAMPLES)


def test_every_link_and_picture_of_the_readme_and_the_docs_is_there():
    for page in (README, *sorted((REPO / "docs").glob("*.md"))):
        prose = re.sub(r"`[^`\n]*`", "", page.read_text())  # a link is never inside inline code
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if not target.startswith(("http://", "https://", "#")):
                assert (page.parent / target.split("#")[0]).is_file(), (page.name, target)
