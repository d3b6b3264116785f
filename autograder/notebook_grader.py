"""The student notebook's ``grader``: Otter's checks and export, in Spanish, under any file name.

The notebook's first cell does::

    from notebook_grader import Grader
    grader = Grader(assignment="055-atencion-transformer")

``Grader`` finds the notebook it runs in even when a browser or an LMS renamed it
(``notebook_code.find_notebook``), says so («Listo: cuaderno …, 4 funciones por implementar»:
the graded functions still stubs in the saved file, counted from the notebook's questions),
builds Otter's own ``otter.Notebook`` for that file, and puts a Spanish face on what students
see: ``check`` and ``check_all`` show Otter's results in
Spanish, and ``export`` writes Otter's submission zip without Otter's English local re-run.

It relies on nothing of Otter but the calls themselves (``otter.Notebook(path)``,
``.check(question, global_env)``, ``.export(...)``) and the plain data of their results, so a
stand-in ``otter`` whose calls return None leaves every cell quiet instead of broken. This file
ships to students beside the notebook; its messages are in Spanish.
"""

import ast
import datetime
import html
import json
import os
import re
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Optional

# The student folder holds it beside this file; the kit's checkout, in the same folder (autograder/).
from notebook_code import (NotebookCodeError, answer_regions, answer_text, cell_source, find_notebook,
                           read_notebook)

__all__ = ["Grader", "CheckReport"]

HIDDEN_TESTS_NOTE = ("Que se cumplan las pruebas públicas no garantiza que se cumplan las ocultas, "
                     "que se aplican al entregar.")
PRACTICE_NOTE = ("Este ejercicio no cuenta para la nota: no tiene pruebas ocultas y al entregar no se "
                 "corrige. Su comprobación es solo para ti.")


class Grader:
    """Otter's ``Notebook`` for this assignment's notebook, whatever the file is called."""

    def __init__(self, assignment: str, folder=None):
        self.assignment = assignment
        self.folder = Path(folder or os.getcwd())
        self._loaded = (None, None)  # (the public checks' data file version, its checks)
        self.notebook: Optional[Path] = None
        try:
            self.notebook = find_notebook(self.folder, assignment)
        except NotebookCodeError as exc:
            print(f"{exc} Después, vuelve a ejecutar esta celda. {self._meanwhile()}")
        # Otter zips the path it is given as it is given: a bare name keeps the zip flat.
        self._path = os.path.relpath(self.notebook, self.folder) if self.notebook else None
        try:
            import otter
        except ImportError:
            raise ModuleNotFoundError("Falta el paquete otter-grader: instala requirements.txt con "
                                      "«python -m pip install -r requirements.txt» (mira «Antes de empezar»).",
                                      name="otter") from None
        self._otter = otter.Notebook(self._path)
        if self.notebook is not None:
            print(ready_message(self.notebook))

    def _public_test_files(self) -> list:
        return sorted((self.folder / "tests").glob("*.py"))

    def _meanwhile(self) -> str:
        """What works until the notebook is found: without it, Otter reads the public tests
        from the folder's tests/ files, and there is no file to export."""
        if self._public_test_files():
            return ("Mientras tanto, grader.check(...) funciona con las pruebas públicas de la carpeta "
                    "tests/, pero la entrega no: no sabe qué cuaderno meter en el .zip.")
        return "Mientras tanto no funcionan ni grader.check(...) ni la entrega."

    # -- checks ----------------------------------------------------------------------------

    def check(self, question: str) -> Optional["CheckReport"]:
        """Run a question's public tests against the notebook's variables, report in Spanish."""
        # Otter reads the caller's globals from its own call stack; through this wrapper it
        # would find this module's, so the notebook's are passed explicitly.
        return self._check(question, sys._getframe(1).f_globals)

    def check_all(self) -> "AllChecks":
        """Every question's public tests, in the order of the notebook's check cells."""
        env = sys._getframe(1).f_globals
        return AllChecks([report for report in (self._check(q, env) for q in self.questions()) if report])

    def questions(self) -> list:
        """The questions whose tests the notebook carries, in the order it checks them."""
        if self.notebook is None:
            return [path.stem for path in self._public_test_files()]
        nb = read_notebook(self.notebook)
        tests = list(nb.get("metadata", {}).get("otter", {}).get("tests", {}))
        code = "\n".join(cell_source(cell) for cell in nb.get("cells", []) if cell.get("cell_type") == "code")
        position = {q: code.find(f'grader.check("{q}")') for q in tests}
        return sorted(tests, key=lambda q: (position[q] < 0, position[q]))

    def _check(self, question, env) -> Optional["CheckReport"]:
        try:
            # The public tests call the student's functions on their own inputs: numpy's
            # English warnings about them (a NaN from −∞ − −∞) would print under the Spanish
            # report, which says what is off. The student's own runs keep their warnings.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = self._otter.check(question, global_env=env)
        except Exception as exc:  # Otter's own errors are English and about its internals
            return CheckReport(question, None, self._why_no_check(exc))
        if result is None:
            return None
        return CheckReport(question, result, practice=self._is_practice(question),
                           diagnosis=self._diagnosis(question, env))

    def _diagnosis(self, question, env) -> list:
        """What the grade's diagnosis says of ``question`` on the folder's public cases
        (public_checks.py); [] when the folder has none (an older one) or it cannot run."""
        try:
            from public_checks import load
        except ImportError:
            return []
        try:
            checks = self._checks(load)
            with warnings.catch_warnings():  # as in _check: the report says what is off
                warnings.simplefilter("ignore")
                return checks.report(question, env) if checks is not None else []
        except Exception:  # a check of ours must never break the student's cell
            return []

    def _checks(self, load):
        """The folder's public checks, read once (80 ms each: check_all asks ten times) and
        again only when the data file changes (a new folder unpacked over the old one)."""
        from public_checks import DATA_NAME

        try:
            stat = (self.folder / DATA_NAME).stat()
            version = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            version = None
        if self._loaded[0] != version:
            self._loaded = (version, load(self.folder))
        return self._loaded[1]

    def _is_practice(self, question) -> bool:
        if self.notebook is None:
            return False
        try:
            return question in practice_questions(read_notebook(self.notebook))
        except NotebookCodeError:
            return False

    def _why_no_check(self, exc) -> str:
        if self.notebook is None:
            return "no encuentro el cuaderno guardado, así que no tengo sus pruebas (mira el mensaje de la primera celda)."
        return (f"no he podido ejecutar sus pruebas ({type(exc).__name__}). Guarda el cuaderno, "
                "reinicia el núcleo (Kernel → Restart Kernel… en JupyterLab y Notebook 7, el botón "
                "Restart en VS Code) y ejecuta las celdas desde el principio.")

    # -- export ----------------------------------------------------------------------------

    def export(self) -> None:
        """Write the submission zip with Otter, check what it holds, and say so in Spanish."""
        if self.notebook is None:
            print("No puedo crear el .zip de entrega: no sé cuál es tu cuaderno (mira el mensaje de la primera celda).")
            return
        if not self.notebook.read_text(encoding="utf-8", errors="replace").strip():
            print("El cuaderno guardado está vacío. Guárdalo (Ctrl+S) y vuelve a ejecutar esta celda.")
            return
        stamp = datetime.datetime.now().strftime("%Y_%m_%dT%H_%M_%S")
        zip_path = self.folder / f"{self.notebook.stem}_{stamp}.zip"
        try:
            # pdf=False: without LaTeX a PDF export leaves a broken zip behind. run_tests=False:
            # Otter's local re-run starts a second kernel and prints English (and a TCP warning).
            self._otter.export(nb_path=self._path, export_path=zip_path.name, pdf=False,
                               run_tests=False, display_link=False)
        except Exception as exc:
            print(f"No he podido crear el .zip de entrega ({type(exc).__name__}). Guarda el cuaderno "
                  "y vuelve a ejecutar esta celda; si se repite, avisa a tu profesor.")
            return
        if not zip_path.is_file():
            return  # an Otter that exports nothing (while grading, or a stand-in)
        problem = _zip_problem(zip_path, self.assignment)
        if problem:
            print(f"Se creó «{zip_path.name}», pero {problem} No lo subas así.")
            return
        removed = _remove_older_exports(zip_path, self.notebook.stem)
        try:
            unfinished = _unfinished(read_notebook(self.notebook), sys._getframe(1).f_globals)
        except Exception:  # a warning must never stop the export it follows
            unfinished = ""
        older = (f" He borrado {'tu exportación anterior' if removed == 1 else f'tus {removed} exportaciones anteriores'}"
                 " de este cuaderno, para que en la carpeta quede solo la que tienes que subir."
                 if removed else "")
        print(f"Listo: «{zip_path.name}» contiene tu cuaderno «{self.notebook.name}» tal como está guardado "
              f"en el disco. Súbelo donde entregas las tareas de la asignatura.{older} Si cambias algo, guarda y "
              "vuelve a ejecutar esta celda.")
        if unfinished:
            print(f"Aviso: en el cuaderno guardado {unfinished}. Puedes subirlo así, pero eso valdrá 0: "
                  "complétalo, guarda y vuelve a ejecutar esta celda.")
        _show_link(zip_path)


def ready_message(notebook: Path) -> str:
    """What the first cell confirms: the notebook it found, and how many of its graded
    functions are still stubs (in the saved file)."""
    total, stubs = graded_stubs(read_notebook(notebook))
    name = f"Listo: cuaderno «{notebook.name}»"
    if not total:
        return name + "."
    functions = "función" if total == 1 else "funciones"
    if stubs == total:
        return f"{name}, {total} {functions} por implementar."
    if stubs:
        return f"{name}, {stubs} de {total} {functions} por implementar."
    return f"{name}, con {'su única función implementada' if total == 1 else f'sus {total} funciones implementadas'}."


def practice_questions(nb: dict) -> set:
    """The notebook's practice exercises, as its rubric lists them: ``make assign`` writes the
    rubric's ``practice:`` names into the notebook's ``kit`` metadata. A test file's points say
    nothing here: Otter writes ``points = [0]`` for every question whose hidden tests it removed
    from the student's copy, the graded challenge's included."""
    names = nb.get("metadata", {}).get("kit", {}).get("practice", [])
    return {name for name in names if isinstance(name, str)} if isinstance(names, list) else set()


def graded_stubs(nb: dict) -> tuple:
    """``(graded functions the notebook defines, those still raising NotImplementedError)``.

    A graded function is a top-level ``def`` named as one of the notebook's graded questions
    (not its practice exercises); when a name is defined twice, the last definition counts, as
    in the kernel.
    """
    questions = set(nb.get("metadata", {}).get("otter", {}).get("tests", {})) - practice_questions(nb)
    stub = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(cell_source(cell))
        except SyntaxError:  # a magic, or code being written: it defines nothing here
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in questions:
                stub[node.name] = any(_raises_not_implemented(n) for n in ast.walk(node))
    return len(stub), sum(stub.values())


def _raises_not_implemented(node) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


class CheckReport:
    """One question's public test results, shown in Spanish (Otter shows English)."""

    def __init__(self, question: str, result, problem: str = "", practice: bool = False,
                 diagnosis=()):
        self.question, self.result, self.problem = question, result, problem
        self.practice = practice  # worth nothing: no hidden tests to warn about
        self.diagnosis = list(diagnosis)  # the public checks' lines (public_checks.py)
        results = getattr(result, "test_case_results", None) or []
        self.public = [r for r in results if not r.test_case.hidden]

    @property
    def passed(self) -> bool:
        return not self.problem and not self._checks_fail() and all(r.passed for r in self.public)

    def _checks_fail(self) -> bool:
        """The public checks say a case fails (a note about side effects alone does not)."""
        if not self.diagnosis:
            return False
        try:
            from public_checks import failing
        except ImportError:
            return True
        return failing(self.diagnosis, self.question)

    def lines(self) -> list:
        if self.problem:
            return [f"{self.question}: {self.problem}"]
        return self._test_lines() + self.diagnosis

    def _test_lines(self) -> list:
        total = len(self.public)
        failed = [(n, r) for n, r in enumerate(self.public, start=1) if not r.passed]
        if not total:
            return [f"{self.question}: esta pregunta no tiene pruebas públicas."]
        if not failed:
            return [f"{self.question}: se cumple{'n' if total > 1 else ''} "
                    f"{'las ' + str(total) if total > 1 else 'la única'} prueba{'s' if total > 1 else ''} "
                    f"pública{'s' if total > 1 else ''}."]
        lines = [f"{self.question}: no se cumple{'n' if len(failed) > 1 else ''} {len(failed)} de {total} "
                 f"prueba{'s' if total > 1 else ''} pública{'s' if total > 1 else ''}."]
        for number, result in failed:
            failure = spanish_failure(result.message or "")
            said = self._unguessed(failure) or failure  # a question alone is all it says
            lines.append(f"  ✗ Prueba {number}: {said}")
            hint = self._unguessed(result.test_case.failure_message or "")
            if hint:
                lines.append(f"    Pista: {hint}")
        return lines

    def _unguessed(self, text: str) -> str:
        """``text`` without a closing guess at the cause («…: ¿pasas la máscara…?») when the
        public checks name the cause: the grade's feedback cuts the same guess."""
        if not text or not self.diagnosis:
            return text
        try:
            from public_checks import fact_of, names_a_cause
        except ImportError:
            return text
        if not names_a_cause(self.diagnosis):
            return text
        kept = [fact_of(line) for line in text.split("\n")]
        return "\n".join(line for line in kept if line)

    def __repr__(self) -> str:
        note = PRACTICE_NOTE if self.practice else HIDDEN_TESTS_NOTE
        return "\n".join(self.lines() + ([] if self.problem else [note]))

    def _repr_html_(self) -> str:
        color = "green" if self.passed else "#b00"
        return _shown(repr(self), color)


def _shown(text: str, color: str) -> str:
    """A check's text as Jupyter shows it, wrapped between words: JupyterLab's outputs break a
    long line anywhere («las pru|ebas»)."""
    return (f"<pre style='color: {color}; white-space: pre-wrap; word-break: normal; "
            f"overflow-wrap: break-word'>{html.escape(text)}</pre>")


class AllChecks:
    """``check_all``: one line per question, then the details of what fails."""

    def __init__(self, reports: list):
        self.reports = reports

    def __repr__(self) -> str:
        lines = [line for report in self.reports for line in report.lines()]
        practice = [report.question for report in self.reports if report.practice]
        notes = [HIDDEN_TESTS_NOTE]
        if len(practice) == 1:
            notes.append(f"El ejercicio {practice[0]} no cuenta para la nota: solo tiene pruebas públicas.")
        elif practice:
            names = f"{', '.join(practice[:-1])} y {practice[-1]}"
            notes.append(f"Los ejercicios {names} no cuentan para la nota: solo tienen pruebas públicas.")
        return "\n".join(lines + notes)

    def _repr_html_(self) -> str:
        color = "green" if all(r.passed for r in self.reports) else "#b00"
        return _shown(repr(self), color)


def spanish_failure(message: str) -> str:
    """Otter's English failure text («❌ Test case failed / Error at line N in test q: …») in Spanish.

    Otter writes the failing line of the test indented by two spaces, then ``Type: message``.
    An ``AssertionError`` carries the test's own Spanish sentence; anything else stopped the test.
    """
    lines = message.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Error at line "))
    except StopIteration:
        return message.removeprefix("❌ Test case failed").strip()
    body = lines[start + 1:]
    code = [line.strip() for line in body if line.startswith("  ")]
    error = "\n".join(line for line in body if not line.startswith("  ")).strip()
    kind, _, detail = error.partition(": ")
    if kind == "AssertionError":
        return detail.strip() or "una comprobación no se cumple."
    where = f" en «{code[0]}»" if code else ""
    detail = detail.strip()
    try:  # NumPy's and Python's English in Spanish, in the glosses the grade's feedback uses
        from public_checks import cell_error_text
    except ImportError:  # a folder from before public_checks.py: the message as it came
        said = f"{kind}: {detail}" if detail else f"{kind}."
    else:
        said = cell_error_text(kind, detail) if detail else f"{kind}."
    return f"la prueba se detuvo{where} con {said}"


def _unfinished(nb: dict, kernel: dict) -> str:
    """What the student has not written yet, in Spanish: the written answers still empty in the
    saved notebook, and the challenge's texts still None in the kernel; '' when nothing."""
    regions = answer_regions(nb.get("cells", []))
    empty = [str(number) for number, cells in enumerate(regions, start=1) if not answer_text(cells).strip()]
    parts = []
    if empty:
        parts.append(f"la respuesta escrita {empty[0]} está vacía" if len(empty) == 1 else
                     f"las respuestas escritas {', '.join(empty[:-1])} y {empty[-1]} están vacías")
    extension = kernel.get("student_extension")
    if "student_extension" in kernel:
        texts = list(extension.values()) if isinstance(extension, dict) else []
        blank = sum(1 for text in texts if not isinstance(text, str) or not text.strip())
        if not texts:
            parts.append("el reto, student_extension, no tiene sus textos")
        elif blank:
            parts.append(f"{blank} de los {len(texts)} textos del reto (student_extension) están vacíos")
    return "; ".join(parts)


def _remove_older_exports(new: Path, stem: str) -> int:
    """Delete this notebook's earlier exports: every Run All writes one, and a folder of
    several makes the student (and the grader) guess which is the one to upload. Only a zip
    named ``<stem>_<fecha>.zip`` that says it was written under that name
    (``__zip_filename__``) is removed: nothing the student made themselves."""
    pattern = re.compile(re.escape(stem) + r"_\d{4}_\d{2}_\d{2}T\d{2}_\d{2}_\d{2}(?:_\d{6})?\.zip")
    removed = 0
    for path in new.parent.glob(f"{stem}_*.zip"):
        if path == new or not pattern.fullmatch(path.name) or path.is_symlink():
            continue
        try:
            with zipfile.ZipFile(path) as zf:
                own = zf.read("__zip_filename__").decode("utf-8", "replace").strip()
        except (OSError, KeyError, zipfile.BadZipFile, ValueError, RuntimeError):
            continue
        if own == path.name:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def _zip_problem(zip_path: Path, assignment: str) -> str:
    """Why a submission zip would not grade, in Spanish, or ''."""
    with zipfile.ZipFile(zip_path) as zf:
        notebooks = [name for name in zf.namelist() if name.endswith(".ipynb")]
        if len(notebooks) != 1:
            return f"lleva {len(notebooks)} cuadernos en lugar de uno."
        try:
            metadata = json.loads(zf.read(notebooks[0]).decode("utf-8")).get("metadata", {})
        except ValueError:
            return "el cuaderno que lleva no se puede leer."
    if metadata.get("otter", {}).get("assignment_name") != assignment:
        return "el cuaderno que lleva no es el de esta tarea."
    return ""


def _show_link(zip_path: Path):
    try:
        from IPython.display import HTML, display
    except ImportError:
        return
    name = html.escape(zip_path.name)
    display(HTML(f'<p>Descarga tu entrega: <a href="{name}" download="{name}" target="_blank">{name}</a></p>'))

