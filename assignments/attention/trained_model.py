"""The trained toy Transformer of the notebook's last step: its task, its training, its file.

The task is the running maximum: the model reads a sequence of digits and writes, at each
position, the largest digit seen so far (2 0 3 1 5 4 8 6 -> 2 2 3 3 5 5 8 8). Its learned
attention is visible and depends on the content: each position attends to the largest digit
before it. Unlike reversal or a shifted copy, whose attention is a permutation, many queries
attend to the same key, so a softmax over the wrong axis or a mask applied after it breaks the
model, and a student's buggy ``attention`` shows in its accuracy. A softmax that is merely
sharper or softer than it should be (no √d_k) does not: the trained heads are almost hard.

Its architecture is exactly the notebook's, so that a student's own functions can run it:
token embeddings plus ``positional_encoding``, one post-LN ``transformer_block`` with the
causal mask (a position may read only the digits up to itself), then a projection to the
vocabulary. The batched forward pass below calls the reference's ``attention``, ``layer_norm``
and ``positional_encoding`` and keeps what the backward pass needs; the backward pass is written
by hand. Tests hold the first to the reference's ``transformer_block``, one sequence at a time,
and the second to finite differences of it.

``write_trained_model(folder)`` is what the build calls: it trains (deterministically, about two
seconds on two cores), checks that the reference functions get every digit of a held-out set
right, one sequence at a time as the notebook runs them, and writes ``modelo_entrenado.npz`` into
``folder``. The file holds the model's arrays and nothing else: no code, no pickle, no output
of the reference.
"""

import functools
import inspect
import io
import zipfile
from pathlib import Path

import numpy as np

from reference import attention as reference

WEIGHTS_FILE = "modelo_entrenado.npz"

# The task: sequences of LENGTH digits, and at each position the largest digit so far.
VOCABULARY = 10
LENGTH = 8


def running_maximum(sequences):
    """The task's answer: at each position, the largest digit up to it."""
    return np.maximum.accumulate(sequences, axis=-1)


def causal_mask(n):
    """The notebook's causal mask: token i may attend to tokens 0..i."""
    return np.tril(np.ones((n, n), dtype=bool))


# The model: small enough to train in seconds, large enough that both heads have room.
D_MODEL = 16
N_HEADS = 2
D_FF = 32

# Training: Adam on fresh random sequences at every step, so the model never sees a fixed
# training set it could memorise.
SEED = 55
STEPS = 1000
BATCH = 16
LEARNING_RATE = 2e-2
WARMUP = 50
ADAM_BETAS = (0.9, 0.98)  # Vaswani et al.'s
ADAM_EPS = 1e-9

# The build's own check, on the test set of the notebook's last step (a test keeps the two
# equal): the step tells students that the reference functions get every digit of it right.
HELD_OUT_SEED = 2017
HELD_OUT_SEQUENCES = 200

# The LayerNorm of the notebook's block is the given one; its gradient needs the same epsilon.
_LAYER_NORM_EPS = inspect.signature(reference.layer_norm).parameters["eps"].default

# The file's arrays, in the notebook's names. The heads are stacked: W_Q[h] is head h's.
SHAPES = {
    "embeddings": (VOCABULARY, D_MODEL),
    "W_Q": (N_HEADS, D_MODEL, D_MODEL // N_HEADS),
    "W_K": (N_HEADS, D_MODEL, D_MODEL // N_HEADS),
    "W_V": (N_HEADS, D_MODEL, D_MODEL // N_HEADS),
    "W_O": (D_MODEL, D_MODEL),
    "W1": (D_MODEL, D_FF),
    "b1": (D_FF,),
    "W2": (D_FF, D_MODEL),
    "b2": (D_MODEL,),
    "W_salida": (D_MODEL, VOCABULARY),
    "b_salida": (VOCABULARY,),
}
# The sequence length the model was trained for: part of what the model is, like its sizes.
LENGTH_KEY = "longitud"


def initial_weights(rng):
    """Random weights with the scales of ``init_multihead`` (1/sqrt(fan-in)); zero biases."""
    weights = {}
    for name, shape in SHAPES.items():
        if name.startswith("b"):
            weights[name] = np.zeros(shape)
        elif name == "embeddings":
            # Of the same order as the positional encoding's entries, so neither drowns the other.
            weights[name] = rng.normal(0, 1, shape)
        else:
            weights[name] = rng.normal(0, 1 / np.sqrt(shape[-2]), shape)
    return weights


def heads_of(weights):
    """The notebook's list of ``(W_Q, W_K, W_V)`` tuples, one per head."""
    return list(zip(weights["W_Q"], weights["W_K"], weights["W_V"]))


def predict(weights, sequence):
    """The model's digits for one sequence, with the reference functions, as the notebook runs it."""
    x = weights["embeddings"][sequence] + reference.positional_encoding(len(sequence), D_MODEL)[0]
    y = reference.transformer_block(x, heads_of(weights), weights["W_O"], weights["W1"],
                                    weights["b1"], weights["W2"], weights["b2"],
                                    causal_mask(len(sequence)))
    return np.argmax(y @ weights["W_salida"] + weights["b_salida"], axis=1)


def accuracy(weights, sequences):
    """The fraction of digits the model gets right."""
    return float(np.mean([predict(weights, s) == running_maximum(s) for s in sequences]))


def random_sequences(rng, count):
    return rng.integers(0, VOCABULARY, size=(count, LENGTH))


# --- the batch as one sequence ---------------------------------------------------------------
#
# The notebook's functions take one 2-D sequence. A batch of B sequences is stacked into one of
# B * LENGTH rows, with a block-diagonal mask whose blocks are the causal mask: each token
# attends only to the earlier tokens of its own sequence. The attention is then exactly the
# batch's, one sequence at a time, and the reference runs a whole batch in one call.


@functools.cache
def _batch_mask(batch):
    return np.kron(np.eye(batch, dtype=bool), causal_mask(LENGTH))


def _layer_norm_backward(grad, normalized, std):
    """d loss / d input of a LayerNorm without gain or bias, from its output and each row's std."""
    return (grad - grad.mean(axis=-1, keepdims=True)
            - normalized * (grad * normalized).mean(axis=-1, keepdims=True)) / std


def _std(z):
    return np.sqrt(z.var(axis=-1, keepdims=True) + _LAYER_NORM_EPS)


def _forward(weights, batch):
    """The logits of a batch of sequences, with what the backward pass needs on the way."""
    n_sequences = len(batch)
    tokens = batch.reshape(-1)
    mask = _batch_mask(n_sequences)
    pe = reference.positional_encoding(LENGTH, D_MODEL)[0]
    x0 = weights["embeddings"][tokens] + np.tile(pe, (n_sequences, 1))
    projections = [(x0 @ W_Q, x0 @ W_K, x0 @ W_V) for W_Q, W_K, W_V in heads_of(weights)]
    attended = [reference.attention(Q, K, V, mask) for Q, K, V in projections]
    concatenated = np.hstack([output for output, _ in attended])
    z1 = x0 + concatenated @ weights["W_O"]
    x1 = reference.layer_norm(z1)
    hidden = x1 @ weights["W1"] + weights["b1"]
    z2 = x1 + np.maximum(0, hidden) @ weights["W2"] + weights["b2"]
    y = reference.layer_norm(z2)
    logits = y @ weights["W_salida"] + weights["b_salida"]
    cache = dict(tokens=tokens, x0=x0, projections=projections, attended=attended,
                 concatenated=concatenated, z1=z1, x1=x1, hidden=hidden, z2=z2, y=y)
    return logits, cache


def cross_entropy(logits, targets):
    """The mean cross-entropy of the logits, one row per token, and the softmax it came from."""
    probabilities = reference.softmax(logits)
    rows = np.arange(len(targets))
    return -np.mean(np.log(probabilities[rows, targets])), probabilities


def loss_and_gradients(weights, batch):
    """The batch's mean cross-entropy and its gradient for every array of ``weights``."""
    logits, c = _forward(weights, batch)
    targets = running_maximum(batch).reshape(-1)
    loss, probabilities = cross_entropy(logits, targets)
    g = {}

    d_logits = probabilities
    d_logits[np.arange(len(targets)), targets] -= 1
    d_logits /= len(targets)
    g["W_salida"], g["b_salida"] = c["y"].T @ d_logits, d_logits.sum(axis=0)

    # Second sublayer: y = LayerNorm(x1 + FFN(x1)).
    d_z2 = _layer_norm_backward(d_logits @ weights["W_salida"].T, c["y"], _std(c["z2"]))
    active = np.maximum(0, c["hidden"])
    g["W2"], g["b2"] = active.T @ d_z2, d_z2.sum(axis=0)
    d_hidden = (d_z2 @ weights["W2"].T) * (c["hidden"] > 0)
    g["W1"], g["b1"] = c["x1"].T @ d_hidden, d_hidden.sum(axis=0)
    d_x1 = d_z2 + d_hidden @ weights["W1"].T  # the residual path and the FFN's

    # First sublayer: x1 = LayerNorm(x0 + MultiHead(x0)).
    d_z1 = _layer_norm_backward(d_x1, c["x1"], _std(c["z1"]))
    g["W_O"] = c["concatenated"].T @ d_z1
    d_concatenated = d_z1 @ weights["W_O"].T
    d_x0 = d_z1.copy()
    grads = {name: [] for name in ("W_Q", "W_K", "W_V")}
    column = 0
    for (W_Q, W_K, W_V), (Q, K, V), (_, A) in zip(heads_of(weights), c["projections"],
                                                   c["attended"]):
        d_out = d_concatenated[:, column:column + V.shape[1]]
        column += V.shape[1]
        d_Q, d_K, d_V = _attention_backward(d_out, Q, K, V, A)
        for name, W, d in (("W_Q", W_Q, d_Q), ("W_K", W_K, d_K), ("W_V", W_V, d_V)):
            grads[name].append(c["x0"].T @ d)
            d_x0 += d @ W.T
    g.update({name: np.stack(stack) for name, stack in grads.items()})

    # A token's embedding gets the gradient of every position where it appears.
    g["embeddings"] = np.zeros_like(weights["embeddings"])
    np.add.at(g["embeddings"], c["tokens"], d_x0)
    return loss, g


def _attention_backward(d_out, Q, K, V, A):
    """Gradients of ``A @ V`` with ``A = softmax(Q K^T / sqrt(d_k))`` for Q, K and V.

    A masked key has weight exactly 0 in ``A``, so it gets no gradient, as it should."""
    d_A = d_out @ V.T
    # The softmax's Jacobian, row by row: dS = A * (dA - sum_j dA_j A_j).
    d_scores = A * (d_A - (d_A * A).sum(axis=-1, keepdims=True)) / np.sqrt(K.shape[1])
    return d_scores @ K, d_scores.T @ Q, A.T @ d_out


def train():
    """Trained weights and the loss of each step. Deterministic: the seed fixes everything."""
    rng = np.random.default_rng(SEED)
    weights = initial_weights(rng)
    moments = {name: (np.zeros_like(w), np.zeros_like(w)) for name, w in weights.items()}
    beta1, beta2 = ADAM_BETAS
    losses = []
    for step in range(1, STEPS + 1):
        loss, grads = loss_and_gradients(weights, random_sequences(rng, BATCH))
        losses.append(loss)
        # A short warm-up, then a cosine decay to zero: the last steps settle the weights.
        rate = LEARNING_RATE * min(1, step / WARMUP) * 0.5 * (1 + np.cos(np.pi * step / STEPS))
        for name, grad in grads.items():
            m, v = moments[name]
            m[...] = beta1 * m + (1 - beta1) * grad
            v[...] = beta2 * v + (1 - beta2) * grad ** 2
            m_hat, v_hat = m / (1 - beta1 ** step), v / (1 - beta2 ** step)
            weights[name] -= rate * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
    return weights, losses


def held_out_sequences():
    return random_sequences(np.random.default_rng(HELD_OUT_SEED), HELD_OUT_SEQUENCES)


def weights_file_bytes(weights):
    """The ``.npz`` of ``weights`` (plus the trained length), byte for byte the same every build.

    ``np.savez`` stamps each member with the time; this writes the same zip of ``.npy`` files
    with a fixed date, so building twice gives the same file."""
    arrays = {**{name: np.asarray(weights[name], dtype=np.float64) for name in SHAPES},
              LENGTH_KEY: np.array(LENGTH)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(member, "w") as f:
                np.lib.format.write_array(f, array, allow_pickle=False)
    return buffer.getvalue()


@functools.cache
def trained_model_bytes():
    """The weights file's bytes, trained once per process however many folders get it."""
    weights, _ = train()
    right = accuracy(weights, held_out_sequences())
    if right < 1:
        raise RuntimeError(f"the trained model gets only {right:.2%} of the held-out digits "
                           "right; the notebook's last step expects all of them")
    return weights_file_bytes(weights)


def write_trained_model(folder):
    """Write ``modelo_entrenado.npz`` into ``folder`` (created if needed) and return its path."""
    path = Path(folder) / WEIGHTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(trained_model_bytes())
    return path


def load(path):
    """The arrays of a weights file, read without pickles."""
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}
