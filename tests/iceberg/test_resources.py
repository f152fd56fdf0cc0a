"""What one task's DuckDB may take: the memory limit, threads and spill folder set on every connection the
provider opens, from the config section or the operator, with defaults sized for a worker of several tasks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from airflow.sdk import DAG

from airflow_lineage_governance.iceberg.errors import IcebergError
from airflow_lineage_governance.iceberg.read import lock_down, sandboxed_connection
from airflow_lineage_governance.iceberg.resources import (
    OWNER_FILE,
    OWNER_GRACE_SECONDS,
    SPILL_PREFIX,
    TASKS_PER_WORKER,
    UNOWNED_AGE_SECONDS,
    Resources,
    default_memory_limit,
    default_threads,
    memory_bytes,
    remove_abandoned_spill_folders,
    spill_folder,
)
from airflow_lineage_governance.iceberg.session import SessionSettingError
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator


def _settings(connection) -> tuple:
    return connection.execute(
        "SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('temp_directory')"
    ).fetchall()[0]


def test_a_connection_takes_the_tasks_memory_limit_threads_and_spill_folder(tmp_path):
    connection = sandboxed_connection(resources=Resources("100MB", 1), spill=str(tmp_path))
    lock_down(connection, [])
    assert _settings(connection) == ("95.3 MiB", 1, str(tmp_path))


def test_without_a_spill_folder_a_connection_does_not_spill():
    assert _settings(sandboxed_connection())[2] == ""


def test_the_defaults_are_a_share_of_the_machine():
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert default_memory_limit() == f"{max(memory // TASKS_PER_WORKER, 256 * 1024 * 1024) // 1024**2}MiB"
    assert default_threads() == max(1, os.cpu_count() or 1)
    resolved = Resources().resolved()
    assert (resolved.memory_limit, resolved.threads) == (default_memory_limit(), default_threads())
    expected = duckdb.connect(config={"memory_limit": default_memory_limit()})
    assert _settings(sandboxed_connection())[:2] == (
        expected.execute("SELECT current_setting('memory_limit')").fetchall()[0][0],
        default_threads(),
    )


def test_a_memory_limit_duckdb_refuses_is_one_sentence_naming_the_option():
    with pytest.raises(SessionSettingError) as raised:
        sandboxed_connection(resources=Resources("lots"))
    assert isinstance(raised.value, IcebergError)
    assert str(raised.value) == (
        "[lineage_governance] duckdb_memory_limit: DuckDB does not accept 'lots' as its "
        "memory_limit; set it to a value DuckDB accepts, or unset it for the default."
    )


def test_the_spill_folder_is_removed_when_the_block_ends_also_on_failure(tmp_path):
    with spill_folder(Resources(spill_root=str(tmp_path))) as folder:
        (Path(folder) / "spilled.tmp").write_bytes(b"x" * 10)
        assert Path(folder).parent == tmp_path
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError), spill_folder(Resources(spill_root=str(tmp_path))) as folder:
        (Path(folder) / "spilled.tmp").write_bytes(b"x")
        raise RuntimeError("the statement failed")
    assert list(tmp_path.iterdir()) == []


def test_a_spill_root_that_cannot_hold_a_folder_is_one_sentence(tmp_path):
    with (
        pytest.raises(
            SessionSettingError,
            match=r"^\[lineage_governance\] duckdb_spill_folder: no spill folder "
            r"can be made under the folder it names; set it",
        ),
        spill_folder(Resources(spill_root=str(tmp_path / "missing"))),
    ):
        pass


def test_the_operator_takes_its_own_values_else_the_config_sections(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__DUCKDB_MEMORY_LIMIT", "3GB")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__DUCKDB_THREADS", "2")
    monkeypatch.setenv("AIRFLOW__LINEAGE_GOVERNANCE__DUCKDB_SPILL_FOLDER", str(tmp_path))
    with DAG("resources", schedule=None):
        configured = IcebergSqlOperator(task_id="configured", sql="create table a.b as select 1")
        own = IcebergSqlOperator(
            task_id="own", sql="create table a.c as select 1", duckdb_memory_limit="512MB", duckdb_threads=1
        )
    assert configured.duckdb_resources == Resources("3GB", 2, str(tmp_path))
    assert own.duckdb_resources == Resources("512MB", 1, str(tmp_path))


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("256MB", 256 * 10**6),
        ("2GB", 2 * 10**9),
        ("512 MiB", 512 * 2**20),
        ("1.5GiB", int(1.5 * 2**30)),
        ("100", 100),
        ("4 gb", 4 * 10**9),
        ("", None),
        ("lots", None),
        ("12 parsecs", None),
        ("-1GB", None),
    ],
)
def test_a_memory_limit_is_read_in_duckdbs_units(limit, expected):
    assert memory_bytes(limit) == expected


HOLDER = """
import sys, time
from pathlib import Path
from airflow_lineage_governance.iceberg.resources import Resources, spill_folder
with spill_folder(Resources(spill_root=sys.argv[1])) as folder:
    (Path(folder) / "spilled.tmp").write_bytes(b"x" * 1000)
    print(folder, flush=True)
    time.sleep(600)
"""


def _holding_process(root: Path) -> tuple[subprocess.Popen[bytes], Path]:
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdout=subprocess.PIPE)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().decode().strip())


def _age(folder: Path, seconds: float) -> None:
    for path in (folder / OWNER_FILE, folder):
        if path.exists():
            then = time.time() - seconds
            os.utime(path, (then, then))


def test_a_spill_folder_left_by_a_killed_task_is_removed_by_the_next_task_and_a_running_tasks_is_kept(tmp_path):
    killed, left = _holding_process(tmp_path)
    running, held = _holding_process(tmp_path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert (left / "spilled.tmp").exists()
        _age(left, 2 * OWNER_GRACE_SECONDS)
        _age(held, 2 * OWNER_GRACE_SECONDS)
        with spill_folder(Resources(spill_root=str(tmp_path))) as folder:
            assert sorted(tmp_path.iterdir()) == sorted([held, Path(folder)])
        assert list(tmp_path.iterdir()) == [held]
        assert (held / "spilled.tmp").exists()
    finally:
        running.kill()
        running.wait(timeout=30)


def test_a_spill_folder_just_made_or_without_an_owner_is_kept_until_it_is_old(tmp_path):
    killed, left = _holding_process(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    older = tmp_path / f"{SPILL_PREFIX}older"
    (older / "result").mkdir(parents=True)
    other = tmp_path / "not-a-spill-folder"
    other.mkdir()
    _age(older, UNOWNED_AGE_SECONDS / 2)
    _age(other, 2 * UNOWNED_AGE_SECONDS)
    assert remove_abandoned_spill_folders(str(tmp_path)) == []
    _age(left, 2 * OWNER_GRACE_SECONDS)
    _age(older, 2 * UNOWNED_AGE_SECONDS)
    assert sorted(remove_abandoned_spill_folders(str(tmp_path))) == sorted([str(left), str(older)])
    assert list(tmp_path.iterdir()) == [other]
