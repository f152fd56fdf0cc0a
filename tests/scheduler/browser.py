"""Pages as a person sees them: Debian's headless Chromium renders a page of the running Airflow UI, saves a
screenshot, and gives the page's text after its scripts ran."""

from __future__ import annotations

import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

WINDOW = "1440,1000"
BUDGET_MS = "15000"  # virtual time for the UI's scripts to fetch and render


def chromium() -> str:
    """Returns the Chromium executable; raises RuntimeError saying what to install when there is none."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("headless Chromium is missing: install Debian's chromium (scripts/install-system-deps.sh)")
    return found


def _run(url: str, *flags: str, profile: Path) -> str:
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", f"--window-size={WINDOW}", f"--virtual-time-budget={BUDGET_MS}",
            *flags, url]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180)
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "chromium.log").write_text(done.stderr)  # why a page came out empty, when it does
    return done.stdout


def screenshot(url: str, path: Path) -> Path:
    """Saves a PNG of the page at `url` to `path`; returns the path."""
    _run(url, f"--screenshot={path}", profile=path.parent / f".chromium-{path.stem}")
    return path


def page_text(url: str, profile: Path) -> str:
    """Returns the visible text of the page at `url` after its scripts ran (tags dropped, entities decoded)."""
    dom = _run(url, "--dump-dom", profile=profile) or _run(url, "--dump-dom", profile=profile)  # one retry
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S | re.I)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom)))
