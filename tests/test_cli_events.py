"""The CLI over events, in-process: job namespaces, time bounds sent to Marquez, bad event files and rules
(exit 2 with one sentence), and names that could forge output lines or drive the terminal (escaped)."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.cli import main
from airflow_lineage_governance.cli.common import escaped
from tests.support.events import complete, output, source, write
from tests.support.marquez_api import Server, event

RULES = 'namespace = "iceberg://platform"\n'
METADATA = '[tables."crm.learners"]\nsource = true\ncolumns = { date_of_birth = "personal", country = "internal" }\n'


def offers(namespace: str, filtered: bool, time: str) -> dict:
    rows = ["crm.learners.date_of_birth"] if filtered else []
    return complete(
        "p.offers",
        output("marketing.offers", {"country": ["crm.learners.country"]}, rows=rows),
        namespace=namespace,
        time=time,
        run=f"{namespace}-1",
    )


@pytest.fixture
def files(tmp_path, monkeypatch):
    for variable in ("AIRFLOW__OPENLINEAGE__NAMESPACE", "OPENLINEAGE_NAMESPACE", "AIRFLOW_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "no-airflow"))
    (tmp_path / "lineage.toml").write_text(RULES)
    (tmp_path / "metadata.toml").write_text(METADATA)
    events = write(
        tmp_path / "events.jsonl",
        [offers("platform", True, "2026-10-01T02:00:00Z"), offers("staging", False, "2026-10-01T03:00:00Z")],
    )
    return tmp_path, [
        "--events",
        str(events),
        "--rules",
        str(tmp_path / "lineage.toml"),
        "--metadata",
        str(tmp_path / "metadata.toml"),
    ]


def proposed(capsys, *args: str) -> dict[str, str]:
    assert main(["propose", *args, "--json"]) == 0
    return {p["column"]: p["proposed"] for p in json.loads(capsys.readouterr().out)}


def test_job_namespace_scopes_the_events(files, capsys, monkeypatch):
    _, options = files
    assert proposed(capsys, *options, "--job-namespace", "platform") == {"marketing.offers.country": "personal"}
    assert proposed(capsys, *options, "--job-namespace", "staging") == {"marketing.offers.country": "internal"}
    assert proposed(capsys, *options, "--job-namespace", "staging", "--job-namespace", "platform") == {
        "marketing.offers.country": "internal"
    }  # both ours: the later COMPLETE of the job wins
    # No flag and no OpenLineage namespace configured: every namespace is read.
    assert proposed(capsys, *options) == {"marketing.offers.country": "internal"}
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__NAMESPACE", "platform")  # the provider's namespace is the default
    assert proposed(capsys, *options) == {"marketing.offers.country": "personal"}
    assert proposed(capsys, *options, "--job-namespace", "*") == {"marketing.offers.country": "internal"}


def test_since_and_until_are_sent_to_marquez(files, capsys):
    tmp_path, options = files
    server = Server([event(1)])
    try:
        rest = options[2:]
        assert (
            main(
                [
                    "propose",
                    "--events",
                    server.url,
                    *rest,
                    "--since",
                    "2026-10-01T00:00:00+02:00",
                    "--until",
                    "2026-10-02",
                ]
            )
            == 0
        )
        assert main(["propose", "--events", server.url, *rest]) == 0
    finally:
        server.close()
    first, second = server.requests
    assert (first["after"], first["before"]) == (["2026-09-30T22:00:00.000000Z"], ["2026-10-02T00:00:00.000000Z"])
    assert (second["after"], second["before"]) == (["1970-01-01T00:00:00Z"], ["9999-12-31T23:59:59Z"])
    assert main(["propose", *options, "--since", "last tuesday"]) == 2
    assert capsys.readouterr().err == (
        "lineage-governance: --since 'last tuesday': not an ISO 8601 time; write e.g. 2030-01-31T00:00:00Z.\n"
    )


def test_a_json_array_in_place_of_jsonl_is_bad_input(files, capsys):
    tmp_path, options = files
    array = tmp_path / "array.json"
    array.write_text(json.dumps([offers("platform", True, "2026-10-01T02:00:00Z")], indent=2))
    assert main(["propose", "--events", str(array), *options[2:]]) == 2
    assert capsys.readouterr().err == (
        f"lineage-governance: {array}: is a JSON array, not JSON Lines; write one "
        "event per line, as the OpenLineage file transport does.\n"
    )


@pytest.mark.parametrize(
    "key, value",
    [
        ("gate_threshold", "inf"),
        ("default_weight", "-1"),
        ("tier_weights", "{ 1 = nan }"),
        ("owner_weights", "{ crm = -inf }"),
    ],
)
def test_weights_and_threshold_must_be_finite_and_not_negative(files, capsys, key, value):
    tmp_path, options = files
    (tmp_path / "lineage.toml").write_text(RULES + f"[blast_radius]\n{key} = {value}\n")
    assert main(["propose", *options]) == 2
    error = capsys.readouterr().err
    assert "must be a finite number, 0 or more" in error and error.count("\n") == 1


def test_names_that_would_forge_lines_or_drive_the_terminal_are_escaped(files, capsys):
    tmp_path, options = files
    hostile = complete(
        "p.evil", output("marketing.offers", {"x\n\u001b[31mred\u2028": [source("crm.learners.country")]}), run="e1"
    )
    events = write(tmp_path / "evil.jsonl", [hostile])
    assert main(["propose", "--events", str(events), *options[2:]]) == 0
    text = capsys.readouterr().out
    assert text.count("\n") == 1 and "\u001b" not in text
    assert "marketing.offers.x\\n\\x1b[31mred\\u2028: internal" in text
    assert escaped("plain, ünïcode ok") == "plain, ünïcode ok"
