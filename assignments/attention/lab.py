"""Lab of lesson 055: evidence about the attention that *you* wrote, as a JSON contract.

    python lab.py [--seed N] [--notebook RUTA]

It loads ``attention``, ``multihead``, ``positional_encoding`` and ``transformer_block`` from
the student's notebook (by default the one beside this file that carries this assignment's
Otter name, whatever it is called), runs a few experiments with them and prints one JSON
object: ``kind``, ``seed``, ``inputs``, ``result``, ``evidence`` and ``limitations``. The lab
holds no solution: every number in ``evidence`` comes out of the student's code.

Exit codes: 0 when the lab ran (even if some fact does not hold: that is evidence too);
1 when the notebook's functions cannot produce the evidence (a stub, an exception, an output
of the wrong shape); 2 for a wrong command line or a notebook that cannot be found or read.
Two runs with the same seed and the same notebook print byte-identical JSON.

The notebook runs the same code in its own process (``run_in_notebook``), without starting
another Python: ``run_cli`` returns exactly what the command line would print.
"""

import contextlib
import io
import json
import math
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_INSTALL = "Instala lo que necesita la clase con «pip install -r requirements.txt» (mira «Antes de empezar» en assessment.md)."

try:
    import numpy as np
except ImportError:
    sys.exit(f"lab.py: falta el paquete numpy. {_INSTALL}")

try:
    from autograder.notebook_code import (CELL_FILENAME_PATTERN, NotebookCodeError, find_notebook,
                                          load_functions, read_notebook)
except ImportError:
    # In the student folder the module sits beside this file; in the repo, one folder up.
    for folder in (_HERE, _HERE.parents[1] / "autograder"):
        if (folder / "notebook_code.py").is_file():
            sys.path.insert(0, str(folder))
            break
    try:
        from notebook_code import (CELL_FILENAME_PATTERN, NotebookCodeError, find_notebook,
                                   load_functions, read_notebook)
    except ModuleNotFoundError as exc:
        if exc.name != "notebook_code":
            sys.exit(f"lab.py: falta el paquete {exc.name}. {_INSTALL}")
        sys.exit("lab.py: falta notebook_code.py junto a lab.py; cópialo de la carpeta de la clase.")

KIND = "attention"
# The Otter assignment name in the metadata of the notebooks this lab reads (the master's
# ASSIGNMENT CONFIG; a test keeps the two equal).
ASSIGNMENT = "055-atencion-transformer"
DEFAULT_SEED = 55
GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")

# Printed numbers keep this many significant digits: enough to cite, and few enough that
# the last bits of a different BLAS do not change the JSON.
SIGNIFICANT_DIGITS = 6

SENTENCE = ["el", "paciente", "tiene", "dolor", "torácico", "que", "irradia", "al", "brazo"]
D_MODEL, N_HEADS, D_FF = 8, 2, 32
SATURATION_D_K, SATURATION_KEYS = (4, 64, 512), 10
# One random query per d_k makes "the largest weight grows with d_k" a coin toss (it failed for
# 6 of seeds 1-12); the mean over this many queries grows for every seed tried (1-200).
SATURATION_QUERIES = 200
SATURATED_WEIGHT = 0.9  # "towards 1": the mean largest weight at the largest d_k
LARGE_SCORE = 1000.0  # scores of this size overflow a softmax that does not subtract the max
PE_POSITIONS, PE_D_MODEL, PE_SHIFT = 100, 16, 3
TOLERANCES = {
    "row_sum": 1e-6,  # a row of weights "sums to 1"
    "zero_weight": 1e-9,  # a forbidden key "gets no weight"; an output "does not change"
    "same_output": 1e-9,  # two outputs that should be equal
    "different_output": 1e-6,  # two outputs that should differ
    "rotation": 1e-9,  # PE(pos + k) = R_k PE(pos)
    "unit_variance": 1e-3,  # layer norm's eps keeps the variance a hair below 1
}

# Seed 003's worked example: two tokens, d_k = 2.
WORKED_Q = [[1.0, 0.0], [0.0, 1.0]]
WORKED_K = [[1.0, 0.0], [0.0, 1.0]]
WORKED_V = [[1.0, 2.0], [3.0, 4.0]]

LIMITATIONS = [
    "No es producción: NumPy en CPU con float64, sin lotes (batch), sin tokenización, sin "
    "entrenamiento, sin KV-cache, sin atención eficiente ni cuantización, y sin las pruebas "
    "de seguridad, observabilidad y operación que exige un sistema real.",
    "Los pesos W_Q, W_K, W_V, W_O, W1 y W2 son aleatorios y no están entrenados: los patrones "
    "de atención no significan nada lingüístico.",
    "Los tamaños son de juguete (9 tokens, d_model = 8, 2 cabezas): el laboratorio no mide el "
    "coste O(n²·d) en tiempo ni en memoria de las secuencias largas.",
    "Cada hecho se comprueba con una sola semilla y unas pocas entradas: es evidencia, no una "
    "demostración. Con otras formas (n ≠ m, d_k ≠ d_v, n = 1) tu código podría fallar aunque "
    "aquí todo se cumpla.",
    "Las tolerancias de inputs.tolerances deciden qué cuenta como «se cumple»; con otro umbral "
    "la lectura podría cambiar.",
    "Los números del orden de 1e-16 son ruido de redondeo y pueden variar de una máquina a "
    "otra; su tamaño importa, no sus cifras.",
]


class LabError(Exception):
    """The student's functions cannot produce the evidence. The message is for the student."""


@dataclass(frozen=True)
class CliRun:
    """What one run of the command line printed, and its exit code."""

    code: int
    stdout: str
    stderr: str


def main(argv=None) -> int:
    run = run_cli(sys.argv[1:] if argv is None else argv)
    sys.stderr.write(run.stderr)
    sys.stdout.buffer.write(run.stdout.encode("utf-8"))
    sys.stdout.flush()
    return run.code


def run_cli(argv) -> CliRun:
    """``python lab.py ARGV`` in this process: the same bytes, the same exit code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _run(list(argv))
    return CliRun(code, out.getvalue(), err.getvalue())


def _run(argv) -> int:
    try:
        args = _parse_args(argv)
    except _Usage as usage:
        print(usage.text, file=sys.stdout if usage.code == 0 else sys.stderr)
        return usage.code
    try:
        notebook = Path(args["notebook"]) if args["notebook"] else find_notebook(_HERE, ASSIGNMENT)
        notebook = read_notebook(notebook)
    except NotebookCodeError as exc:
        return _fail(str(exc), 2)
    try:
        functions = load_functions(notebook, GRADED)
    except NotebookCodeError as exc:
        return _fail(str(exc), 1)
    # The student's prints go to stderr so stdout stays one JSON document. The redirect and
    # the warning filter are process-wide, so they live here, in the CLI, and never in the
    # grader, whose threads run the lab on sandboxed stand-ins side by side.
    stdout = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = run_lab(functions, args["seed"])
    except LabError as exc:
        return _fail(str(exc), 1)
    stdout.write(to_json(report))
    return 0


def run_in_notebook(seed: int = DEFAULT_SEED, notebook=None) -> dict:
    """For the notebook's challenge cell: run the lab here, print a summary, return the report.

    It prints what the terminal's stderr would show when the lab fails, and returns ``{}``.
    """
    argv = ["--seed", str(seed)] + (["--notebook", str(notebook)] if notebook else [])
    run = run_cli(argv)
    print(f"lab.py terminó con código {run.code}.")
    if run.code != 0:
        print(run.stderr.strip())
        return {}
    report = json.loads(run.stdout)
    for item in report["evidence"]:
        print(f"[{'se cumple' if item['holds'] else 'NO se cumple'}] {item['fact']}\n    {item['values']}")
    print("Ejemplo trabajado:", report["result"]["worked_example"])
    return report


def run_lab(functions: dict, seed: int) -> dict:
    """The whole JSON contract, computed with ``functions`` (name -> the student's function)."""
    lab = _Lab(functions, np.random.default_rng(seed))
    evidence = lab.evidence()
    failed = [item["id"] for item in evidence if not item["holds"]]
    return {
        "kind": KIND,
        "seed": seed,
        "inputs": {
            "notebook_functions": list(GRADED),
            "sentence": SENTENCE,
            "d_model": D_MODEL,
            "n_heads": N_HEADS,
            "d_ff": D_FF,
            "saturation": {"d_k": list(SATURATION_D_K), "n_keys": SATURATION_KEYS},
            "large_score": LARGE_SCORE,
            "positional_encoding": {
                "n_positions": PE_POSITIONS,
                "d_model": PE_D_MODEL,
                "shift": PE_SHIFT,
            },
            "worked_example": {"Q": WORKED_Q, "K": WORKED_K, "V": WORKED_V},
            "tolerances": TOLERANCES,
        },
        "result": {
            "checks_total": len(evidence),
            "checks_passed": len(evidence) - len(failed),
            "failed_checks": failed,
            "worked_example": lab.worked_example(),
        },
        "evidence": evidence,
        "limitations": LIMITATIONS,
    }


def to_json(report: dict) -> str:
    """Canonical text: sorted keys, rounded floats, no NaN, so equal runs print equal bytes."""
    return json.dumps(_rounded(report), sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


class _Lab:
    """The experiments. Every random draw happens in a fixed order from one generator."""

    def __init__(self, functions: dict, rng: np.random.Generator):
        self.f = functions
        self.rng = rng
        n = len(SENTENCE)
        scale = 1 / np.sqrt(D_MODEL)
        self.X = rng.normal(size=(n, D_MODEL))
        self.W_Q, self.W_K, self.W_V = (rng.normal(0, scale, (D_MODEL, D_MODEL)) for _ in range(3))
        d_head = D_MODEL // N_HEADS
        # The same draws as the notebook's init_multihead, so the lab does not depend on it.
        self.heads = [tuple(rng.normal(0, scale, (D_MODEL, d_head)) for _ in range(3)) for _ in range(N_HEADS)]
        self.W_O = rng.normal(0, scale, (D_MODEL, D_MODEL))
        self.W1, self.b1 = rng.normal(0, scale, (D_MODEL, D_FF)), np.zeros(D_FF)
        self.W2, self.b2 = rng.normal(0, 1 / np.sqrt(D_FF), (D_FF, D_MODEL)), np.zeros(D_MODEL)
        self.perm = rng.permutation(n)
        self.saturation_draws = [(rng.normal(size=(SATURATION_QUERIES, d_k)), rng.normal(size=(SATURATION_KEYS, d_k)))
                                 for d_k in SATURATION_D_K]
        self.causal = np.tril(np.ones((n, n), dtype=bool))

    def evidence(self) -> list:
        return [
            self.rows_sum_to_one(),
            self.causal_mask(),
            self.large_scores(),
            *self.saturation(),
            self.scaling_by_sqrt_dk(),
            self.pe_rotation(),
            self.permutation_without_pe(),
            self.permutation_with_pe(),
            self.block_normalized(),
            self.block_causal(),
        ]

    # -- attention ---------------------------------------------------------------------

    def _attend(self, Q, K, V, mask=None):
        out, weights = _call(self.f, "attention", 2, Q, K, V, mask=mask)
        _expect_shape("attention", "la salida", out, (Q.shape[0], V.shape[1]))
        _expect_shape("attention", "los pesos", weights, (Q.shape[0], K.shape[0]))
        return out, weights

    def _projections(self):
        return self.X @ self.W_Q, self.X @ self.W_K, self.X @ self.W_V

    def rows_sum_to_one(self):
        _, weights = self._attend(*self._projections())
        error = _max_abs(weights.sum(axis=1) - 1)
        return _fact(
            "rows_sum_to_one", ["attention"],
            "Cada fila de pesos de la autoatención suma 1.",
            error <= TOLERANCES["row_sum"], max_abs_row_sum_error=error,
        )

    def causal_mask(self):
        _, weights = self._attend(*self._projections(), mask=self.causal)
        future = weights[~self.causal]
        return _fact(
            "causal_mask_future_weight", ["attention"],
            "Con la máscara causal, ningún token da peso a los tokens futuros.",
            _max_abs(future) <= TOLERANCES["zero_weight"],
            total_future_weight=_sum_abs(future), max_future_weight=_max_abs(future),
        )

    def large_scores(self):
        Q, K, V = self._projections()
        # Scores around 1e3: exp() overflows unless the softmax subtracts each row's maximum.
        Q = Q * LARGE_SCORE / max(_max_abs(Q @ K.T / np.sqrt(K.shape[1])), 1e-12)
        _, weights = self._attend(Q, K, V)
        non_finite = int((~np.isfinite(weights)).sum())
        error = _max_abs(weights.sum(axis=1) - 1)  # NaN when some weight is NaN; printed as null
        return _fact(
            "large_scores_stay_finite", ["attention"],
            f"Con puntuaciones de magnitud {LARGE_SCORE:g}, los pesos siguen siendo números "
            "finitos y cada fila suma 1.",
            non_finite == 0 and error <= TOLERANCES["row_sum"],
            non_finite_weights=non_finite, max_abs_row_sum_error=error,
        )

    def saturation(self):
        """Two facts from one experiment: saturation without scaling, and what scaling does."""
        unscaled, scaled, spread, never_sharper = [], [], [], True
        for (Q, K), d_k in zip(self.saturation_draws, SATURATION_D_K):
            V = np.eye(SATURATION_KEYS)
            # attention divides by sqrt(d_k); multiplying Q by sqrt(d_k) first undoes it.
            largest_unscaled = self._attend(Q * np.sqrt(d_k), K, V)[1].max(axis=1)
            largest_scaled = self._attend(Q, K, V)[1].max(axis=1)
            never_sharper &= bool(np.all(largest_scaled <= largest_unscaled + TOLERANCES["row_sum"]))
            unscaled.append(float(largest_unscaled.mean()))
            scaled.append(float(largest_scaled.mean()))
            spread.append(float(np.std(Q @ K.T)))
        values = dict(d_k=list(SATURATION_D_K), n_queries=SATURATION_QUERIES, scores_std=spread,
                      max_weight_unscaled=unscaled, max_weight_scaled=scaled)
        grows = all(a < b for a, b in zip(unscaled, unscaled[1:])) and unscaled[-1] >= SATURATED_WEIGHT
        return [
            _fact(
                "softmax_saturation", ["attention"],
                f"Sin escalar, el mayor peso de una consulta crece hacia 1 al aumentar d_k: su media "
                f"sobre {SATURATION_QUERIES} consultas aumenta con d_k y llega al menos a "
                f"{_spanish(SATURATED_WEIGHT)} con d_k = {SATURATION_D_K[-1]}.",
                grows, **values,
            ),
            _fact(
                "scaling_never_sharpens", ["attention"],
                "Escalando por √d_k, el mayor peso de cada consulta nunca es mayor que sin escalar.",
                never_sharper, **values,
            ),
        ]

    def scaling_by_sqrt_dk(self):
        Q, K, V = self._projections()
        # Repeating the columns of Q and K doubles d_k and doubles Q·Kᵀ. Dividing by √d_k turns
        # that into a factor √2, the same as multiplying Q alone by √2.
        doubled = self._attend(np.hstack([Q, Q]), np.hstack([K, K]), V)[1]
        times_sqrt2 = self._attend(Q * np.sqrt(2), K, V)[1]
        error = _max_abs(doubled - times_sqrt2)
        return _fact(
            "scaling_by_sqrt_dk", ["attention"],
            "Duplicar d_k repitiendo las columnas de Q y K equivale a multiplicar Q por √2, "
            "como ocurre cuando las puntuaciones se dividen por √d_k.",
            error <= TOLERANCES["same_output"], max_abs_weight_difference=error,
        )

    # -- positional encoding -----------------------------------------------------------

    def _pe(self, n_positions, d_model):
        pe, omega = _call(self.f, "positional_encoding", 2, n_positions, d_model)
        _expect_shape("positional_encoding", "pe", pe, (n_positions, d_model))
        _expect_shape("positional_encoding", "omega", omega, ((d_model + 1) // 2,))
        return pe, omega

    def pe_rotation(self):
        pe, omega = self._pe(PE_POSITIONS, PE_D_MODEL)
        k = PE_SHIFT
        R = np.zeros((PE_D_MODEL, PE_D_MODEL))
        for i, w in enumerate(omega):  # block-diagonal 2x2 rotations, one per frequency
            R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(k * w), np.sin(k * w)], [-np.sin(k * w), np.cos(k * w)]]
        error = _max_abs(pe[k:] - pe[:-k] @ R.T)
        return _fact(
            "pe_rotation", ["positional_encoding"],
            f"PE(pos + {k}) es una rotación de PE(pos), la misma en todas las posiciones.",
            error <= TOLERANCES["rotation"], max_rotation_error=error,
        )

    # -- multi-head and permutations ---------------------------------------------------

    def _multihead(self, X, mask=None):
        out = _call(self.f, "multihead", 1, X, self.heads, self.W_O, mask=mask)
        _expect_shape("multihead", "la salida", out, X.shape)
        return out

    def permutation_without_pe(self):
        difference = _max_abs(self._multihead(self.X)[self.perm] - self._multihead(self.X[self.perm]))
        return _fact(
            "permutation_equivariance_without_pe", ["multihead"],
            "Sin codificación posicional, barajar los tokens solo baraja las salidas.",
            difference <= TOLERANCES["same_output"], max_abs_difference=difference,
        )

    def permutation_with_pe(self):
        pe = self._pe(len(SENTENCE), D_MODEL)[0]
        shuffled = self._multihead(self.X[self.perm] + pe)
        difference = _max_abs(self._multihead(self.X + pe)[self.perm] - shuffled)
        return _fact(
            "permutation_equivariance_lost_with_pe", ["multihead", "positional_encoding"],
            "Con codificación posicional, barajar los tokens cambia las salidas: el orden cuenta.",
            difference > TOLERANCES["different_output"], max_abs_difference=difference,
        )

    # -- the block ---------------------------------------------------------------------

    def _block(self, x):
        out = _call(self.f, "transformer_block", 1, x, self.heads, self.W_O, self.W1, self.b1, self.W2, self.b2, mask=self.causal)
        _expect_shape("transformer_block", "la salida", out, x.shape)
        return out

    def _block_input(self):
        return self.X + self._pe(len(SENTENCE), D_MODEL)[0]

    def block_normalized(self):
        y = self._block(self._block_input())
        mean, variance = _max_abs(y.mean(axis=1)), _max_abs(y.var(axis=1) - 1)
        return _fact(
            "block_output_normalized", ["transformer_block"],
            "Tras la última normalización de capa, cada token de salida tiene media 0 y varianza 1.",
            mean <= TOLERANCES["row_sum"] and variance <= TOLERANCES["unit_variance"],
            max_abs_token_mean=mean, max_abs_variance_error=variance,
        )

    def block_causal(self):
        x = self._block_input()
        changed = x.copy()
        changed[-1] += 1.0
        difference = _max_abs(self._block(x)[:-1] - self._block(changed)[:-1])
        return _fact(
            "block_causal", ["transformer_block"],
            "Con la máscara causal, cambiar el último token no cambia la salida de los anteriores.",
            difference <= TOLERANCES["zero_weight"], max_abs_change_before_last=difference,
        )

    # -- seed 003's worked example -----------------------------------------------------

    def worked_example(self):
        Q, K, V = (np.array(m) for m in (WORKED_Q, WORKED_K, WORKED_V))
        output, weights = self._attend(Q, K, V)
        causal_output, _ = self._attend(Q, K, V, mask=np.tril(np.ones((2, 2), dtype=bool)))
        return {
            "weights": weights.tolist(),
            "output": output.tolist(),
            "causal_output_first_row": causal_output[0].tolist(),
        }


def _spanish(value: float) -> str:
    return f"{value:g}".replace(".", ",")


def _fact(fact_id, functions, text, holds, **values) -> dict:
    return {"id": fact_id, "functions": functions, "fact": text, "holds": bool(holds), "values": values}


def _call(functions: dict, name: str, n_parts: int, *args, **kwargs):
    """Call one of the student's functions on copies (``np.errstate`` is per-thread)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            value = functions[name](*args, **kwargs)
    except Exception as exc:
        raise LabError(_explain(name, exc)) from None
    if n_parts == 1:
        return _as_array(name, "la salida", value)
    if not isinstance(value, (tuple, list)) or len(value) != n_parts:
        raise LabError(f"{name} debe devolver una tupla de {n_parts} elementos y devolvió {type(value).__name__}.")
    parts = ("la salida", "los pesos") if name == "attention" else ("pe", "omega")
    return tuple(_as_array(name, part, v) for part, v in zip(parts, value))


def _explain(name: str, exc: Exception) -> str:
    """One Spanish line: which function of the notebook failed, where, and with what."""
    culprit, where = name, ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        match = CELL_FILENAME_PATTERN.match(frame.filename)
        if match:
            culprit, where = frame.name, f" (celda {match.group(1)}, línea {frame.lineno})"
            break
    if isinstance(exc, NotImplementedError):
        return (
            f"{culprit} todavía no está implementada{where}: lanza NotImplementedError. "
            "Complétala en el cuaderno, guárdalo y vuelve a ejecutar lab.py."
        )
    called_from = f" al llamar a {name}" if culprit != name else ""
    detail = str(exc).splitlines()[0][:200] if str(exc).strip() else ""
    return f"{culprit} falló{where}{called_from}: {type(exc).__name__}" + (f": {detail}" if detail else "")


def _as_array(name, part, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise LabError(f"{name}: {part} no es un array de números ({type(value).__name__}).") from None
    return array


def _expect_shape(name, part, array, shape):
    if array.shape != tuple(shape):
        raise LabError(f"{name}: {part} tiene forma {array.shape} y se esperaba {tuple(shape)}.")


def _max_abs(a) -> float:
    a = np.abs(np.asarray(a, dtype=float))
    return float(a.max()) if a.size else 0.0


def _sum_abs(a) -> float:
    return float(np.abs(np.asarray(a, dtype=float)).sum())


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
    raise TypeError(f"unexpected {type(value).__name__} in the report")


def _fail(message: str, code: int) -> int:
    print(f"lab.py: {message}", file=sys.stderr)
    return code


USAGE = "uso: python lab.py [--seed N] [--notebook RUTA]"
HELP = f"""{USAGE}

Laboratorio de atención: imprime un JSON con evidencia calculada con tus funciones.

opciones:
  --seed N          semilla explícita (por defecto {DEFAULT_SEED})
  --notebook RUTA   cuaderno con tus funciones (por defecto, el de esta tarea junto a lab.py,
                    se llame como se llame)
  -h, --help        muestra esta ayuda y termina"""


class _Usage(Exception):
    """The command line asks for help (code 0) or is wrong (code 2); ``text`` says so."""

    def __init__(self, text: str, code: int):
        super().__init__(text)
        self.text, self.code = text, code


def _parse_args(argv) -> dict:
    """A hand-written parser: argparse would answer in English («usage:», «options:»)."""
    args = {"seed": DEFAULT_SEED, "notebook": None}
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


if __name__ == "__main__":
    sys.exit(main())
