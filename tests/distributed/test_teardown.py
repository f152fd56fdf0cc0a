"""The cluster's teardown check: a process started while the cluster runs and still running after it stopped is
named, and killed."""

from __future__ import annotations

import os
import secrets
import subprocess

import pytest

from tests.distributed.cluster import MARK, leaving_no_process, marked_processes


def test_a_process_left_running_after_the_cluster_stopped_is_named_and_killed():
    token = secrets.token_hex(16)
    with pytest.raises(AssertionError) as raised:
        with leaving_no_process(token, grace=1):
            left = subprocess.Popen(["sleep", "300"], start_new_session=True)
            finished = subprocess.Popen(["true"])
            finished.wait()
    assert str(raised.value).splitlines() == [
        "processes of the stopped cluster were still running (killed now):",
        f"{left.pid} sleep 300",
    ]
    assert left.wait(timeout=10) == -9
    assert marked_processes(token) == []


def test_nothing_left_running_passes_and_an_outer_check_keeps_its_token():
    running = os.environ.get(MARK)  # the package's cluster's, when it is up
    outer, token = secrets.token_hex(16), secrets.token_hex(16)
    with leaving_no_process(outer, grace=5):
        with leaving_no_process(token, grace=5):
            subprocess.run(["sleep", "0.2"], check=True)
        assert os.environ[MARK] == outer
    assert marked_processes(token) == [] and os.environ.get(MARK) == running
