"""A real Jupyter server, as a student starts one from their folder: ``jupyter lab``.

It runs from the student's own venv (``fresh_python``), so it holds what the student's
requirements install, jupytext's contents manager included (Otter depends on jupytext, and
jupytext's server extension enables itself). Everything it writes (settings, workspaces,
runtime files) goes to a private home, never to the machine's.
"""

import contextlib
import http.client
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url, token):
        self.url, self.token = url, token

    def get(self, path):
        """``(status, parsed JSON or None)`` of ``GET <server>/<path>`` with the token."""
        request = urllib.request.Request(f"{self.url}/{path}",
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, None

    def contents(self, relative):
        """The contents API's answer for a file under the server's root."""
        return self.get("api/contents/" + urllib.parse.quote(str(relative)) + "?content=1")

    def lab_url(self, relative):
        # reset: JupyterLab would otherwise restore the tabs a previous test left open, and
        # a test waiting for "its" notebook could read the restored one.
        return (f"{self.url}/lab/tree/{urllib.parse.quote(str(relative))}"
                f"?reset&token={self.token}")


class PortTaken(RuntimeError):
    """The chosen port was taken by another program before the server could listen on it."""


def _start(command, root, env, log_path):
    with open(log_path, "w") as log:
        return subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)


def _answers(server):
    """Whether *this* server answers: its status JSON, asked with its token.

    The port is picked free and then handed to the server, so another program can take it in
    between (seen in CI: a foreign service answered the first request with binary bytes, and
    http.client raised BadStatusLine). With ``port_retries=0`` the server then exits; until it
    does, nothing else that answers on the port counts.
    """
    with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
        status, body = server.get("api/status")
        return status == 200 and isinstance(body, dict) and "started" in body
    return False


def _wait_until_up(process, server, log_path):
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            log = Path(log_path).read_text(errors="replace")
            if "already in use" in log or "is not available" in log:
                raise PortTaken(log[-3000:])
            raise RuntimeError(f"jupyter lab exited {process.returncode}:\n{log[-3000:]}")
        if _answers(server):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("jupyter lab did not answer in 120 s:\n"
                               + Path(log_path).read_text(errors="replace")[-3000:])
        time.sleep(0.5)


def _stop(process):
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def jupyter_lab(python, root, home, attempts=3):
    """``jupyter lab`` started by ``python``'s environment on ``root``, until the block ends."""
    home = Path(home)
    # A student's terminal: nothing of the test session (its PYTHONPATH, its venv) leaks in.
    from otter_paths import clean_environment

    env = {**clean_environment(home, [Path(python).parent]),
           "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    log_path = home / "server.log"
    for attempt in range(1, attempts + 1):
        port, token = _free_port(), secrets.token_hex(16)
        # The student's own command, with what a headless test needs: no browser, a known port
        # and token, and --allow-root because CI runs as root.
        command = [str(python), "-m", "jupyter", "lab", "--no-browser", "--allow-root",
                   f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                   "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
                   f"--ServerApp.root_dir={root}", "--LabApp.news_url=",
                   "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        process = _start(command, root, env, log_path)
        server = Server(f"http://127.0.0.1:{port}", token)
        try:
            _wait_until_up(process, server, log_path)
        except PortTaken:
            _stop(process)
            if attempt == attempts:
                raise
            continue
        except BaseException:
            _stop(process)
            raise
        break
    try:
        yield server
    finally:
        _stop(process)
