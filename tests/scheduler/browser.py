"""Pages as a person sees them: Debian's headless Chromium, driven through its DevTools protocol (the
`websockets` client the api-server's uvicorn brings), logs in through the Airflow UI's login form, opens pages,
reads their text after their scripts ran (the text of same-origin iframes too: plugin pages are iframes) and
saves screenshots."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

WIDTH, HEIGHT = 1440, 1000
TEXT = """(() => {
  const texts = [document.body ? document.body.innerText : ''];
  for (const frame of document.querySelectorAll('iframe')) {
    try { texts.push(frame.contentDocument.body.innerText); } catch (e) { texts.push(''); }
  }
  return texts.join('\\n');
})()"""


def chromium() -> str:
    """Returns the Chromium executable; raises RuntimeError saying what to install when there is none."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("headless Chromium is missing: install Debian's chromium (scripts/install-system-deps.sh)")
    return found


class Browser:
    """One headless Chromium with one tab, its profile in `profile`; close() ends the process it started."""

    def __init__(self, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        (profile / "DevToolsActivePort").unlink(missing_ok=True)
        self._log = (profile / "chromium.log").open("w")
        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                f"--window-size={WIDTH},{HEIGHT}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self._id = 0
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError(f"Chromium did not open its DevTools port; see {profile / 'chromium.log'}")
            time.sleep(0.2)
        port, path = port_file.read_text().splitlines()[:2]
        self._socket = connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=30)
        target = self._send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)

    def _send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self._socket.send(json.dumps(message))
        while True:
            reply = json.loads(self._socket.recv(timeout=120))
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"Chromium refused {method}: {reply['error']}")
                return dict(reply.get("result") or {})

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Returns the answer of a DevTools command sent to the tab."""
        return self._send(method, self._session, **params)

    def evaluate(self, expression: str) -> Any:
        """Returns the value of a JavaScript expression in the tab (promises awaited)."""
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return (found.get("result") or {}).get("value")

    def open(self, url: str) -> None:
        """Navigates the tab to `url` and waits until the document has loaded."""
        self.call("Page.navigate", url=url)
        time.sleep(0.3)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, expression: str, timeout: float = 60) -> bool:
        """Returns True once the expression is true in the tab, False when `timeout` s passed first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(f"!!({expression})"):
                    return True
            except RuntimeError:
                pass  # a navigation replaced the context mid-call
            time.sleep(0.3)
        return False

    def text(self, wanted: list[str] | tuple[str, ...] = (), timeout: float = 60) -> str:
        """Returns the tab's visible text and that of its iframes, once every `wanted` line is in it (or after
        `timeout` s: the caller's assertion then says what is missing)."""
        deadline = time.monotonic() + timeout
        while True:
            found = str(self.evaluate(TEXT) or "")
            if all(line in found for line in wanted) or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def screenshot(self, path: Path) -> Path:
        """Saves a PNG of the tab's viewport to `path`; returns the path."""
        time.sleep(0.5)  # the last paint after the text appeared
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def log_in(self, url: str, username: str, password: str) -> None:
        """Logs in through the UI's login form (the simple auth manager's page) as a person would."""
        self.open(f"{url}/auth/login")
        if not self.wait_for("!!document.querySelector('input[name=username]')"):
            raise RuntimeError(f"no login form at {url}/auth/login")
        for name, value in (("username", username), ("password", password)):
            self.evaluate(f"document.querySelector('input[name={name}]').focus()")
            self.call("Input.insertText", text=value)
        self.evaluate("document.querySelector('button[type=submit]').click()")
        if not self.wait_for("!location.pathname.includes('/auth/login')", timeout=60):
            raise RuntimeError(f"logging in as {username} at {url} did not leave the login page")

    def close(self) -> None:
        """Ends the Chromium process this browser started."""
        socket = getattr(self, "_socket", None)
        if socket is not None:
            socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
