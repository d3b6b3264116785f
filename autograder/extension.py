"""Validate a lab result that a student extended with ``student_extension``: the course's
challenge, the same for every class (seed 003).

    python extension.py FILE.json [--notebook NB]

The five acceptance criteria of seed 003, one check each, in rubric order:

1. ``lab_exits_zero``      lab.py termina con código 0.
2. ``result_schema``       El resultado contiene kind, seed, evidence y limitations.
3. ``lab_output_unchanged`` La extensión no modifica el comportamiento de otras clases.
4. ``cites_lab_numbers``   La interpretación referencia datos impresos por el laboratorio.
5. ``declares_risk``       Se declara al menos un riesgo o condición de no uso.

Exit codes: 0 when every criterion holds; 1 when some criterion fails, with one Spanish line
per failure; 2 when the input is unusable (unreadable, not JSON, not an object, too large,
no ``student_extension`` object, a field of it that is not text). Never a traceback.

Criteria 1 to 4 read a fresh run of the class's ``lab.py`` with the result's seed. From a
terminal that is ``python lab.py`` on the saved notebook; in the notebook (``run_in_notebook``)
it is the same lab on the kernel's own functions; in the grader (kit_autograder/challenge.py)
it is the kit's own copy of the lab on the student's functions, answered from the sandbox
(``lab_run_with``). This file ships to students beside ``lab.py``: the standard library,
jsonschema, its schema file and the lab runner.
"""

import ast
import contextlib
import hashlib
import importlib.util
import io
import json
import math
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from lab_runner import CliRun, is_contract, to_json
from notebook_code import running_a_notebook

try:
    import jsonschema
except ImportError:
    _MISSING = ("falta el paquete jsonschema. Instala lo que necesita la clase con "
                "«pip install -r requirements.txt» (mira «Antes de empezar» en assessment.md).")
    if __name__ == "__main__":
        sys.exit(f"extension.py: {_MISSING}")
    raise ImportError(f"extension.py: {_MISSING}", name="jsonschema") from None

SCHEMA_PATH = Path(__file__).with_name("extension_schema.json")
MAX_BYTES = 1_000_000  # a lab result is a few KB; anything near this is the wrong file
LAB_TIMEOUT_S = 60
# Lab floats carry 6 significant digits; a rerun elsewhere may differ in the last one, and
# round-off noise (1e-16) may differ in all of them. Neither is an edit by the student.
SAME_FLOAT_REL, SAME_FLOAT_ABS = 1e-5, 1e-9
# A cited number must carry at least this many significant digits: "0,3" or "2" prove nothing.
MIN_CITED_DIGITS = 2
# Values that any sentence mentions without reading the lab ("suma 1", "peso 0").
TRIVIAL_VALUES = (0.0, 1.0)
# A cited number names its measurement with this many words of it in the same sentence: one word
# belongs to anything («Los pesos de mi gato suman 0,34 kilos», «La pérdida de mi equipo fue
# 0,49 goles»); two of one measurement («la suma de cada fila de pesos», «el ejemplo resuelto»)
# say which.
MIN_NAMING_WORDS = 2
EMPTY_RISKS = {
    "", "-", "--", "...", "n/a", "na", "none", "no", "ninguno", "ninguna", "nada", "no hay",
    "no aplica", "sin riesgo", "sin riesgos", "pendiente", "tbd", "todo", "xxx",
}
# A text that says something has at least this many words with letters: «x», «ok» or «ver
# arriba» state no assumption, measurement, conclusion, limitation or risk.
MIN_WORDS = 4
# Fillers that are words but say nothing, after normalisation (no accents, lower case).
FILLER_WORDS = {"x", "xx", "xxx", "asdf", "qwerty", "test", "prueba", "texto", "lorem", "ipsum",
                "bla", "etc", "todo", "tbd", "pendiente", "rellenar", "aqui", "algo", "na"}
# A risk that denies risk: the first clause is a bare «no hay riesgo alguno», «sin riesgos»,
# «ninguno en absoluto». A clause that goes on («nada de esto vale para…», «no hay riesgo si…»)
# names a condition, which is what criterion 5 asks for.
_DENIES_RISK = re.compile(
    r"^(?:(?:no (?:hay|existe|existen|tiene|veo|presenta|implica|conlleva|supone)|sin|cero)"
    r"(?: (?:ningun|ninguno|ninguna|riesgo|riesgos|peligro|peligros|problema|problemas|nada))*"
    r"|ningun[oa]?|nada|none|no risks?)(?: (?:alguno|alguna|ninguno|en absoluto|de ningun tipo))*$")


class UnusableInput(Exception):
    """The input cannot be graded at all. The message is for the student."""


@dataclass(frozen=True)
class CriterionResult:
    id: str
    number: int
    title: str
    passed: bool
    message: str = ""  # what to fix, in Spanish; empty when the criterion holds

    def line(self) -> str:
        mark = "✓" if self.passed else "✗"
        # The number links the line to assessment.md's table; the id is code, not for the student.
        text = f"{mark} Criterio {self.number}: {self.title}"
        return text if self.passed else f"{text} {self.message}"


@dataclass
class LabRun:
    """What one fresh run of lab.py did."""

    command: str
    returncode: Optional[int] = None  # None: it could not start or did not finish
    stdout: str = ""
    problem: str = ""  # Spanish, when it did not exit 0


# -- loading -------------------------------------------------------------------------------


def load_result(path) -> object:
    """The parsed JSON of ``path``, or ``UnusableInput`` with the reason."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise UnusableInput(
                f"«{path.name}» ocupa {size / 1e6:.1f} MB y un resultado de lab.py ocupa unos "
                "pocos KB. ¿Es el archivo correcto?"
            )
        raw = path.read_bytes()
    except OSError:
        raise UnusableInput(f"No puedo leer el archivo «{path}». ¿Existe y tiene ese nombre?") from None
    return parse_result(raw, path.name)


def parse_result(raw: bytes, name: str = "el archivo") -> object:
    if len(raw) > MAX_BYTES:
        raise UnusableInput(f"«{name}» es demasiado grande para ser un resultado de lab.py.")
    text = _decode(raw, name)
    try:
        return json.loads(text, parse_constant=_reject_constant(name))
    except json.JSONDecodeError as exc:
        raise UnusableInput(
            f"«{name}» no es JSON válido (línea {exc.lineno}, columna {exc.colno}): "
            f"{_json_hint(exc.msg)}"
        ) from None
    except RecursionError:
        raise UnusableInput(f"«{name}» anida demasiados niveles para ser un resultado de lab.py.") from None


def _decode(raw: bytes, name: str) -> str:
    # Windows PowerShell's `>` writes UTF-16 with a BOM; Notepad may add a UTF-8 BOM.
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        raise UnusableInput(f"«{name}» no está en UTF-8. Guárdalo con la codificación UTF-8.") from None


def _reject_constant(name):
    def reject(constant):
        # Python's json accepts NaN and Infinity; the JSON standard and other tools do not.
        raise UnusableInput(f"«{name}» no es JSON válido: contiene {constant}, que JSON no admite.")
    return reject


def _json_hint(message: str) -> str:
    hints = {
        "Expecting property name enclosed in double quotes": "¿una coma sobrante antes de «}» o comillas simples en un nombre?",
        "Expecting ',' delimiter": "falta una coma entre dos elementos.",
        "Expecting value": "falta un valor, o sobra una coma antes de «]» o «}».",
        "Unterminated string starting at": "una cadena no cierra sus comillas.",
        "Extra data": "hay texto después del objeto JSON.",
        "Invalid control character at": "un salto de línea dentro de una cadena: escríbelo como \\n.",
    }
    for english, spanish in hints.items():
        if message.startswith(english):
            return spanish
    return "revisa comas, comillas, { } y [ ] cerca de ahí."


# -- the schema ----------------------------------------------------------------------------

_SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)
# Each field's accepted names, English first, read from the schema so they live only there.
FIELD_ALIASES = {
    group["oneOf"][0]["required"][0]: tuple(option["required"][0] for option in group["oneOf"])
    for group in _SCHEMA["$defs"]["student_extension"]["allOf"]
}
# The name a Spanish message uses for each field: its Spanish alias without accents, the one the
# notebook's prompt writes (``conclusion`` is both).
SPANISH_NAMES = {field: next((a for a in aliases[1:] if a.isascii()), field)
                 for field, aliases in FIELD_ALIASES.items()}


def field_name(field: str) -> str:
    """«medicion» (o «measurement»): how a message names a field, Spanish first."""
    spanish = SPANISH_NAMES[field]
    return f"«{spanish}»" if spanish == field else f"«{spanish}» (o «{field}»)"


def schema_errors(data) -> list:
    return sorted(_VALIDATOR.iter_errors(data), key=lambda e: (list(e.path), e.validator))


def check_usable(data) -> None:
    """``UnusableInput`` unless there is an object ``student_extension`` with text fields."""
    for error in schema_errors(data):
        path = list(error.path)
        if path == [] and error.validator == "type":
            raise UnusableInput(f"El resultado debe ser un objeto JSON ({{...}}), no {_json_type(data)}.")
        if path == [] and error.validator == "required" and "student_extension" not in data:
            raise UnusableInput(
                "Falta la clave «student_extension». Añádela al resultado de lab.py con los "
                f"campos {_field_list()}."
            )
        if path[:1] == ["student_extension"] and len(path) <= 2 and error.validator == "type":
            if error.instance is None:
                raise UnusableInput(f"{_where(path)} está sin rellenar (None): escribe tu texto entre comillas.")
            raise UnusableInput(f"{_where(path)} debe ser {_type_es(error.validator_value)}, no {_json_type(error.instance)}.")


def _describe(error: jsonschema.ValidationError) -> str:
    """One Spanish sentence for one schema error."""
    path, instance, where = list(error.path), error.instance, _where(list(error.path))
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in instance]
        return f"falta «{', '.join(missing)}» en {where}"
    if error.validator == "additionalProperties":
        extra = sorted(set(instance) - set(error.schema.get("properties", {})))
        names = ", ".join(f"«{name}»" for name in extra)
        return f"{where} tiene campos que no se admiten ({names}): usa solo {_field_list()}"
    if error.validator == "oneOf" and path == ["student_extension"]:
        names = [option["required"][0] for option in error.validator_value]
        present = [name for name in names if name in instance]
        if not present:
            return f"falta {field_name(names[0])} en student_extension"
        return f"student_extension repite un campo con dos nombres ({', '.join(present)}): deja solo uno"
    if error.validator == "const":
        return f"{where} debe ser «{error.validator_value}»"
    if error.validator == "type":
        return f"{where} debe ser {_type_es(error.validator_value)}, no {_json_type(instance)}"
    if error.validator == "minItems":
        return f"{where} no puede estar vacía"
    if error.validator == "pattern":
        return f"{where} está vacío: escribe el texto"
    return f"{where} no cumple el contrato ({error.validator})"


def _where(path: list) -> str:
    if not path:
        return "el resultado"
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return f"«{text}»"


def _field_list() -> str:
    return ", ".join(SPANISH_NAMES.values())


def _type_es(name) -> str:
    return {"object": "un objeto", "string": "un texto", "array": "una lista", "integer": "un entero",
            "boolean": "true o false", "number": "un número"}.get(name, str(name))


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "un booleano"
    return {dict: "un objeto", list: "una lista", str: "un texto", int: "un número", float: "un número",
            type(None): "null"}.get(type(value), type(value).__name__)


# -- running the lab -----------------------------------------------------------------------


def find_lab(notebook=None) -> Optional[Path]:
    """The class's lab.py: beside the notebook, in this folder, or beside this file."""
    candidates = [Path(notebook).resolve().parent / "lab.py"] if notebook else []
    candidates += [Path.cwd() / "lab.py", Path(__file__).resolve().parent / "lab.py"]
    return next((path for path in candidates if path.is_file()), None)


# Criteria 1 and 3 both need a fresh run of the lab on the same notebook and seed; graded one
# hidden test at a time they would run it twice. Runs are remembered by the exact bytes of the
# lab and the notebook, so a changed notebook always gets a new run.
_LAB_RUNS = {}


def _fingerprint(path) -> Optional[str]:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def run_lab(seed, notebook=None, lab=None, timeout=LAB_TIMEOUT_S, in_process=False,
            again=False) -> LabRun:
    """Run lab.py once, as the student would, and keep what it printed; ``again``: one more
    run, never the kept one (whether two runs agree is a measurement).

    ``in_process`` runs it in this process (no timeout: for the notebook, where starting
    another Python costs more than the lab), with the same result as the command line.
    """
    lab = Path(lab) if lab else find_lab(notebook)
    if lab is None:
        return LabRun("python lab.py", problem="no encuentro lab.py junto al cuaderno ni en esta carpeta.")
    # Without --notebook the lab reads the notebook beside it, so every one there counts.
    notebooks = [Path(notebook)] if notebook else sorted(lab.parent.glob("*.ipynb"))
    key = (repr(seed), str(lab.resolve()), _fingerprint(lab), timeout,
           tuple((str(path.resolve()), _fingerprint(path)) for path in notebooks))
    runner = _run_lab_in_process if in_process else _run_lab
    if again:
        return runner(_lab_arguments(seed, notebook), lab, timeout)
    if key not in _LAB_RUNS:
        _LAB_RUNS[key] = runner(_lab_arguments(seed, notebook), lab, timeout)
    return _LAB_RUNS[key]


def _lab_arguments(seed, notebook) -> list:
    arguments = []
    if isinstance(seed, int) and not isinstance(seed, bool):
        arguments += ["--seed", str(seed)]
    if notebook:
        arguments += ["--notebook", str(Path(notebook).resolve())]
    return arguments


def _shown(arguments) -> str:
    return "python lab.py" + "".join(f" {a}" for a in arguments)


def _run_lab(arguments, lab: Path, timeout) -> LabRun:
    shown = _shown(arguments)
    try:
        done = subprocess.run([sys.executable, str(lab), *arguments], cwd=lab.parent,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return LabRun(shown, problem=f"lab.py no terminó en {timeout} s: ¿un bucle sin fin en tus funciones?")
    except OSError as exc:
        return LabRun(shown, problem=f"no se pudo ejecutar lab.py ({type(exc).__name__}).")
    return _lab_run(shown, done.returncode, done.stdout.decode("utf-8", "replace"),
                    done.stderr.decode("utf-8", "replace"))


def _run_lab_in_process(arguments, lab: Path, timeout) -> LabRun:
    shown = _shown(arguments)
    try:
        module = _import_lab(lab)
    except SystemExit as exit_:  # lab.py stops at import when a package it needs is missing
        return _lab_run(shown, 1, "", str(exit_.code))
    # The lab's own "no notebook given" default is its folder, as when run from there.
    with contextlib.chdir(lab.parent):
        done = module.run_cli(arguments)
    return _lab_run(shown, done.code, done.stdout, done.stderr)


def _import_lab(lab: Path):
    spec = importlib.util.spec_from_file_location("lab", lab)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED_RANGE = (0, 2**32 - 1)


def lab_run_for(data, lab_module, functions, unavailable=None) -> LabRun:
    """The fresh lab run that criteria 1 to 4 read, for a result ``data``: the lab with the
    result's own seed on ``functions``, or why there can be none."""
    seed = data.get("seed")
    if type(seed) is int and SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        return lab_run_with(lab_module, functions, seed, unavailable)
    if seed is None:  # the notebook's own lab run failed, so its result never came back
        return LabRun("python lab.py", None, "",
                      "tu `resultado` no trae la semilla («seed») de lab.py: lab.py no llegó a "
                      "terminar en tu cuaderno. Mira la salida de la celda del reto, que dice "
                      "por qué.")
    return LabRun("python lab.py", None, "",
                  "la semilla de tu resultado («seed») no es un número entero válido.")


def lab_run_with(lab_module, functions, seed, unavailable=None) -> LabRun:
    """What ``python lab.py --seed SEED`` prints, computed by ``lab_module`` on ``functions``
    (name -> callable) without reading any notebook: the kernel's own functions inside the
    notebook, the sandbox's answers in the grader."""
    report = lab_module.LAB.run(functions, seed, unavailable)
    code = lab_module.LAB.exit_code(report)
    stderr = "" if code == 0 else ("lab.py: no se ha podido medir ningún hecho con tus "
                                   "funciones: " + "; ".join(
                                       dict.fromkeys(item["not_measured"]
                                                     for item in report["evidence"])))
    return _lab_run(f"python lab.py --seed {seed}", code, to_json(report), stderr)


def _lab_run(shown: str, returncode: int, stdout: str, stderr: str) -> LabRun:
    run = LabRun(shown, returncode, stdout)
    if returncode != 0:
        said = stderr.strip().splitlines()
        last = said[-1].removeprefix("lab.py: ") if said else ""
        run.problem = f"lab.py terminó con código {returncode}" + (f": {last}" if last else ".")
    return run


# -- the criteria --------------------------------------------------------------------------


class _Context:
    """What the criteria share: the data, where the notebook is, and at most one lab run."""

    def __init__(self, data: dict, notebook=None, lab=None, timeout=LAB_TIMEOUT_S, in_process=False,
                 rerun=None):
        self.data, self.notebook, self.lab, self.timeout = data, notebook, lab, timeout
        self.in_process = in_process
        self._run = None
        self._rerun = rerun or (lambda: run_lab(data.get("seed"), notebook, lab, timeout,
                                                in_process, again=True))
        self.glosses = None  # the lab's Spanish for its keys, when the caller has the lab

    @property
    def run(self) -> LabRun:
        if self._run is None:
            self._run = run_lab(self.data.get("seed"), self.notebook, self.lab, self.timeout, self.in_process)
        return self._run

    @property
    def fresh(self):
        """The fresh run's JSON, or None. It, not the student's copy, is the evidence: a copy
        can be edited or borrowed, a fresh run of the student's own functions cannot."""
        if self.run.problem:
            return None
        try:
            fresh = json.loads(self.run.stdout)
        except json.JSONDecodeError:
            return None
        return fresh if isinstance(fresh, dict) else None

    @property
    def blocked(self) -> bool:
        """Whether criterion 1 fails: no fresh run, or one with no evidence of working code.
        Every other criterion reads that evidence, so none holds without it."""
        return bool(self.run.problem) or bool(evidence_problem(self.fresh or {}))

    def fresh_again(self):
        """A second fresh run's JSON, or None: whether the lab repeats itself on the student's
        functions tells randomness from a copy made before a fix (or edited)."""
        try:
            again = json.loads(self._rerun().stdout or "")
        except (json.JSONDecodeError, TypeError):
            return None
        return again if isinstance(again, dict) else None

    def field(self, name: str) -> str:
        extension = self.data["student_extension"]
        value = next((extension[a] for a in FIELD_ALIASES[name] if a in extension), "")
        return value if isinstance(value, str) else ""


def lab_exits_zero(ctx: _Context) -> str:
    """Criterion 1: a fresh run of lab.py with the result's seed exits 0, and measures at least
    one fact that is evidence of the student's working code (``working_facts``): a stub, or a
    function that ignores its inputs, makes the lab exit 0 on the facts it fails."""
    if ctx.run.problem:
        return f"{ctx.run.problem} Corrígelo, guarda el cuaderno y repite «{ctx.run.command}» hasta que termine con código 0."
    return evidence_problem(ctx.fresh or {})


# The challenge extends the lab's evidence about the student's own code: a number every student
# prints whatever their code (a lab result carried inside ``result``, as the attention lesson's
# ablation) or the facts of a function that fails one of the lab's checks prove nothing about it.
CRITERION_1_FIRST = "primero tiene que cumplirse el criterio 1"


def working_facts(fresh: dict) -> list:
    """The facts of a fresh run that are evidence of the student's working code: measured with
    at least one of their functions, holding, and with every fact the lab measured on those
    functions (or some of them) holding too. A function that fails any of the lab's checks, as
    one that ignores its inputs does, makes none of its facts evidence."""
    measured = [(set(_functions_of(item)), item) for item in fresh.get("evidence") or []
                if isinstance(item, dict) and item.get("holds") is not None]
    return [item for needs, item in measured if needs and item.get("holds") is True
            and all(other.get("holds") is True for others, other in measured
                    if others and others <= needs)]


def _functions_of(item) -> list:
    return [f for f in item.get("functions") or [] if isinstance(f, str)]


def evidence_problem(fresh: dict) -> str:
    """Why a fresh run that exited 0 is no evidence of working code yet (Spanish), or ''."""
    if not fresh or working_facts(fresh):
        return ""
    cause = _failing_functions(fresh)
    return ("lab.py termina con código 0, pero ninguno de sus hechos es todavía evidencia sobre tu "
            "código: un hecho cuenta si se cumple y las funciones que usa cumplen todos los hechos "
            "que el laboratorio comprueba de ellas. " + (cause or "Implementa al menos una de tus "
            "funciones. ") + "Los números de result.ablacion son los mismos para toda la clase y no "
            "cuentan por sí solos.")


def result_schema(ctx: _Context) -> str:
    """Criterion 2: the JSON Schema holds for the lab's fresh result with the extension, and
    each of the five texts says something (no placeholder, no filler, a sentence)."""
    if ctx.fresh is None or ctx.blocked:
        return ("No hay un resultado nuevo de lab.py con evidencia de tu código con el que "
                f"comprobar el contrato: {CRITERION_1_FIRST}.")
    problems = [_describe(error) for error in
                schema_errors({**ctx.fresh, "student_extension": ctx.data["student_extension"]})]
    if not problems:
        problems = [problem for name in FIELD_ALIASES
                    if name != "risk" and (problem := empty_text_problem(name, ctx.field(name)))]
    if not problems:
        return ""
    shown = "; ".join(dict.fromkeys(problems[:3]))
    extra = len(problems) - 3
    more = f" (y {extra} problema{'s' if extra > 1 else ''} más)" if extra > 0 else ""
    return f"El resultado no cumple el contrato: {shown}{more}."


def lab_output_unchanged(ctx: _Context) -> str:
    """Criterion 3: every key but student_extension equals a fresh run with the same seed."""
    if ctx.blocked:
        return f"No se puede comparar con lab.py: {CRITERION_1_FIRST}."
    try:
        fresh = json.loads(ctx.run.stdout)
    except json.JSONDecodeError:
        return "lab.py no imprimió un JSON válido, así que no hay con qué comparar."
    mine = {key: value for key, value in ctx.data.items() if key != "student_extension"}
    changed = _differences(fresh, mine, "")
    if not changed or _explained_by_definition_order(fresh, mine):
        return ""
    said = f"Lo que imprimió lab.py ha cambiado en {_listed(changed)}"
    again = ctx.fresh_again()
    moving = _differences(fresh, again, "") if again is not None else []
    if moving:
        return (f"{said}, y no por tu copia: dos ejecuciones nuevas de lab.py con la misma "
                f"semilla dan resultados distintos en {_listed(moving)}: "
                f"{_changing_functions(fresh, moving, repeated=True)} da un resultado distinto en cada "
                "ejecución (¿dropout o números al azar?). Quita el azar, vuelve a generar la "
                f"salida con «{ctx.run.command}» y añade solo student_extension.")
    return (f"{said}: una ejecución nueva con la misma semilla da otros valores, y dos "
            "ejecuciones nuevas coinciden entre sí, así que tus funciones ya no dan lo que "
            "guardaste. ¿La generaste antes de corregir alguna función, o la editaste? No edites "
            f"su salida: vuelve a generarla con «{ctx.run.command}» y añade solo "
            "student_extension.")


def _listed(paths) -> str:
    shown = ", ".join(f"«{path or 'raíz'}»" for path in paths[:3])
    return shown + (f" y {len(paths) - 3} más" if len(paths) > 3 else "")

_EVIDENCE_INDEX = re.compile(r"^evidence\[(\d+)\]")


def _changing_functions(fresh, changed, repeated=False) -> str:
    """Who changes between runs: the functions every changed fact of the lab uses, by name,
    or «alguna de tus funciones» when the changes are not all in facts that say so.
    ``repeated``: ``changed`` compares two fresh runs, so a fact that came out the same in both
    clears the functions it uses (unless that would clear them all)."""
    evidence = fresh.get("evidence") if isinstance(fresh.get("evidence"), list) else []
    used, moved = [], set()
    for path in changed:
        match = _EVIDENCE_INDEX.match(path or "")
        item = evidence[int(match[1])] if match and int(match[1]) < len(evidence) else None
        functions = item.get("functions") if isinstance(item, dict) else None
        if not functions:
            return "alguna de tus funciones"
        used.append({f for f in functions if isinstance(f, str)})
        moved.add(int(match[1]))
    common = set.intersection(*used) if used else set()
    if repeated:
        cleared = {f for i, item in enumerate(evidence) if i not in moved and isinstance(item, dict)
                   for f in (item.get("functions") or []) if isinstance(f, str)}
        common = (common - cleared) or common
    common = sorted(common)
    if not common:
        return "alguna de tus funciones"
    if len(common) == 1:
        return f"tu `{common[0]}`, que usan los hechos que han cambiado,"
    names = ", ".join(f"`{f}`" for f in common[:-1]) + f" o `{common[-1]}`"
    return f"alguna de las funciones que usan los hechos que han cambiado, {names},"


RESULT_SUMMARY = ("checks_total", "checks_measured", "checks_passed", "failed_checks",
                  "not_measured")


def _explained_by_definition_order(fresh, mine) -> bool:
    """Whether the student's copy differs from the fresh run only where, when the notebook ran
    its lab cell, a function could not run because something it uses was defined further down
    (a NameError): run top to bottom the copy is what the lab printed, so nothing was edited,
    and the fresh run, with every cell defined, is the evidence."""
    def late(item):
        return (isinstance(item, dict) and item.get("holds") is None
                and "NameError" in str(item.get("not_measured") or ""))

    evidence, theirs = fresh.get("evidence"), mine.get("evidence")
    if not isinstance(evidence, list) or not isinstance(theirs, list) or \
            len(evidence) != len(theirs):
        return False
    if not any(late(item) for item in theirs):
        return False
    patched = dict(mine, evidence=[new if late(old) else old
                                   for new, old in zip(evidence, theirs)])
    result, their_result = fresh.get("result"), mine.get("result")
    if isinstance(result, dict) and isinstance(their_result, dict):
        patched["result"] = {key: result.get(key) if key in RESULT_SUMMARY or value is None
                             else value for key, value in their_result.items()}
    return not _differences(fresh, patched, "")


def cites_lab_numbers(ctx: _Context) -> str:
    """Criterion 4: measurement or conclusion cites a number a fresh run prints, **names the
    measurement it comes from**, and the number is evidence of the student's working code.

    Named: a number equal to one the lab printed counts only beside two words of its fact or key
    («pesos» and «fila», «peso» and «d_k») in the same sentence; a coincidence («Los pesos de mi
    gato suman 0,34 kilos») or filler around a copied number is not. Evidence of the student's
    code: a value of one of ``working_facts``, or of ``result`` measured with their functions;
    never a number every student prints (a lab result carried in ``result``, the ablation), nor
    one of a function that fails some of the lab's checks."""
    if ctx.blocked:
        return f"Sin evidencia de tu código todavía no hay números que citar: {CRITERION_1_FIRST}."
    fresh = ctx.fresh
    glosses = ctx.glosses
    if glosses is None:
        lab = Path(ctx.lab) if ctx.lab else find_lab(ctx.notebook)
        glosses = _glosses(lab) if lab else {}
    sources = _citable_sources(fresh, glosses)
    text = f"{ctx.field('measurement')}\n{ctx.field('conclusion')}"
    cited = cited_numbers(text)
    # The words that name a number are the ones of its own sentence: «pesos» in the conclusion
    # does not make the cat of the measurement's «Mi gato pesa 0,34 kilos» a measurement.
    named = {kind for sentence in _sentences(text) for number in cited_numbers(sentence)
             for names, values, kind in sources
             if _matches(number, values) and len(names & _content_words(sentence)) >= MIN_NAMING_WORDS}
    if OWN in named:
        return ""
    cause = _failing_functions(fresh)
    own = sorted({value for _, values, kind in sources if kind == OWN for value in values})
    if named:
        which = " y ".join(text for kind, text in (
            (CARRIED, "de result.ablacion, que son los mismos para toda la clase porque no salen "
                      "de tus funciones"),
            (UNPROVEN, "de hechos que no se cumplen, o que usan una función que no cumple todos "
                       "los hechos del laboratorio")) if kind in named)
        example = f" (por ejemplo {_spanish_number(own[len(own) // 2])})" if own else ""
        return cause + (f"Los números que citas son {which}: no cuentan por sí solos. Cita "
                        f"también al menos uno de un hecho que se cumpla con tus funciones{example}, "
                        "diciendo de qué medición sale.")
    printed = sorted({value for _, values, _ in sources for value in values})
    if printed and any(_matches(number, printed) for number in cited):
        return cause + ("Citas un número que imprimió el laboratorio, pero no dices de qué medición sale: "
                "nombra el hecho o la medición, con al menos dos palabras suyas, en la misma frase "
                "que el número (por ejemplo «los pesos de la máscara causal» o «el mayor peso "
                "medio con d_k = 64»), para que se vea que es la evidencia y no una coincidencia.")
    example = f" (por ejemplo {_spanish_number(own[len(own) // 2])})" if own else ""
    return cause + (
        "La medición y la conclusión no citan ningún número de evidence o result. Copia al "
        f"menos un valor medido con tus funciones{example}, diciendo de qué medición sale; puedes "
        "redondearlo, usar coma decimal o un porcentaje, con al menos "
        f"{MIN_CITED_DIGITS} cifras significativas."
    )


# Words too common in the lab's facts to say which measurement a number is.
_COMMON_WORDS = {"cada", "para", "como", "sobre", "entre", "desde", "hasta", "cuando", "donde",
                 "mayor", "menor", "numero", "valor", "siguen", "siendo", "misma", "mismo",
                 "ningun", "ninguno", "nunca", "todas", "todos", "otra", "otro", "cuatro",
                 "error", "tras", "ultima", "ultimo", "antes", "despues", "with", "from"}


def _failing_functions(fresh: dict) -> str:
    """A sentence naming the functions the failing facts of the fresh run use, or '': with one
    of them wrong, the numbers a student copied from an earlier run are not the ones printed
    now, and the criterion's failure is that function's, not the text's.

    Blame by measurement: when every failing fact needs one function, that function is named
    alone (a wrong attention fails the block's facts too, through the student's block); when
    no function is common to them all, the functions of facts that hold on their own (a fact
    that needs that function only) are left out."""
    evidence = [item for item in fresh.get("evidence") or [] if isinstance(item, dict)]

    def needs(item):
        return {f for f in item.get("functions") or [] if isinstance(f, str)}

    failing = [needs(item) for item in evidence if item.get("holds") is False]
    if not any(failing):
        return ""
    common = set.intersection(*failing)
    if common:
        suspects, verb = common, ("todos usan" if len(failing) > 1 else "usa")
    else:
        cleared = {f for item in evidence if item.get("holds") is True
                   for f in needs(item) if len(needs(item)) == 1}
        suspects, verb = (set.union(*failing) - cleared) or set.union(*failing), "usan"
    named = ", ".join(f"`{f}`" for f in sorted(suspects))
    facts = ("no se cumple 1 hecho del laboratorio, que" if len(failing) == 1
             else f"no se cumplen {len(failing)} hechos del laboratorio, y")
    which = "esa función" if len(suspects) == 1 else "esas funciones"
    return (f"Ojo: con tus funciones {facts} {verb} {named}: mientras {which} no calcule"
            f"{'' if len(suspects) == 1 else 'n'} lo que debe, sus números no son los de una "
            "implementación correcta y cambian cuando la corriges. Arregla primero "
            f"{which} (mira su sección de este informe). ")


# A sentence ends at «.», «!», «?» or «;» that is not a decimal point, or at a line break.
_SENTENCE_END = re.compile(r"(?<!\d)[.!?;]|[.!?;](?!\d)|\n")


def _sentences(text: str) -> list:
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


def _content_words(text: str) -> set:
    """The words of ``text`` that can name a measurement: four letters or more (or a symbol
    like d_k), accents and a plural «s» removed."""
    found = set()
    for word in re.findall(r"[^\W\d]\w*", unicodedata.normalize("NFKD", text).encode(
            "ascii", "ignore").decode().lower()):
        for part in {word, *word.split("_")} if "_" in word else {word}:
            part = part[:-2] if part.endswith("es") and len(part) > 5 else part
            part = part[:-1] if part.endswith("s") and len(part) > 4 else part
            if (len(part) >= 4 or "_" in part) and part not in _COMMON_WORDS:
                found.add(part)
    return found


# What a citable number is: the student's evidence (OWN), a number every student prints
# (CARRIED: a lab result carried in ``result``), or a number of a function the lab has not shown
# to work (UNPROVEN).
OWN, CARRIED, UNPROVEN = "own", "carried", "unproven"


def _citable_sources(fresh: dict, glosses: dict) -> list:
    """``[(words naming a measurement, [its numbers], kind)]`` from the lab's fresh output: each
    value of a fact, named by the fact's words and its key's (OWN for ``working_facts``, else
    UNPROVEN); each value of ``result``, by its key's (OWN: measured with the student's
    functions); and a lab result carried inside ``result`` (the attention lesson's
    ``result.ablacion``), fact by fact, each named by its own words and the key that carries it
    (CARRIED)."""
    working = [id(item) for item in working_facts(fresh)]
    sources = []
    for item in fresh.get("evidence") or []:
        kind = OWN if id(item) in working else UNPROVEN
        sources += [(names, values, kind) for names, values in _fact_sources(item, set(), glosses)]
    for key, value in (fresh.get("result") or {}).items():
        names = _content_words(f"{key} {glosses.get(key, '')}")
        if is_contract(value):
            sources += [(names_, values, CARRIED) for item in value["evidence"]
                        for names_, values in _fact_sources(item, names, glosses)]
        else:
            sources.append((names, list(_citable_numbers(value)), OWN))
    return [(names, values, kind) for names, values, kind in sources if values]


def _fact_sources(item, names: set, glosses: dict) -> list:
    if not isinstance(item, dict):
        return []
    base = names | _content_words(" ".join(str(item.get(k) or "") for k in ("fact", "id")))
    return [(base | _content_words(f"{key} {glosses.get(key, '')}"), list(_citable_numbers(value)))
            for key, value in (item.get("values") or {}).items()]


def _glosses(lab) -> dict:
    """The lab's ``GLOSSES`` (Spanish for each key of its JSON), read as a literal from its
    source, never run: the validator must not execute a lab to describe it."""
    try:
        tree = ast.parse(Path(lab).read_text("utf-8"))
    except (OSError, SyntaxError, ValueError, TypeError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "GLOSSES"
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
    return {}


def declares_risk(ctx: _Context) -> str:
    """Criterion 5: a risk or no-use condition that says something, not the guide's «<…>»
    placeholder, and not a denial of any risk."""
    risk = ctx.field("risk")
    if ctx.blocked:  # a risk of using a result needs a result about working code
        return (f"Un riesgo de usar un resultado necesita un resultado: {CRITERION_1_FIRST} "
                "(lab.py con evidencia de tu código).")
    if is_placeholder(risk):
        return f"{field_name('risk')} todavía tiene el texto de ejemplo entre < >: sustitúyelo por tu riesgo."
    if _normalized(risk) in EMPTY_RISKS or denies_risk(risk):
        return (
            f"Escribe en {field_name('risk')} al menos un riesgo o una condición en la que no "
            "usarías este resultado; decir que no hay ninguno («ninguno», «no hay riesgo», "
            "«nada») no cuenta: todo resultado de un laboratorio de juguete tiene alguno."
        )
    return empty_text_problem("risk", risk)


def empty_text_problem(name: str, text: str) -> str:
    """Why the field ``name`` says nothing yet, in Spanish, or ''."""
    where = field_name(name)
    if is_placeholder(text):
        return f"{where} todavía tiene el texto de ejemplo entre < >: escribe el tuyo"
    words = [word for word in _normalized(text).split() if any(c.isalpha() for c in word)]
    if not words or all(word in FILLER_WORDS for word in words) or len(set("".join(words))) <= 2:
        return f"{where} no dice nada todavía («{text.strip()[:40]}»): escribe una frase completa"
    if len(words) < MIN_WORDS:
        return (f"{where} es demasiado corto para decir algo («{text.strip()[:40]}»): escribe "
                f"una frase completa, de al menos {MIN_WORDS} palabras")
    return ""


def denies_risk(text: str) -> bool:
    """A risk that says there is none («no hay riesgo alguno»), and nothing else."""
    first_clause = re.split(r"[,;:()]", _normalized(text), maxsplit=1)[0].strip()
    return bool(_DENIES_RISK.match(first_clause))


@dataclass(frozen=True)
class Criterion:
    id: str
    title: str
    check: Callable  # _Context -> Spanish message, empty when it holds


CRITERIA = (
    Criterion("lab_exits_zero", "lab.py termina con código 0.", lab_exits_zero),
    Criterion("result_schema", "El resultado contiene kind, seed, evidence y limitations.", result_schema),
    Criterion("lab_output_unchanged", "La extensión no modifica el comportamiento de otras clases.", lab_output_unchanged),
    Criterion("cites_lab_numbers", "La interpretación referencia datos impresos por el laboratorio.", cites_lab_numbers),
    Criterion("declares_risk", "Se declara al menos un riesgo o condición de no uso.", declares_risk),
)
CRITERION_IDS = tuple(c.id for c in CRITERIA)


def validate(data, notebook=None, *, lab=None, only=None, timeout=LAB_TIMEOUT_S,
             in_process=False, lab_run=None, glosses=None, rerun=None) -> list:
    """The criteria's results, in rubric order; ``UnusableInput`` when nothing can be graded.

    ``only`` restricts the run to one criterion id; ``notebook`` defaults to the lab's own
    choice (this assignment's notebook beside lab.py); ``in_process`` runs the lab here;
    ``lab_run``: a lab run already made, as the grader makes one from trusted code
    (challenge.py), instead of running lab.py at all; ``rerun``: how to make another
    (criterion 3 asks whether two runs agree).
    """
    check_usable(data)
    if only is not None and only not in CRITERION_IDS:
        raise ValueError(f"unknown criterion {only!r}; expected one of {CRITERION_IDS}")
    ctx = _Context(data, notebook, lab, timeout, in_process, rerun)
    ctx._run = lab_run
    ctx.glosses = glosses
    results = []
    for number, criterion in enumerate(CRITERIA, start=1):
        if only in (None, criterion.id):
            message = criterion.check(ctx)
            results.append(CriterionResult(criterion.id, number, criterion.title, not message, message))
    return results


def check_criterion(criterion_id: str, data, notebook=None) -> None:
    """For the notebook's hidden tests: ``AssertionError`` with the Spanish reason unless it holds."""
    try:
        if isinstance(data, (str, Path)):
            data = load_result(data)
        (result,) = validate(data, notebook, only=criterion_id)
    except UnusableInput as exc:
        raise AssertionError(str(exc)) from None
    if not result.passed:
        raise AssertionError(result.message)


# -- comparing and citing numbers ----------------------------------------------------------


def _differences(expected, actual, path: str) -> list:
    """Paths where ``actual`` is not ``expected``, tolerating float noise."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for key in sorted(set(expected) | set(actual)):
            sub = f"{path}.{key}" if path else key
            if key not in expected or key not in actual:
                found.append(sub)
            elif key == "not_measured" and isinstance(expected[key], str) \
                    and isinstance(actual[key], str):
                # Which facts went unmeasured must agree; why is worded by where the function
                # ran (the kernel's own exception, or the grader's sentence about it).
                continue
            else:
                found += _differences(expected[key], actual[key], sub)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [path]
        return [p for i, (e, a) in enumerate(zip(expected, actual)) for p in _differences(e, a, f"{path}[{i}]")]
    if _is_number(expected) and _is_number(actual):
        same = math.isclose(expected, actual, rel_tol=SAME_FLOAT_REL, abs_tol=SAME_FLOAT_ABS)
        return [] if same else [path]
    same_type = type(expected) is type(actual)
    return [] if same_type and expected == actual else [path]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _citable_numbers(value):
    """The measured numbers in the lab's output: floats, minus trivial ones."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _citable_numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _citable_numbers(item)
    elif isinstance(value, float) and math.isfinite(value) and abs(value) not in TRIVIAL_VALUES:
        yield abs(value)


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER = re.compile(
    r"""
    (?<![\w.,])                                   # not the tail of a word or of a number
    [-−+]?
    (?P<int>\d+)(?:[.,](?P<frac>\d+))?
    (?:
        \s*[eE](?P<e>[-−+]?\d+)                   # 2.4e-15
      | \s*[x×·*]\s*10\s*(?:\^|\*\*)\s*\{?(?P<pow>[-−+]?\d+)\}?   # 2,4 × 10^-15
      | \s*[x×·*]\s*10(?P<sup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)                # 2,4·10⁻¹⁵
    )?
    (?P<percent>\s*%)?
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class CitedNumber:
    value: float  # magnitude, as a fraction when written as a percentage
    unit: float  # one unit of the last digit written
    digits: int  # significant digits written


def cited_numbers(text: str) -> list:
    """Every number in a student's text: decimal point or comma, exponents, percentages."""
    found = []
    for match in _NUMBER.finditer(text):
        frac = match.group("frac") or ""
        exponent = match.group("e") or match.group("pow") or (match.group("sup") or "").translate(_SUPERSCRIPTS) or "0"
        try:
            scale = 10.0 ** int(exponent.replace("−", "-")) / (100 if match.group("percent") else 1)
        except (OverflowError, ValueError):  # 1e400, or an exponent of thousands of digits:
            continue  # beyond any float, so no number the lab printed
        mantissa = float(f"{match.group('int')}.{frac or '0'}")
        digits = len((match.group("int") + frac).lstrip("0"))
        found.append(CitedNumber(mantissa * scale, 10.0 ** -len(frac) * scale, digits))
    return found


# Below this, a printed number is round-off: its digits change from one machine to the next (the
# lab's own limitations say so), so a student's «2,4e-15» is checked by its size, not its digits.
ROUNDOFF = 1e-12


def _matches(cited: CitedNumber, printed: list) -> bool:
    """Whether ``cited`` is one of ``printed``, rounded or truncated to the digits written; a
    round-off number matches any round-off number printed for the same measurement."""
    if cited.digits < MIN_CITED_DIGITS:
        return False
    if cited.value < ROUNDOFF:
        return any(0 < value < ROUNDOFF for value in printed)
    slack = cited.unit * 1e-9
    return any(
        abs(value - cited.value) <= cited.unit / 2 + slack or 0 <= value - cited.value < cited.unit
        for value in printed
    )


def _spanish_number(value: float) -> str:
    return f"{value:.3g}".replace(".", ",")


def is_placeholder(text: str) -> bool:
    """A field still holding assessment.md's example text, written between < and >."""
    text = text.strip()
    return text.startswith("<") and text.endswith(">")


def _normalized(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[\s.!¡¿?]+", " ", text).strip().lower()


# -- command line --------------------------------------------------------------------------

USAGE = "uso: python extension.py RESULTADO.json [--notebook RUTA]"
HELP = f"""{USAGE}

Comprueba los cinco criterios de aceptación de student_extension.

argumentos:
  RESULTADO.json    el resultado de lab.py con tu student_extension (lo escribe el cuaderno)

opciones:
  --notebook RUTA   cuaderno con tus funciones (por defecto, el de esta tarea junto al JSON)
  -h, --help        muestra esta ayuda y termina"""


def main(argv=None) -> int:
    return run_cli(sys.argv[1:] if argv is None else argv).emit()


def run_cli(argv, in_process=False) -> CliRun:
    """``python extension.py ARGV`` in this process: the same text and exit code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _run(list(argv), in_process)
    return CliRun(code, out.getvalue(), err.getvalue())


def save_and_validate(result, path="resultado.json") -> int:
    """The notebook's «Guarda y valida» cell: ``result`` written to ``path``, then
    ``run_in_notebook(path)``. Under lab.py, which runs the notebook from a terminal, nothing is
    written: running the lab leaves the student's folder as it was."""
    if running_a_notebook():
        return 0
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=2, sort_keys=True)
    return run_in_notebook(path, sys._getframe(1).f_globals)


def run_in_notebook(path="resultado.json", namespace=None) -> int:
    """For the notebook: ``python extension.py PATH``, printed alike, with the lab run on the
    kernel's own functions (the caller's globals) instead of the saved file."""
    if running_a_notebook():  # lab.py is running this notebook from a terminal
        return 0
    namespace = sys._getframe(1).f_globals if namespace is None else namespace
    try:
        data = load_result(path)
        check_usable(data)
        lab = find_lab(path)
        if lab is None:
            raise UnusableInput("no encuentro lab.py junto al cuaderno ni en esta carpeta.")
        module = _import_lab(lab)
        functions, unavailable = module.LAB.functions_of(namespace)
        results = validate(data, lab_run=lab_run_for(data, module, functions, unavailable),
                           glosses=dict(getattr(module.LAB, "glosses", {}) or {}),
                           rerun=lambda: lab_run_for(data, module, functions, unavailable))
    except UnusableInput as exc:
        print(f"No se puede validar: {exc}")
        return 2
    except Exception as exc:  # a bug here must not show a student a traceback
        print(f"Error inesperado del validador ({type(exc).__name__}). Avisa a tu profesor.")
        return 2
    return _print_results(results)


def _run(argv, in_process) -> int:
    try:
        path, notebook = _parse_args(argv)
    except _Usage as usage:
        print(usage.text, file=sys.stdout if usage.code == 0 else sys.stderr)
        return usage.code
    try:
        data = load_result(path)
        results = validate(data, notebook or find_notebook_beside(path), in_process=in_process)
    except UnusableInput as exc:
        print(f"No se puede validar: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug here must not show a student a traceback
        print(f"Error inesperado del validador ({type(exc).__name__}). Avisa a tu profesor.", file=sys.stderr)
        return 2
    return _print_results(results)


def _print_results(results) -> int:
    for result in results:
        if not result.passed:
            print(result.line())
    passed = sum(r.passed for r in results)
    print(f"{passed} de {len(results)} criterios se cumplen.")
    return 0 if passed == len(results) else 1


class _Usage(Exception):
    """The command line asks for help (code 0) or is wrong (code 2); ``text`` says so."""

    def __init__(self, text: str, code: int):
        super().__init__(text)
        self.text, self.code = text, code


def _parse_args(argv):
    """A hand-written parser: argparse would answer in English («usage:», «options:»)."""
    def wrong(why):
        return _Usage(f"{USAGE}\nvalidador: argumentos no válidos ({why}).", 2)

    files, notebook, pending = [], None, list(argv)
    while pending:
        argument = pending.pop(0)
        if argument in ("-h", "--help"):
            raise _Usage(HELP, 0)
        if argument == "--notebook" or argument.startswith("--notebook="):
            notebook = argument.partition("=")[2] or (pending.pop(0) if pending else None)
            if not notebook:
                raise wrong("falta la ruta del cuaderno tras --notebook")
        elif argument.startswith("-") and len(argument) > 1:
            raise wrong(f"no conozco «{argument}»")
        else:
            files.append(argument)
    if len(files) != 1:
        raise wrong("indica un archivo JSON, por ejemplo resultado.json" if not files
                    else f"indica un solo archivo JSON, no {len(files)}")
    return files[0], notebook


def find_notebook_beside(json_path) -> Optional[Path]:
    found = sorted(Path(json_path).resolve().parent.glob("*.ipynb"))
    return found[0] if len(found) == 1 else None


if __name__ == "__main__":
    sys.exit(main())
