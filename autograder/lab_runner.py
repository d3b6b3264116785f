"""The course's lab runner: a lesson's experiments, run on the student's own functions, printed as
one JSON evidence contract.

Seed 003: «cada clase tiene un entrypoint propio, pero los motores didácticos se prueban como
una biblioteca común». Each lesson's ``lab.py`` is its entry point and holds only its
experiments; this module is the common part, the same for every class:

* the contract: ``kind``, ``seed``, ``inputs``, ``result``, ``evidence`` and ``limitations``,
  printed as canonical JSON (sorted keys, floats to a fixed number of significant digits, no
  NaN), so two runs with the same seed and notebook print the same bytes;
* where the student's functions come from: inside the notebook, the kernel's own (the
  caller's globals); from a terminal, those *Restart & Run All* would define
  (``notebook_code.restart_and_run_all``). No reading of the code can disagree with the kernel;
* a mistake costs only what depends on it: each fact declares the student functions it needs
  (``@fact(..., needs=...)``). A function that is missing, a stub, or fails makes the facts
  that need it *not measured* (``"holds": null`` and the reason in ``"not_measured"``), and
  every other fact is measured as usual. The lab exits 0 when it measured at least one fact;
* the command line (``python lab.py [--seed N] [--notebook RUTA]``), parsed by hand because
  argparse answers in English, and ``run_in_notebook`` for the notebook's challenge cell, which
  prints the evidence with a Spanish gloss for every key.

Exit codes: 0 when some fact was measured (a fact that does not hold is evidence too); 1 when
none could be; 2 for a wrong command line or a notebook that cannot be found or read.

This file ships to students beside ``lab.py``: standard library and numpy; Spanish messages.
"""

import contextlib
import io
import inspect
import json
import math
import re
import sys
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

_INSTALL = ("Instala lo que necesita la clase con «pip install -r requirements.txt» (mira "
            "«Antes de empezar» en assessment.md).")

try:
    import numpy as np
except ImportError:
    # Imported by lab.py or by extension.py: the message names the script the student ran.
    _SCRIPT = Path(sys.argv[0]).name if sys.argv and sys.argv[0].endswith(".py") else "lab.py"
    sys.exit(f"{_SCRIPT}: falta el paquete numpy. {_INSTALL}")

try:
    from notebook_code import NotebookCodeError, find_notebook, restart_and_run_all, \
        running_a_notebook
except ModuleNotFoundError as exc:
    if exc.name != "notebook_code":
        raise
    sys.exit("lab.py: falta notebook_code.py junto a lab.py; cópialo de la carpeta de la clase.")

# Printed numbers keep this many significant digits: enough to cite, and few enough that the
# last bits of a different BLAS do not change the JSON.
SIGNIFICANT_DIGITS = 6


class LabError(Exception):
    """A student function cannot give what an experiment needs. The message is for the student."""


@dataclass(frozen=True)
class CliRun:
    """What one run of a command line (the lab's or the validator's) printed, and its code."""

    code: int
    stdout: str
    stderr: str

    def emit(self) -> int:
        """Write it as the command line does (stdout as UTF-8 bytes, whatever the terminal's
        encoding: the JSON must be the same bytes everywhere) and return the exit code."""
        # errors="replace": a lone surrogate a student's text carries prints as "?", never as
        # a traceback from the validator that promises none.
        _write(sys.stderr, self.stderr)
        _write(sys.stdout, self.stdout)
        return self.code


def _write(stream, text):
    data = text.encode("utf-8", "replace")
    stream.flush()
    if hasattr(stream, "buffer"):
        stream.buffer.write(data)
    else:  # a notebook's stream, which takes text only
        stream.write(data.decode("utf-8"))
    stream.flush()


# --- what a lesson writes --------------------------------------------------------------------


def fact(fact_id: str, text: str, *, needs):
    """Mark an experiment method as one fact of the evidence: it returns ``(holds, values)``.
    ``needs``: the student functions it calls, directly or through another student function
    (a block calls the student's multihead and attention); if one cannot run, the fact is not
    measured, and when facts fail the validator names the functions they all need."""
    def mark(method):
        method.lab_entry = ("evidence", fact_id, text, tuple(needs))
        return method
    return mark


def measurement(key: str, *, needs):
    """Mark a method whose value goes into ``result[key]`` (None when it cannot be measured)."""
    def mark(method):
        method.lab_entry = ("result", key, "", tuple(needs))
        return method
    return mark


@dataclass(frozen=True)
class Lab:
    """One lesson's lab: what its JSON says and the experiments that measure it.

    ``experiments(functions, rng)`` builds every random draw in its ``__init__``, in a fixed
    order, so that a fact that cannot be measured never shifts the draws of the others; its
    methods marked ``@fact``/``@measurement`` run in the order they are defined."""

    kind: str
    default_seed: int
    functions: tuple  # the student functions the experiments may call, as the notebook names them
    experiments: type
    inputs: dict
    limitations: tuple
    glosses: dict = field(default_factory=dict)  # Spanish for the keys of each fact's values
    home: Optional[Path] = None  # lab.py's folder: where its notebook is looked for

    # -- the contract ----------------------------------------------------------------------

    def run(self, functions: dict, seed: int, unavailable: Optional[dict] = None) -> dict:
        """The whole JSON contract, computed with ``functions`` (name -> the student's callable).
        ``unavailable``: {name: Spanish reason} for functions the notebook could not define."""
        unavailable = dict(unavailable or {})
        for name in self.functions:
            if not callable(functions.get(name)) and name not in unavailable:
                unavailable[name] = f"`{name}` no está definida en el cuaderno"
        lab = self.experiments(functions, np.random.default_rng(seed))
        evidence, result = [], {}
        for entry, method in _entries(self.experiments):
            section, key, text, needs = entry
            why = next((unavailable[name] for name in needs if name in unavailable), None)
            if why is None:
                try:
                    with np.errstate(all="ignore"):
                        value = method(lab)
                except LabError as exc:
                    why = str(exc)
            if section == "result":
                result[key] = None if why else value
                continue
            if why:
                evidence.append({"id": key, "functions": list(needs), "fact": text,
                                 "holds": None, "values": {}, "not_measured": why})
            else:
                holds, values = value
                evidence.append({"id": key, "functions": list(needs), "fact": text,
                                 "holds": bool(holds), "values": values})
        measured = [item for item in evidence if item["holds"] is not None]
        return {
            "kind": self.kind,
            "seed": seed,
            "inputs": {"notebook_functions": list(self.functions), **self.inputs},
            "result": {
                "checks_total": len(evidence),
                "checks_measured": len(measured),
                "checks_passed": sum(item["holds"] for item in measured),
                "failed_checks": [item["id"] for item in measured if not item["holds"]],
                "not_measured": [item["id"] for item in evidence if item["holds"] is None],
                **result,
            },
            "evidence": evidence,
            "limitations": list(self.limitations),
        }

    def exit_code(self, report: dict) -> int:
        return 0 if report["result"]["checks_measured"] else 1

    # -- the command line ------------------------------------------------------------------

    def main(self, argv=None) -> int:
        return self.run_cli(sys.argv[1:] if argv is None else argv).emit()

    def run_cli(self, argv) -> CliRun:
        """``python lab.py ARGV`` in this process: the same bytes, the same exit code."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = self._cli(list(argv))
        return CliRun(code, out.getvalue(), err.getvalue())

    def _cli(self, argv) -> int:
        try:
            args = _parse_args(argv, self.default_seed)
        except _Usage as usage:
            print(usage.text, file=sys.stdout if usage.code == 0 else sys.stderr)
            return usage.code
        try:
            notebook = (Path(args["notebook"]) if args["notebook"]
                        else find_notebook(self.home or Path.cwd(), defines=self.functions))
        except NotebookCodeError as exc:
            return _fail(f"{exc} También puedes indicar cuál con --notebook RUTA.", 2)
        try:
            ran = restart_and_run_all(notebook)
        except NotebookCodeError as exc:
            return _fail(str(exc), 2)
        for note in dict.fromkeys(ran.skipped):
            print(f"lab.py: aviso: {note}.", file=sys.stderr)
        for first_line, error in ran.errors:
            print(f"lab.py: aviso: la celda de tu cuaderno que empieza por «{first_line}» falló "
                  f"al ejecutarse ({error}).", file=sys.stderr)
        functions, unavailable = self.functions_of(ran.namespace, ran.failed_cell_defining)
        stdout = sys.stdout
        # The redirect and the warning filter are process-wide: they live here, in the CLI,
        # never in the grader, whose threads run the lab on sandboxed stand-ins side by side.
        with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = self.run(functions, args["seed"], unavailable)
        for item in report["evidence"]:
            if item["holds"] is None:
                print(f"lab.py: no se ha medido «{item['id']}»: {item['not_measured']}",
                      file=sys.stderr)
        code = self.exit_code(report)
        if code:
            print("lab.py: no se ha podido medir ningún hecho con tus funciones; corrige los "
                  "errores de arriba, guarda el cuaderno y vuelve a ejecutarlo.", file=sys.stderr)
        stdout.write(to_json(report))
        return code

    def functions_of(self, namespace: dict, failed_cell=lambda name: None):
        """``(functions, unavailable)``: the student's callables in a notebook's namespace, and
        a Spanish reason for each one that is not there."""
        functions, unavailable = {}, {}
        for name in self.functions:
            value = namespace.get(name)
            if callable(value):
                functions[name] = value
                continue
            error = failed_cell(name)
            unavailable[name] = (f"la celda que define `{name}` falló al ejecutarse ({error})"
                                 if error else f"`{name}` no está definida en el cuaderno")
        return functions, unavailable

    # -- inside the notebook ---------------------------------------------------------------

    def run_in_notebook(self, seed: Optional[int] = None, namespace: Optional[dict] = None) -> dict:
        """For the notebook's challenge cell: the lab on the kernel's own functions (the
        caller's globals), a Spanish summary printed, the report returned.

        While ``lab.py`` itself runs this notebook from a terminal, it returns ``{}`` at once:
        the lab's own cell must not start the lab again."""
        if running_a_notebook():
            return {}
        seed = self.default_seed if seed is None else seed
        namespace = sys._getframe(1).f_globals if namespace is None else namespace
        functions, unavailable = self.functions_of(namespace)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = json.loads(to_json(self.run(functions, seed, unavailable)))
        print(self.summary(report))
        return report

    def summary(self, report: dict) -> str:
        """The evidence as a student reads it: each fact, whether it holds, its numbers with a
        Spanish gloss beside each key of the JSON."""
        result = report["result"]
        lines = [f"lab.py terminó con código {self.exit_code(report)}: "
                 f"{result['checks_measured']} de {result['checks_total']} hechos medidos, "
                 f"{result['checks_passed']} se cumplen."]
        for item in report["evidence"]:
            lines += self._fact_lines(item)
        for key in report["result"]:
            if key in ("checks_total", "checks_measured", "checks_passed", "failed_checks",
                       "not_measured"):
                continue
            gloss = self.glosses.get(key, key)
            value = report["result"][key]
            if is_contract(value):  # a lab of its own inside result: its facts, as above
                lines.append(f"{gloss} (en el JSON: result, «{key}»):")
                lines += [f"  {line}" for item in value["evidence"]
                          for line in self._fact_lines(item)]
                continue
            shown = "no medido" if value is None else _shown(value)
            lines.append(f"{gloss} (en el JSON: result, «{key}»): {shown}")
        return "\n".join(lines)

    def _fact_lines(self, item: dict) -> list:
        """One fact of an evidence list: whether it holds, its numbers, each with its gloss."""
        state = {True: "se cumple", False: "NO se cumple", None: "no medido"}[item["holds"]]
        # JSON names are shown only to find the number in resultado.json, labelled as such.
        lines = [f"[{state}] {item['fact']}  (en el JSON: «{item['id']}»)"]
        if item["holds"] is None:
            lines.append(f"    Por qué: {item['not_measured']}.")
        for key, value in item["values"].items():
            gloss = self.glosses.get(key)
            lines.append(f"    {gloss} («{key}»): {_shown(value)}" if gloss
                         else f"    {key}: {_shown(value)}")
        return lines


def _entries(experiments_class):
    """The marked methods of ``experiments_class``, in the order they are defined."""
    seen, entries = set(), []
    for klass in reversed(experiments_class.__mro__):
        for name, member in vars(klass).items():
            entry = getattr(member, "lab_entry", None)
            if entry is not None and name not in seen:
                seen.add(name)
                entries.append((entry, member))
    return entries


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def is_contract(value) -> bool:
    """A lab result of its own carried in ``result`` (an object with its own ``evidence``
    list, as the attention lesson's ``result.ablacion``): its facts read like the lab's."""
    return isinstance(value, dict) and isinstance(value.get("evidence"), list)



# --- helpers for experiments ------------------------------------------------------------------


def call(functions: dict, name: str, parts: tuple, *args):
    """Call the student's ``name`` on copies of the arguments; ``parts``: Spanish names of
    what it returns (one name: a single array). A ``LabError`` says what went wrong.

    Positionally, as the notebook and the grader call it: a student who names the parameters
    ``q, k, v`` has done nothing wrong."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        positional, keywords = _as_the_notebook_calls(functions[name], args)
        value = functions[name](*positional, **keywords)
    except Exception as exc:
        if getattr(exc, "stops_the_lab", False):
            raise  # the caller's own failure, not the student's: the grader's sandbox died
        raise LabError(explain(name, exc)) from None
    if len(parts) == 1:
        return as_array(name, parts[0], value)
    if not isinstance(value, (tuple, list)) or len(value) != len(parts):
        raise LabError(f"`{name}` debe devolver una tupla de {len(parts)} elementos "
                       f"({', '.join(parts)}) y devolvió {type(value).__name__}")
    return tuple(as_array(name, part, v) for part, v in zip(parts, value))


def _as_the_notebook_calls(function, args):
    """``args`` split as the grader's sandbox passes them: by position, except where the
    student made that parameter keyword-only (``def attention(Q, K, V, *, mask=None)``),
    which gets it by its name."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return args, {}
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in parameters) or len(args) <= len(positional):
        return args, {}
    keyword_only = [p.name for p in parameters if p.kind == p.KEYWORD_ONLY]
    extra = args[len(positional):]
    if len(extra) > len(keyword_only):
        return args, {}
    return args[:len(positional)], dict(zip(keyword_only, extra))


# Code a notebook cell defined: IPython's "<ipython-input-N-…>", ipykernel's ".../ipykernel_P/N.py".
_NOTEBOOK_FRAME = re.compile(r"^<ipython-input-|ipykernel_\d+[/\\]\d+\.py$")


def explain(name: str, exc: Exception) -> str:
    """One Spanish line: which of the student's functions failed, and with what. The function
    is named, not a cell: Jupyter and VS Code show no cell numbers by default."""
    culprit = name
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if _NOTEBOOK_FRAME.search(frame.filename) and frame.name != "<module>":
            culprit = frame.name
            break
    if isinstance(exc, NotImplementedError):
        return f"`{culprit}` todavía no está implementada: lanza NotImplementedError"
    called_from = f" (al llamar a `{name}`)" if culprit != name else ""
    detail = str(exc).splitlines()[0][:200] if str(exc).strip() else ""
    return f"`{culprit}` falló{called_from} con {type(exc).__name__}" + (f": {detail}" if detail else "")


def as_array(name, part, value) -> "np.ndarray":
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise LabError(f"`{name}`: {part} no es un array de números ({type(value).__name__})") \
            from None


def expect_shape(name, part, array, shape):
    if array.shape != tuple(shape):
        raise LabError(f"`{name}`: {part} tiene forma {array.shape} y se esperaba {tuple(shape)}")


def max_abs(a) -> float:
    a = np.abs(np.asarray(a, dtype=float))
    return float(a.max()) if a.size else 0.0


def sum_abs(a) -> float:
    return float(np.abs(np.asarray(a, dtype=float)).sum())


def spanish(value: float) -> str:
    return f"{value:g}".replace(".", ",")


# --- canonical JSON ---------------------------------------------------------------------------


def to_json(report: dict) -> str:
    """Canonical text: sorted keys, rounded floats, no NaN, so equal runs print equal bytes."""
    return json.dumps(_rounded(report), sort_keys=True, ensure_ascii=False, indent=2,
                      allow_nan=False) + "\n"


def _rounded(value):
    """Floats to SIGNIFICANT_DIGITS digits; NaN and infinities to null (JSON has neither)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}") + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(item) for item in value]
    if isinstance(value, np.generic):
        return _rounded(value.item())
    if isinstance(value, np.ndarray):
        return _rounded(value.tolist())
    raise TypeError(f"unexpected {type(value).__name__} in the report")


# --- the command line, by hand ----------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    print(f"lab.py: {message}", file=sys.stderr)
    return code


USAGE = "uso: python lab.py [--seed N] [--notebook RUTA]"
HELP = f"""{USAGE}

Laboratorio de la clase: imprime un JSON con evidencia calculada con tus funciones.

opciones:
  --seed N          semilla explícita (por defecto, la de la clase)
  --notebook RUTA   cuaderno con tus funciones (por defecto, el de esta tarea junto a lab.py,
                    se llame como se llame)
  -h, --help        muestra esta ayuda y termina"""


class _Usage(Exception):
    """The command line asks for help (code 0) or is wrong (code 2); ``text`` says so."""

    def __init__(self, text: str, code: int):
        super().__init__(text)
        self.text, self.code = text, code


def _parse_args(argv, default_seed) -> dict:
    """A hand-written parser: argparse would answer in English («usage:», «options:»)."""
    args = {"seed": default_seed, "notebook": None}
    pending = list(argv)
    while pending:
        option = pending.pop(0)
        if option in ("-h", "--help"):
            raise _Usage(HELP, 0)
        name, _, value = option.partition("=")
        if name not in ("--seed", "--notebook"):
            raise _Usage(f"{USAGE}\nlab.py: argumentos no válidos (no conozco «{option}»).", 2)
        if not value:
            if not pending:
                raise _Usage(f"{USAGE}\nlab.py: argumentos no válidos (falta el valor de {name}).", 2)
            value = pending.pop(0)
        if name == "--seed":
            try:
                args["seed"] = int(value)
            except ValueError:
                raise _Usage(f"{USAGE}\nlab.py: argumentos no válidos (--seed debe ser un número "
                             f"entero, no «{value}»).", 2) from None
        else:
            args["notebook"] = value
    return args

