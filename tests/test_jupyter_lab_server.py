"""The JupyterLab fixture starts *its* server even when another program takes the port first.

CI once failed five front-end tests at set-up: the port picked free was answered, before the
server could listen on it, by a foreign service that replied with binary bytes. These tests put
such a service on the port and start a stand-in server (a tiny HTTP server that binds as
``jupyter lab --ServerApp.port_retries=0`` does, and says so in its log when it cannot).
"""

import http.client
import socket
import sys
import threading

import pytest

import jupyter_lab_server
from jupyter_lab_server import PortTaken, Server, _answers, jupyter_lab

# The stand-in: binds the port it is given, or logs Jupyter's own line and exits 1.
STAND_IN = r"""
import http.server, json, sys
port = int(next(a for a in sys.argv if a.startswith("--ServerApp.port=")).split("=")[1])
class Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"started": "now"}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args):
        pass
try:
    server = http.server.HTTPServer(("127.0.0.1", port), Status)
except OSError:
    print(f"The port {port} is already in use.", flush=True)
    sys.exit(1)
server.serve_forever()
"""


@pytest.fixture
def foreign_service():
    """A port held by a service that answers any request with binary bytes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"\xff\xfd\x18\xff\xfd \xff\xfd#\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture
def stand_in(monkeypatch, foreign_service):
    """jupyter_lab's start replaced by the stand-in, and its first port the foreign one."""
    ports = iter([foreign_service])

    def first_taken_then_free():
        return next(ports, None) or _free()

    def start(command, root, env, log_path):
        return original_start([sys.executable, "-c", STAND_IN, *command[1:]], root,
                              {"PATH": "/usr/bin:/bin"}, log_path)

    original_start = jupyter_lab_server._start
    monkeypatch.setattr(jupyter_lab_server, "_free_port", first_taken_then_free)
    monkeypatch.setattr(jupyter_lab_server, "_start", start)
    return foreign_service


def _free():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_control_a_plain_request_to_the_foreign_service_raises_bad_status_line(foreign_service):
    with pytest.raises(http.client.BadStatusLine):
        Server(f"http://127.0.0.1:{foreign_service}", "token").get("api/status")


def test_the_foreign_service_does_not_count_as_the_server(foreign_service):
    assert _answers(Server(f"http://127.0.0.1:{foreign_service}", "token")) is False


def test_control_with_one_attempt_the_taken_port_stops_the_start(stand_in, tmp_path):
    with pytest.raises(PortTaken):
        with jupyter_lab(sys.executable, tmp_path, tmp_path, attempts=1):
            pass


def test_a_taken_port_is_left_for_another_and_the_server_answers(stand_in, tmp_path):
    with jupyter_lab(sys.executable, tmp_path, tmp_path) as server:
        assert not server.url.endswith(f":{stand_in}")
        assert _answers(server)
