"""The CLI commands that need no events, run as a user runs them."""

from __future__ import annotations

import json
import subprocess

from tests.integration.sandbox import REPO, VENV_BIN


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "lineage-governance"), *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO)


def test_platform_seed_then_lineage_of_a_pipeline(tmp_path):
    folder = tmp_path / "catalog"
    seeded = cli("platform", "seed", "--folder", str(folder), "--scale", "0.01", "--json")
    assert seeded.returncode == 0, seeded.stderr
    assert json.loads(seeded.stdout)["crm.learners"] == 30
    text = cli("lineage", "dags/sql/birthday_offers.sql", "--catalog", str(folder))
    assert text.returncode == 0, text.stderr
    shaping = "every row shaped by: crm.learners.date_of_birth FILTER, crm.learners.marketing_consent FILTER"
    assert shaping in text.stdout
    facet = json.loads(cli("lineage", "dags/sql/course_performance.sql", "--catalog", str(folder), "--json").stdout)
    completions = {f["field"]: f["transformations"][0]["subtype"]
                   for f in facet["fields"]["completions"]["inputFields"]}
    assert completions == {"completed_at": "FILTER", "enrollment_id": "AGGREGATION"}


def test_lineage_from_a_schema_file_and_its_errors(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"crm": {"learners": {"email": "string", "country": "string"}}}))
    sql = tmp_path / "bad.sql"
    sql.write_text("create table out.t as select l.emial from crm.learners l")
    done = cli("lineage", str(sql), "--schema", str(schema))
    assert done.returncode == 2
    assert done.stderr == ("lineage-governance: out.t: crm.learners has no column emial; "
                           "check the spelling against the catalog.\n")
    missing = cli("lineage", str(tmp_path / "none.sql"), "--schema", str(schema))
    assert missing.returncode == 2 and "the SQL file does not exist" in missing.stderr
    merge = tmp_path / "merge.sql"
    merge.write_text("merge into crm.learners t using crm.learners s on t.email = s.email when matched then delete")
    refused = cli("lineage", str(merge), "--schema", str(schema))
    assert refused.returncode == 2 and "not from MERGE" in refused.stderr
