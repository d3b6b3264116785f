"""``make review``: the written answers of a graded folder, one question at a time across the
class, graded in the browser against the rubric's levels.

    python -m kit_autograder.written.review --out OUT [--rubric FILE] [--port N] [--no-browser]

A small server of the standard library's, on 127.0.0.1 only, serves one Spanish page
(review_page/) and a JSON API; every change the instructor makes is written at once to
``OUT/written_scores.csv`` (scores.py), which is also what a spreadsheet may fill instead.
Answers are Markdown from the student's notebook, rendered here by markdown-it-py with HTML
off, so a student's ``<script>`` is text, never markup; the page's Content-Security-Policy
runs only the page's own script and loads nothing from elsewhere.

Who may grade: the page itself is served only to a request that carries the server's token,
which exists only in the URL printed in the instructor's terminal (as Jupyter does), so another
account on the same machine cannot fetch it from 127.0.0.1. The browser is never started with
that URL: any account can read a process's command line (``/proc/<pid>/cmdline``). It is
started on a local page that only the instructor may read (``OUT/.review-open.html``, mode
0600, removed when the server stops), which sends it on to the URL, as Jupyter's
``jpserver-*-open.html`` does. Every API call needs the token too, and
requests must name this server as their host, so another site open in the same browser can
neither change a score nor read an answer. One server per graded folder: a second ``make
review`` on the same OUT is refused (a lock file), since two would overwrite each other's saves.
"""

import argparse
import fcntl
import html
import os
import json
import secrets
import sys
import threading
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from ..lms.entries import read_manifest
from ..report import markdown_html
from . import answers, scores
from .merge import roster
from .questions import rubric_path, written_questions

PAGE = Path(__file__).with_name("review_page")
ASSETS = {"/review.css": ("review.css", "text/css"),
          "/review.js": ("review.js", "text/javascript")}
DEFAULT_PORT = 8055
MAX_REQUEST_BYTES = 64 * 1024
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; "
                                "img-src data:; connect-src 'self'; form-action 'none'; "
                                "base-uri 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ReviewError(Exception):
    """The review cannot start (no graded folder, no rubric)."""


# Keys for levels that no digit can name (0,5 points), never one the page already uses
# (a, s, n, c): «m» for the first, as in «medio punto».
LEVEL_LETTERS = "mpqrtuvwxyz"


def level_keys(question):
    """The key that picks each level, meaning the same on every question: a digit is that
    many points (2 is two points wherever it is pressed); a level worth no single digit (0,5)
    takes a letter, shown beside its points."""
    keys, letters = [], iter(LEVEL_LETTERS)
    for level in question.levels:
        points = level.points
        digit = str(int(points)) if points == int(points) and 0 <= points <= 9 else None
        keys.append(digit if digit is not None and digit not in keys else next(letters))
    return keys


class Review:
    """What the page shows and changes: the class, its answers, the rubric, the scores."""

    def __init__(self, out, rubric_file=None):
        self.out = Path(out)
        self.saved = answers.load_all(self.out)
        if not self.saved:
            raise ReviewError(f"no written answers in {self.out / answers.FOLDER}: grade the "
                              "submissions first (make grade OUT=…)")
        lesson = next(iter(self.saved.values()))["lesson"]
        rubric_file = Path(rubric_file) if rubric_file else rubric_path(lesson)
        if not rubric_file.is_file():
            raise ReviewError(f"no rubric at {rubric_file}")
        self.questions = written_questions(rubric_file)
        if not self.questions:
            raise ReviewError(f"{rubric_file} has no written questions")
        manifest = read_manifest(self.out) or {}
        late = {e["file"]: bool(e.get("late")) for e in manifest.get("entries", [])}
        listed = [row for row in roster(self.out) if row[0] in self.saved]
        listed += [(file, None, None) for file in self.saved if file not in {r[0] for r in listed}]
        self.roster = listed
        self.students = [{"file": file, "name": name, "id": student_id,
                          "late": late.get(file, False)} for file, name, student_id in listed]
        self.markdown = markdown_html.renderer()
        self.lock = threading.Lock()
        self.sheet()  # a scores file that cannot be read stops here, with the cell named

    def sheet(self):
        return scores.ScoreSheet.read(self.out / scores.SCORES, self.questions)

    def state(self):
        sheet = self.sheet()
        marks = {}
        for student in self.students:
            found = sheet.marks_for(student["file"])
            marks[student["file"]] = {m.question.name: {"points": m.points, "comment": m.comment}
                                      for m in (found.marks if found else [])}
        return {
            "questions": [{"name": q.name, "number": n, "prompt": q.prompt, "points": q.points,
                           "levels": [{"points": level.points, "description": level.description,
                                       "key": key}
                                      for level, key in zip(q.levels, level_keys(q))]}
                          for n, q in enumerate(self.questions, start=1)],
            "students": self.students,
            "marks": marks,
            "problems": sheet.problems,
        }

    def answers_of(self, question):
        rendered = {}
        for student in self.students:
            saved = self.saved[student["file"]]
            answer = saved["answers"].get(question, {"text": "", "state": answers.MISSING})
            rendered[student["file"]] = {
                "state": answer.get("state"),
                "truncated": bool(answer.get("truncated")),
                "html": self.markdown.render(answer.get("text") or ""),
                # The problem is the grader's own sentence, but it quotes file names.
                "problem": html.escape(saved.get("problem") or ""),
            }
        return rendered

    def save(self, file, question, points, comment):
        if file not in self.saved:
            raise ValueError("esa entrega no es de esta clase")
        if question not in {q.name for q in self.questions}:
            raise ValueError("esa pregunta no está en la rúbrica")
        with self.lock:
            sheet = self.sheet()  # read again: a spreadsheet may have changed other cells
            sheet.ensure(self.roster)
            sheet.set(file, question, points, comment)
            sheet.write()
            found = sheet.marks_for(file)
        return {m.question.name: {"points": m.points, "comment": m.comment} for m in found.marks}


def _points(value):
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        from ..lms.worksheet import Worksheet

        number = Worksheet.number(value)
        if number is not None:
            return number
    raise ValueError("los puntos deben ser un número")


# The page the browser is started on: the URL with the token, in a file only its owner reads.
OPENER = ".review-open.html"


def write_opener(out, url) -> Path:
    """``OUT/OPENER``, created afresh with mode 0600, holding a page that sends the browser on
    to ``url``; its path, not ``url``, is what a browser's command line shows."""
    path = Path(out) / OPENER
    path.unlink(missing_ok=True)  # a crashed server's; a link there is never followed
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        quoted = html.escape(url, quote=True)
        f.write("<!doctype html><html lang=\"es\"><meta charset=\"utf-8\">"
                f"<meta http-equiv=\"refresh\" content=\"0;url={quoted}\">"
                "<title>Corrección de respuestas escritas</title>"
                f"<p><a href=\"{quoted}\">Abrir la corrección</a></p></html>")
    return path


def open_browser(server):
    """Start the browser on the opener page (``write_opener``), removed when the server
    closes."""
    server.opener = write_opener(server.review.out, server.url)
    webbrowser.open(server.opener.as_uri())


FORBIDDEN_PAGE = ("<!doctype html><html lang=\"es\"><meta charset=\"utf-8\"><title>Sin permiso"
                  "</title><p>Abre la dirección completa que muestra el terminal donde "
                  "ejecutaste <code>make review</code>: lleva el permiso "
                  "(<code>?token=…</code>) de esta corrección.</p></html>")
LOCK = ".review.lock"


class Busy(ReviewError):
    """Another review server holds the graded folder."""


def hold_folder(out: Path):
    """An exclusive lock on OUT for this server's life (released when the process ends, even
    killed): two servers on one folder would each write the scores file and lose the other's
    saves."""
    descriptor = os.open(Path(out) / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        raise Busy(f"another make review is already serving {out}: use its page, or stop it "
                   "(Ctrl+C in its terminal) first") from None
    return descriptor


def handler_for(review: Review, token: str):
    class Handler(BaseHTTPRequestHandler):
        server_version = "kit-review"

        def log_message(self, *args):  # the terminal stays quiet; the page says what happened
            pass

        def _send(self, status, body: bytes, content_type):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status, data):
            self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"),
                       "application/json; charset=utf-8")

        def _trusted(self, need_token):
            port = self.server.server_address[1]
            if self.headers.get("Host") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
                self._json(HTTPStatus.FORBIDDEN, {"error": "host desconocido"})
                return False
            if need_token and not secrets.compare_digest(
                    self.headers.get("X-Review-Token", ""), token):
                self._json(HTTPStatus.FORBIDDEN, {"error": "falta el permiso de esta página"})
                return False
            return True

        def do_GET(self):
            url = urlsplit(self.path)
            if url.path == "/":
                if not self._trusted(False):
                    return
                given = parse_qs(url.query).get("token", [""])[0]
                if not secrets.compare_digest(given.encode(), token.encode()):
                    return self._send(HTTPStatus.FORBIDDEN, FORBIDDEN_PAGE.encode("utf-8"),
                                      "text/html; charset=utf-8")
                page = (PAGE / "index.html").read_text("utf-8").replace("{{token}}", token)
                return self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")
            if url.path in ASSETS:
                if not self._trusted(False):
                    return
                name, kind = ASSETS[url.path]
                return self._send(HTTPStatus.OK, (PAGE / name).read_bytes(),
                                  f"{kind}; charset=utf-8")
            if not self._trusted(True):
                return
            try:
                if url.path == "/api/state":
                    return self._json(HTTPStatus.OK, review.state())
                if url.path == "/api/answers":
                    question = parse_qs(url.query).get("question", [""])[0]
                    return self._json(HTTPStatus.OK, review.answers_of(question))
            except scores.ScoresError as exc:
                return self._json(HTTPStatus.CONFLICT, {"error": str(exc)})
            self._json(HTTPStatus.NOT_FOUND, {"error": "no existe"})

        def do_POST(self):
            if not self._trusted(True):
                return
            if urlsplit(self.path).path != "/api/score":
                return self._json(HTTPStatus.NOT_FOUND, {"error": "no existe"})
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if not 0 < length <= MAX_REQUEST_BYTES:
                return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                                  {"error": "petición demasiado grande"})
            try:
                data = json.loads(self.rfile.read(length).decode("utf-8"))
                marks = review.save(str(data["file"]), str(data["question"]),
                                    _points(data.get("points")), str(data.get("comment") or ""))
            except (ValueError, KeyError, TypeError, scores.ScoresError) as exc:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            except OSError as exc:
                return self._json(HTTPStatus.INTERNAL_SERVER_ERROR,
                                  {"error": f"no se ha podido escribir el archivo: {exc}"})
            self._json(HTTPStatus.OK, {"marks": marks})

    return Handler


def serve(out, rubric_file=None, port=DEFAULT_PORT):
    """The server, bound and ready (``serve_forever`` is the caller's); ``port`` 0 is any free
    one, and a busy default falls back to one."""
    review = Review(out, rubric_file)
    lock = hold_folder(review.out)
    token = secrets.token_urlsafe(24)
    try:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(review, token))
        except OSError:
            if port != DEFAULT_PORT:
                raise
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(review, token))
    except BaseException:
        os.close(lock)
        raise
    server.daemon_threads = True
    server.review, server.token = review, token
    server.url = f"http://127.0.0.1:{server.server_address[1]}/?token={token}"
    server.opener = None  # open_browser's page, if the browser was started
    closing = server.server_close

    def server_close():
        closing()
        if server.opener is not None:
            server.opener.unlink(missing_ok=True)
        try:
            os.close(lock)
        except OSError:
            pass

    server.server_close = server_close
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description="Grade the written answers of a graded folder "
                                                 "in the browser.")
    parser.add_argument("--out", type=Path, required=True, help="a folder `make grade` wrote")
    parser.add_argument("--rubric", type=Path, help="the lesson's rubric (default: rubrics/)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    try:
        server = serve(args.out, args.rubric, args.port)
    except (ReviewError, scores.ScoresError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    url = server.url
    print(f"Corrección de respuestas escritas en {url}\n"
          "Esa dirección lleva el permiso de esta corrección: no la compartas.\n"
          f"Cada cambio se guarda en {args.out / scores.SCORES}. Ctrl+C para terminar.",
          file=sys.stderr)
    if not args.no_browser:
        try:
            open_browser(server)
        except OSError as exc:
            print(f"note: cannot write the page that opens the browser in {args.out}: {exc}; "
                  "open the address above yourself", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
