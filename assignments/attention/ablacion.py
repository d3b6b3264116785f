"""El laboratorio de ablación: qué aportan √d_k, la codificación posicional y las residuales,
medido entrenando un Transformer diminuto con y sin cada pieza.

    python ablacion.py                 # las tres ablaciones, 3 semillas: JSON en la salida
    python ablacion.py --figura f.png  # y además sus curvas de pérdida y de gradiente

Each ablation trains the same model twice from the same initial weights and batches, once with
the piece and once without it, and reports the held-out loss and the size of the gradient that
reaches the layers the piece protects. Training is plain SGD with momentum on purpose: Adam
divides each gradient by its own size, which would hide exactly what √d_k and the residuals are
for, gradients that vanish. The model is self-contained numpy (its forward and its hand-written
backward), so it runs in the student's folder in seconds; it is not the graded functions and
does not call them.

Its JSON follows the lab's contract (``kind``, ``seeds``, ``evidence``: facts that hold or not,
with their numbers, ``limitations``). lab.py carries what it prints with the default seeds as
its ``result.ablacion`` (lab.ABLATION, held to this file by tests/test_ablation.py), so that a
student's challenge can cite it, and the Spanish for its keys lives there (lab.GLOSSES).
"""

import json
import sys
from dataclasses import dataclass, replace

import numpy as np

KIND = "transformer_attention_ablation"
DEFAULT_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Setup:
    """One training run: the task, the model's sizes and which pieces it has."""

    task: str = "copia_desplazada"  # the output at t is the input at t - 1: needs positions
    vocabulary: int = 10
    length: int = 8
    d_model: int = 32
    d_ff: int = 64
    blocks: int = 1
    scaled: bool = True  # scores divided by √d_k
    positions: bool = True  # the sinusoidal encoding added to the embeddings
    residuals: bool = True
    steps: int = 150
    batch: int = 32
    rate: float = 0.03
    momentum: float = 0.9


# The three ablations: (id, what it measures, the baseline, the change).
ABLATIONS = (
    ("sin_escala_raiz_dk",
     "Sin dividir por √d_k, con d_k = 64, la softmax empieza saturada (su mayor peso medio "
     "antes de entrenar es mayor que con la escala) y el modelo aprende peor la copia "
     "desplazada: tras los mismos pasos, su pérdida es mayor en todas las semillas.",
     Setup(d_model=64, d_ff=64), dict(scaled=False)),
    ("sin_codificacion_posicional",
     "Sin codificación posicional, la atención no sabe qué token es el anterior: la copia "
     "desplazada (escribir en t el token de t − 1) no se aprende: la pérdida se queda alta en "
     "todas las semillas.",
     Setup(), dict(positions=False)),
    ("sin_residuales",
     "Sin conexiones residuales, una pila de dos bloques aprende peor la copia desplazada: tras "
     "los mismos pasos, su pérdida es mayor en todas las semillas.",
     Setup(blocks=2), dict(residuals=False)),
)

LIMITATIONS = [
    "Un modelo diminuto (1 o 2 bloques, una cabeza) y tareas de juguete: las diferencias muestran "
    "el mecanismo, no su tamaño en un modelo real.",
    "Se entrena con SGD con momento y pocos pasos: con Adam y más pasos algunas diferencias se "
    "reducen, porque Adam compensa gradientes pequeños.",
    "Tres semillas: la degradación se da por medida cuando supera la variación entre semillas.",
]


# --- the model --------------------------------------------------------------------------------


def sinusoidal(length, d_model):
    angles = np.arange(length)[:, None] / 10000 ** (2 * (np.arange(d_model) // 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def targets_of(task, sequences):
    if task == "maximo_acumulado":
        return np.maximum.accumulate(sequences, axis=1)
    shifted = np.roll(sequences, 1, axis=1)
    shifted[:, 0] = sequences[:, 0]
    return shifted


def initial_weights(setup, rng):
    d, f, v = setup.d_model, setup.d_ff, setup.vocabulary
    weights = {"embeddings": rng.normal(0, 1, (v, d)),
               "W_out": rng.normal(0, 1 / np.sqrt(d), (d, v)), "b_out": np.zeros(v)}
    for b in range(setup.blocks):
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            weights[f"{b}.{name}"] = rng.normal(0, 1 / np.sqrt(d), (d, d))
        weights[f"{b}.W1"] = rng.normal(0, 1 / np.sqrt(d), (d, f))
        weights[f"{b}.b1"] = np.zeros(f)
        weights[f"{b}.W2"] = rng.normal(0, 1 / np.sqrt(f), (f, d))
        weights[f"{b}.b2"] = np.zeros(d)
    return weights


def _norm(z):
    std = np.sqrt(z.var(axis=-1, keepdims=True) + 1e-5)
    return (z - z.mean(axis=-1, keepdims=True)) / std, std


def _norm_backward(grad, normalized, std):
    return (grad - grad.mean(axis=-1, keepdims=True)
            - normalized * (grad * normalized).mean(axis=-1, keepdims=True)) / std


def _block_forward(setup, w, b, x, mask):
    Q, K, V = x @ w[f"{b}.W_Q"], x @ w[f"{b}.W_K"], x @ w[f"{b}.W_V"]
    factor = 1 / np.sqrt(K.shape[1]) if setup.scaled else 1.0
    scores = np.where(mask, Q @ K.T * factor, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    A = np.exp(scores)
    A /= A.sum(axis=1, keepdims=True)
    O = A @ V
    r = 1.0 if setup.residuals else 0.0
    x1, std1 = _norm(r * x + O @ w[f"{b}.W_O"])
    H = x1 @ w[f"{b}.W1"] + w[f"{b}.b1"]
    y, std2 = _norm(r * x1 + np.maximum(0, H) @ w[f"{b}.W2"] + w[f"{b}.b2"])
    return y, dict(x=x, Q=Q, K=K, V=V, A=A, O=O, x1=x1, std1=std1, H=H, y=y, std2=std2,
                   factor=factor, r=r)


def _block_backward(w, b, dy, c, g):
    dz2 = _norm_backward(dy, c["y"], c["std2"])
    g[f"{b}.W2"], g[f"{b}.b2"] = np.maximum(0, c["H"]).T @ dz2, dz2.sum(axis=0)
    dH = (dz2 @ w[f"{b}.W2"].T) * (c["H"] > 0)
    g[f"{b}.W1"], g[f"{b}.b1"] = c["x1"].T @ dH, dH.sum(axis=0)
    dz1 = _norm_backward(c["r"] * dz2 + dH @ w[f"{b}.W1"].T, c["x1"], c["std1"])
    g[f"{b}.W_O"] = c["O"].T @ dz1
    dO = dz1 @ w[f"{b}.W_O"].T
    dA = dO @ c["V"].T
    dS = c["A"] * (dA - (dA * c["A"]).sum(axis=1, keepdims=True)) * c["factor"]
    dQ, dK, dV = dS @ c["K"], dS.T @ c["Q"], c["A"].T @ dO
    x = c["x"]
    g[f"{b}.W_Q"], g[f"{b}.W_K"], g[f"{b}.W_V"] = x.T @ dQ, x.T @ dK, x.T @ dV
    return (c["r"] * dz1 + dQ @ w[f"{b}.W_Q"].T + dK @ w[f"{b}.W_K"].T
            + dV @ w[f"{b}.W_V"].T)


def loss_and_gradients(setup, w, sequences):
    """Mean cross-entropy of a batch, the gradient of every weight, the size of the gradient
    that reaches the first block's attention (W_Q and W_K), and that block's mean largest
    attention weight (1 for a saturated softmax)."""
    count, length = sequences.shape
    mask = np.kron(np.eye(count, dtype=bool), np.tril(np.ones((length, length), dtype=bool)))
    tokens = sequences.reshape(-1)
    x = w["embeddings"][tokens]
    if setup.positions:
        x = x + np.tile(sinusoidal(length, setup.d_model), (count, 1))
    caches = []
    for b in range(setup.blocks):
        x, cache = _block_forward(setup, w, b, x, mask)
        caches.append(cache)
    logits = x @ w["W_out"] + w["b_out"]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    targets = targets_of(setup.task, sequences).reshape(-1)
    rows = np.arange(len(targets))
    loss = -np.mean(np.log(p[rows, targets] + 1e-12))
    d_logits = p
    d_logits[rows, targets] -= 1
    d_logits /= len(targets)
    g = {"W_out": x.T @ d_logits, "b_out": d_logits.sum(axis=0)}
    dx = d_logits @ w["W_out"].T
    for b in reversed(range(setup.blocks)):
        dx = _block_backward(w, b, dx, caches[b], g)
    g["embeddings"] = np.zeros_like(w["embeddings"])
    np.add.at(g["embeddings"], tokens, dx)
    reaching = float(np.sqrt(np.sum(g["0.W_Q"] ** 2) + np.sum(g["0.W_K"] ** 2)))
    sharpest = float(caches[0]["A"].max(axis=1).mean())  # near 1: a saturated softmax
    return float(loss), g, reaching, sharpest


def train(setup, seed):
    """``{"loss": [per step], "gradient": [per step], "held_out_loss", "accuracy"}``: the same
    seed gives the same initial weights and batches whatever the pieces."""
    rng = np.random.default_rng(seed)
    w = initial_weights(setup, rng)
    velocity = {name: np.zeros_like(value) for name, value in w.items()}
    losses, gradients, sharpest = [], [], []
    for _ in range(setup.steps):
        batch = rng.integers(0, setup.vocabulary, (setup.batch, setup.length))
        loss, g, reaching, largest = loss_and_gradients(setup, w, batch)
        losses.append(loss)
        gradients.append(reaching)
        sharpest.append(largest)
        for name, grad in g.items():
            velocity[name] = setup.momentum * velocity[name] - setup.rate * grad
            w[name] += velocity[name]
    held_out = np.random.default_rng(10_000 + seed).integers(
        0, setup.vocabulary, (200, setup.length))
    loss = loss_and_gradients(setup, w, held_out)[0]
    return {"loss": losses, "gradient": gradients, "max_weight": sharpest, "held_out_loss": loss,
            "accuracy": _accuracy(setup, w, held_out)}


def _accuracy(setup, w, sequences):
    count, length = sequences.shape
    mask = np.kron(np.eye(count, dtype=bool), np.tril(np.ones((length, length), dtype=bool)))
    x = w["embeddings"][sequences.reshape(-1)]
    if setup.positions:
        x = x + np.tile(sinusoidal(length, setup.d_model), (count, 1))
    for b in range(setup.blocks):
        x, _ = _block_forward(setup, w, b, x, mask)
    predicted = np.argmax(x @ w["W_out"] + w["b_out"], axis=1)
    return float(np.mean(predicted == targets_of(setup.task, sequences).reshape(-1)))


# --- the ablations ------------------------------------------------------------------------------


def _round(value):
    return float(f"{value:.4g}")


def run(seeds=DEFAULT_SEEDS):
    """The evidence of every ablation, and the curves for the figure."""
    evidence, curves = [], {}
    for ablation_id, fact, baseline, change in ABLATIONS:
        without = replace(baseline, **change)
        runs = {"con": [train(baseline, s) for s in seeds],
                "sin": [train(without, s) for s in seeds]}
        curves[ablation_id] = runs
        loss = {k: [r["held_out_loss"] for r in v] for k, v in runs.items()}
        accuracy = {k: [r["accuracy"] for r in v] for k, v in runs.items()}
        # The gradient reaching the first block's attention, averaged over the first tenth of
        # training, when the pieces matter most.
        early = max(1, baseline.steps // 10)
        gradient = {k: [float(np.mean(r["gradient"][:early])) for r in v] for k, v in runs.items()}
        sharpest = {k: [r["max_weight"][0] for r in v] for k, v in runs.items()}
        # Measurable: every seed is worse without the piece, and the gap between the means is
        # larger than the spread of the baseline over seeds.
        gap = np.mean(loss["sin"]) - np.mean(loss["con"])
        spread = np.ptp(loss["con"]) + np.ptp(loss["sin"])
        holds = bool(min(loss["sin"]) > max(loss["con"]) or gap > spread)
        if not baseline.scaled == without.scaled:  # the fact also says the softmax saturates
            holds = holds and min(sharpest["sin"]) > max(sharpest["con"])
        evidence.append({
            "id": ablation_id, "fact": fact, "holds": holds,
            "values": {
                "held_out_loss_with": [_round(v) for v in loss["con"]],
                "held_out_loss_without": [_round(v) for v in loss["sin"]],
                "accuracy_with": [_round(v) for v in accuracy["con"]],
                "accuracy_without": [_round(v) for v in accuracy["sin"]],
                "early_gradient_with": [_round(v) for v in gradient["con"]],
                "early_gradient_without": [_round(v) for v in gradient["sin"]],
                "initial_max_weight_with": [_round(v) for v in sharpest["con"]],
                "initial_max_weight_without": [_round(v) for v in sharpest["sin"]],
            }})
    return {"kind": KIND, "seeds": list(seeds), "evidence": evidence,
            "limitations": LIMITATIONS}, curves


TITLES = {"sin_escala_raiz_dk": "Sin dividir por √d_k (d_k = 64)",
          "sin_codificacion_posicional": "Sin codificación posicional",
          "sin_residuales": "Sin residuales (dos bloques)"}


def figure(curves, path):
    """Loss and gradient curves of every ablation, with and without its piece."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(curves), figsize=(5 * len(curves), 7))
    for column, (ablation_id, runs) in enumerate(curves.items()):
        for key, color in (("con", "#1f5fa8"), ("sin", "#c0392b")):
            for number, run_ in enumerate(runs[key]):
                label = f"{key} la pieza" if number == 0 else None
                axes[0, column].plot(run_["loss"], color=color, alpha=0.7, label=label)
                axes[1, column].semilogy(np.maximum(run_["gradient"], 1e-12), color=color,
                                         alpha=0.7, label=label)
        axes[0, column].set_title(TITLES.get(ablation_id, ablation_id))
        axes[0, column].set_ylabel("pérdida (entropía cruzada)")
        axes[1, column].set_ylabel("gradiente en W_Q y W_K del primer bloque")
        axes[1, column].set_xlabel("paso de entrenamiento")
        axes[0, column].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


USAGE = "uso: python ablacion.py [--figura CURVAS.png] [--semillas 0,1,2]"
OPTIONS = ("--figura", "--semillas")


def _parse_args(argv):
    """A hand-written parser: argparse would answer in English («usage:», «expected one argument»)."""
    args = {"--figura": None, "--semillas": ",".join(map(str, DEFAULT_SEEDS))}
    pending = list(argv)
    while pending:
        option = pending.pop(0)
        if option in ("-h", "--help"):
            return None
        name, _, value = option.partition("=")
        if name not in OPTIONS:
            raise ValueError(f"no entiendo «{option}»; usa --figura o --semillas")
        if not value:
            if not pending:
                raise ValueError(f"falta el valor de {name}")
            value = pending.pop(0)
        args[name] = value
    try:
        seeds = tuple(int(s) for s in args["--semillas"].split(",") if s.strip())
    except ValueError:
        raise ValueError("--semillas son números enteros separados por comas") from None
    return args["--figura"], seeds or DEFAULT_SEEDS


def main(argv=None):
    try:
        parsed = _parse_args(sys.argv[1:] if argv is None else argv)
    except ValueError as problem:
        print(f"{USAGE}\nablacion.py: {problem}", file=sys.stderr)
        return 2
    if parsed is None:
        print(f"{USAGE}\n\nEntrena el modelo diminuto con y sin √d_k, la codificación posicional "
              "y las residuales, e imprime la evidencia en JSON.")
        return 0
    figure_path, seeds = parsed
    result, curves = run(seeds)
    if figure_path:
        figure(curves, figure_path)
    sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
