"""The review page's token never reaches a command line (issue 51, item 3).

Any local account reads any process's command line (``/proc/<pid>/cmdline``). ``make review``
used to start the browser with ``http://127.0.0.1:PORT/?token=…`` as its argument, and another
account read it there, loaded the page, read every answer and saved a score. Now the browser is
started on a local page only the instructor may read, which sends it on to that address.

The browser here is a stand-in that records how it was started and stays alive, as a browser
does. Another account (uid 1000) reads its command line and tries everything it finds: the
page it names cannot be read, and the server answers 403 without the token. The positive
controls: a browser started the old way gives that account a 200 and the answers; and the
page the browser is started on does let the instructor's real browser (Chromium) in.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from explorer_helpers import CHROMIUM, chromium
from grading_harness import shared_folder
from test_review_page import graded_folder

ROOT = Path(__file__).resolve().parent.parent
OTHER_ACCOUNT = 1000

# A browser that goes on running after it is started (a real one keeps its window): it
# records its pid and stays, with the command line it was given.
FAKE_BROWSER = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    if os.fork():
        sys.exit(0)
    with open({record!r}, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
""")

# What another account does with a browser's command line: reads it, fetches every
# http://127.0.0.1 address in it, reads every file it names, and tries the server without a
# token. It prints what it got, as JSON.
ATTACKER = textwrap.dedent("""\
    import json, re, sys, urllib.error, urllib.request
    pid, port = sys.argv[1], sys.argv[2]
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        words = f.read().decode().split("\\0")
    found = {"cmdline": words, "fetched": {}, "read": {}}
    def fetch(url):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return [response.status, response.read().decode()[:20000]]
        except urllib.error.HTTPError as error:
            return [error.code, ""]
    urls = [w for word in words for w in re.findall(r"http://127\\.0\\.0\\.1:\\d+/\\S*", word)]
    for url in urls + [f"http://127.0.0.1:{port}/"]:
        found["fetched"][url] = fetch(url)
    for word in words:
        path = word[len("file://"):] if word.startswith("file://") else word
        if path.startswith("/"):
            try:
                with open(path, "rb") as f:
                    found["read"][path] = f.read(20000).decode("utf-8", "replace")
            except OSError as error:
                found["read"][path] = type(error).__name__
    print(json.dumps(found))
""")


def environment(**extra):
    paths = [str(ROOT), str(ROOT / "autograder"), str(ROOT / "assignments")]
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
            "PYTHONPATH": os.pathsep.join(paths), **extra}


def fake_browser(folder):
    record = folder / "browser.pid"
    script = folder / "browser"
    script.write_text(FAKE_BROWSER.format(python=sys.executable, record=str(record)), "utf-8")
    script.chmod(0o755)
    return script, record


def wait_for(path, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text("utf-8").strip():
            return path.read_text("utf-8").strip()
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def as_other_account(pid, port):
    """What another local account finds through the browser ``pid``'s command line."""
    command = ["setpriv", f"--reuid={OTHER_ACCOUNT}", f"--regid={OTHER_ACCOUNT}",
               "--clear-groups", "--", sys.executable, "-c", ATTACKER, str(pid), str(port)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/tmp",
                          env=environment())
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def kill(pid):
    try:
        os.kill(int(pid), 9)
    except (ProcessLookupError, ValueError):
        pass


@pytest.fixture
def review(tmp_path):
    """``python -m kit_autograder.written.review`` on a graded folder, as ``make review``
    starts it, with the stand-in browser: (OUT, the server's URL as the terminal shows it,
    the browser's pid)."""
    if os.geteuid() != 0:
        pytest.skip("another account's view needs root to become that account")
    work = shared_folder("revision-")  # the other account must reach the stand-in browser
    out = graded_folder(work / "notas")
    browser, record = fake_browser(work)
    server = subprocess.Popen(
        [sys.executable, "-m", "kit_autograder.written.review", "--out", str(out),
         "--port", "0"], env=environment(BROWSER=str(browser)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = wait_for(record)
        said = server.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", said).group(0)
        yield out, url, pid
    finally:
        if pid:
            kill(pid)
        server.terminate()
        server.wait(timeout=30)


def port_of(url):
    return int(re.search(r":(\d+)/", url).group(1))


def test_another_account_finds_no_way_in_through_the_browsers_command_line(review):
    out, url, pid = review
    token = url.split("token=")[1]
    found = as_other_account(pid, port_of(url))
    assert not [word for word in found["cmdline"] if token in word], found["cmdline"]
    # The page the browser was started on is there, and that account cannot read it.
    opener = out / ".review-open.html"
    assert any(str(opener) in word for word in found["cmdline"]), found["cmdline"]
    assert found["read"][str(opener)] == "PermissionError"
    assert (opener.stat().st_mode & 0o777) == 0o600
    assert found["fetched"] and all(status == 403 for status, _ in found["fetched"].values())
    assert "María José" not in json.dumps(found, ensure_ascii=False)


def test_control_a_browser_started_with_the_url_gives_another_account_the_answers(review,
                                                                                   tmp_path):
    out, url, _ = review
    browser, record = fake_browser(shared_folder("revision-antes-"))
    subprocess.run([str(browser), url], check=True, timeout=60)  # the old way: the URL itself
    pid = wait_for(record)
    try:
        found = as_other_account(pid, port_of(url))
    finally:
        kill(pid)
    assert [status for status, _ in found["fetched"].values()].count(200) == 1
    # With the page, its token: the answers and a saved score are next.
    page = next(text for status, text in found["fetched"].values() if status == 200)
    token = url.split("token=")[1]
    assert token in page
    request = urllib.request.Request(url.split("?")[0] + "api/state",
                                     headers={"X-Review-Token": token})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert "María José" in response.read().decode()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed")
def test_control_the_page_the_browser_is_started_on_takes_the_instructor_in(review):
    out, url, _ = review
    opener = out / ".review-open.html"
    with chromium() as browser:
        page = browser.new_page()
        page.goto(opener.as_uri())
        page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/\?token="), timeout=30_000)
        page.wait_for_selector("#answer-body strong", timeout=30_000)
        assert "María José García López" in page.inner_text("#student-title")


def test_the_page_the_browser_was_started_on_goes_when_the_server_stops(tmp_path):
    from kit_autograder.written.review import serve, write_opener

    out = graded_folder(tmp_path / "notas")
    server = serve(out, port=0)
    server.opener = write_opener(out, server.url)
    assert server.opener.exists() and (server.opener.stat().st_mode & 0o777) == 0o600
    server.server_close()
    assert not server.opener.exists()
