"""The code blocks of docs/: each `lineage-governance` line of them (a command or its synopsis) is one the CLI's
parser accepts, every Python block runs, every setting a shell block sets is read as the text says, and every other
block is a command run by a test or a listing of output."""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from openlineage.client.transport import CompositeTransport, HttpTransport, get_default_factory

from airflow_lineage_governance import settings
from airflow_lineage_governance.cli.main import parser
from airflow_lineage_governance.hooks.iceberg import OUR_KEYS, IcebergHook, connection_extra
from airflow_lineage_governance.store.transport import StoreTransport

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.md"))


@dataclass(frozen=True)
class Block:
    """One code block of a page: where it starts, its fence's language ("" when indented) and its text."""

    page: str
    line: int
    language: str
    text: str

    @property
    def name(self) -> str:
        """Return the page and line the block starts at."""
        return f"{self.page}:{self.line}"


def indented_block_end(lines: list[str], start: int) -> int:
    """Return the index after an indented block that starts at `start`: blank lines go on it while more follows."""
    end = start
    for index in range(start, len(lines)):
        if lines[index].startswith("    "):
            end = index + 1
        elif lines[index].strip():
            break
    return end


def code_blocks(page: Path) -> list[Block]:
    """Return the page's code blocks: fenced ones, and ones indented by four spaces after a blank line."""
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    index, previous = 0, ""
    while index < len(lines):
        line = lines[index]
        if line.startswith("```"):
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            blocks.append(Block(page.name, index + 1, line[3:].strip(), "\n".join(lines[index + 1 : end])))
        elif line.startswith("    ") and not previous.strip():
            end = indented_block_end(lines, index) - 1
            text = "\n".join(part[4:] for part in lines[index : end + 1])
            blocks.append(Block(page.name, index + 1, "", text))
        else:
            end = index
        previous, index = lines[end], end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in code_blocks(page)]


def code_lines(page: Path) -> list[str]:
    """Return the lines of the page's code blocks."""
    return [line.strip() for block in code_blocks(page) for line in block.text.splitlines()]


ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
SHELL_COMMANDS = ("lineage-governance", ".venv/bin/python", "python", "bash")


def shell_lines(text: str) -> list[list[str]] | None:
    """Return the words of each shell line of a block (a quoted value may span lines); None when it is not shell."""
    found: list[list[str]] = []
    pending = ""
    for line in text.splitlines():
        pending += line + "\n"
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the line goes on
            continue
        pending = ""
        command = [word for word in words if word != "export" and not ASSIGNMENT.match(word)]
        if command and command[0] not in SHELL_COMMANDS:
            return None
        if words:
            found.append(words)
    return None if pending else found


def assignments(words: list[str]) -> dict[str, str]:
    """Return the environment variables a shell line sets before its command, by name."""
    found: dict[str, str] = {}
    for word in words:
        if word == "export":
            continue
        if not ASSIGNMENT.match(word):
            break
        name, _, value = word.partition("=")
        found[name] = value
    return found


def kind(block: Block) -> str:
    """Return what a block is: python, shell, listing, or unknown for a fence of another language."""
    if block.language in ("python", "py"):
        return "python"
    if block.language in ("sh", "bash"):
        return "shell"
    if block.language == "text":
        return "listing"
    if block.language:
        return "unknown"
    if shell_lines(block.text) is not None:
        return "shell"
    try:
        ast.parse(block.text)
    except SyntaxError:
        return "listing"
    return "python"


PYTHON_BLOCKS = [block for block in BLOCKS if kind(block) == "python"]
SETTINGS = [
    (block, name, value)
    for block in BLOCKS
    if kind(block) == "shell"
    for words in shell_lines(block.text) or []
    for name, value in assignments(words).items()
    if name.startswith("AIRFLOW")
]


def documented(name: str) -> list[tuple[Block, dict[str, str]]]:
    """Return each block that sets the variable, with every AIRFLOW variable that block sets."""
    blocks = [block for block, found, _ in SETTINGS if found == name]
    return [(block, {n: v for b, n, v in SETTINGS if b == block}) for block in dict.fromkeys(blocks)]


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
    assert len(CLI_LINES) == 29


@pytest.mark.parametrize(("page", "arguments"), CLI_LINES)
def test_each_cli_line_of_the_docs_is_one_the_cli_accepts(page, arguments, capsys):
    try:
        parser().parse_args(arguments)
    except SystemExit as refused:
        pytest.fail(f"{page}: lineage-governance {' '.join(arguments)}: {capsys.readouterr().err} ({refused})")


def test_every_fenced_block_is_a_command_a_test_runs_python_run_here_or_a_listing():
    fences = {page.name: re.findall(r"^```(\w*)$", page.read_text(), flags=re.M)[::2] for page in PAGES}
    commands = {name: [f for f in found if f not in ("text", "python")] for name, found in fences.items()}
    # docs/deployment.md's sh blocks are run, and held to the stack the suite ran, by tests/distributed.
    assert {name: found for name, found in commands.items() if found} == {"deployment.md": ["sh", "sh"]}


def test_every_code_block_is_python_a_shell_line_or_a_known_listing():
    assert [block.name for block in BLOCKS if kind(block) == "unknown"] == []
    # An indented block that is neither Python nor shell must be a listing a reader is meant to read as one.
    listings = [block.page for block in BLOCKS if kind(block) == "listing" and not block.language]
    assert listings == ["architecture.md"]
    assert [block.page for block in PYTHON_BLOCKS] == ["operator.md"]


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda block: block.name)
def test_each_python_block_of_the_docs_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(block.text, f"docs/{block.name}", "exec"), {"__name__": f"docs_{block.page}"})


@pytest.mark.parametrize(
    ("name", "value"),
    [pytest.param(name, value, id=f"{block.name}-{name}") for block, name, value in SETTINGS if value.startswith("{")],
)
def test_each_json_setting_of_the_docs_parses(name, value):
    assert isinstance(json.loads(value), dict), name


def test_the_settings_the_docs_set_are_each_checked_here():
    assert sorted({name for _, name, _ in SETTINGS}) == [
        "AIRFLOW_CONN_ICEBERG_DEFAULT",
        "AIRFLOW_CONN_LINEAGE_STORE",
        "AIRFLOW__LINEAGE_GOVERNANCE__EVENTS",
        "AIRFLOW__LINEAGE_GOVERNANCE__STORE_CONN_ID",
        "AIRFLOW__OPENLINEAGE__TRANSPORT",
    ]


def test_the_iceberg_connection_of_the_docs_gives_the_catalog_properties_its_name_and_namespace(monkeypatch):
    [(_, environment)] = documented("AIRFLOW_CONN_ICEBERG_DEFAULT")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert json.loads(environment["AIRFLOW_CONN_ICEBERG_DEFAULT"])["conn_type"] == "iceberg_catalog"
    hook = IcebergHook()  # the default connection id, iceberg_default
    assert (hook.catalog_name, hook.lineage_namespace) == ("platform", "iceberg://platform")
    extra = connection_extra(hook.get_connection(hook.iceberg_conn_id).extra)
    properties = {key: value for key, value in extra.items() if key not in OUR_KEYS}
    assert properties == {"uri": "sqlite:////data/catalog.db", "warehouse": "file:///data/warehouse"}


def test_the_marquez_transport_of_the_docs_is_built_with_its_timeout_and_retries_and_the_checks_read_marquez(
    monkeypatch,
):
    [(_, environment)] = documented("AIRFLOW__LINEAGE_GOVERNANCE__EVENTS")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    transport = get_default_factory().create(settings.openlineage_transport())
    assert isinstance(transport, HttpTransport)
    assert (transport.config.url, transport.config.timeout) == ("http://localhost:5000", 2)
    assert {k: transport.config.retry[k] for k in ("total", "connect", "read")} == {"total": 1, "connect": 1, "read": 1}
    assert settings.setting("events") == transport.config.url


def test_the_composite_transport_of_the_docs_feeds_marquez_and_the_store(monkeypatch):
    [(_, environment)] = [
        found for found in documented("AIRFLOW__OPENLINEAGE__TRANSPORT") if found[0].page == "store.md"
    ]
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    transport = get_default_factory().create(settings.openlineage_transport())
    assert isinstance(transport, CompositeTransport)
    [http, store] = transport.transports
    assert isinstance(http, HttpTransport) and http.config.url == "http://marquez:5000"
    assert isinstance(store, StoreTransport) and store.config.store == "/data/lineage-store.duckdb"


def test_the_postgres_connection_of_the_docs_is_where_the_store_lives(monkeypatch):
    [(_, environment)] = documented("AIRFLOW_CONN_LINEAGE_STORE")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    location = urlsplit(settings.store_location())
    assert (location.scheme, location.hostname, location.port, location.path) == (
        "postgresql",
        "db.internal",
        5432,
        "/lineage",
    )
    assert location.username == "lineage"
    assert parse_qs(location.query) == {"sslmode": ["require"]}
