"""A real Jupyter server, as a student starts one from their folder: ``jupyter lab``.

It runs from the student's own venv (``fresh_python``), so it holds what the student's
requirements install, jupytext's contents manager included (Otter depends on jupytext, and
jupytext's server extension enables itself). Everything it writes (settings, workspaces,
runtime files) goes to a private home, never to the machine's.
"""

import contextlib
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
        return f"{self.url}/lab/tree/{urllib.parse.quote(str(relative))}?token={self.token}"


@contextlib.contextmanager
def jupyter_lab(python, root, home):
    """``jupyter lab`` started by ``python``'s environment on ``root``, until the block ends."""
    port, token = _free_port(), secrets.token_hex(16)
    home = Path(home)
    # A student's terminal: nothing of the test session (its PYTHONPATH, its venv) leaks in.
    from otter_paths import clean_environment

    env = {**clean_environment(home, [Path(python).parent]),
           "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    # The student's own command, with what a headless test needs: no browser, a known port and
    # token, and --allow-root because CI runs as root.
    command = [str(python), "-m", "jupyter", "lab", "--no-browser", "--allow-root",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(home / "server.log", "w")
    process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", token)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited {process.returncode}:\n"
                                   + (home / "server.log").read_text()[-3000:])
            with contextlib.suppress(OSError):
                if server.get("api/status")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("jupyter lab did not answer in 120 s:\n"
                                   + (home / "server.log").read_text()[-3000:])
            time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
