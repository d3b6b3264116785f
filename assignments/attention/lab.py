"""Lab of lesson 055: evidence about the attention that *you* wrote, as a JSON contract.

    python lab.py [--seed N] [--notebook RUTA]

This file holds the lesson's experiments only; the course's shared runner (``lab_runner.py``)
finds the student's notebook, gets their four functions as *Restart & Run All* defines them
(or the kernel's own, inside the notebook), runs these experiments and prints one JSON object:
``kind``, ``seed``, ``inputs``, ``result``, ``evidence`` and ``limitations``. The lab holds no
solution: every number in ``evidence`` comes out of the student's code. Each fact names the
functions it needs, so a function that is not done yet costs only the facts that use it.

``result.ablacion`` is the one part that is not the student's: what ``ablacion.py`` measures with
its default seeds on the kit's own tiny model (issue 33), so that a challenge can cite how much
√d_k, the positions and the residuals matter. It is a copy, carried in this file (``ABLATION``):
training takes most of a minute and the grader reruns this lab for every submission, and a copy
read from another file would make this lab print other evidence in a folder without it.
"""

import copy
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
try:
    import lab_runner
except ModuleNotFoundError as exc:  # run by path from another folder: the runner sits beside
    if exc.name != "lab_runner" or not (_HERE / "lab_runner.py").is_file():
        sys.exit("lab.py: falta lab_runner.py junto a lab.py; cópialo de la carpeta de la clase.")
    sys.path.insert(0, str(_HERE))
    import lab_runner

from lab_runner import LabError, call, expect_shape, fact, max_abs, measurement, spanish, sum_abs

np = lab_runner.np

KIND = "attention"
DEFAULT_SEED = 55
GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")

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

LIMITATIONS = (
    "No es producción: NumPy en CPU con float64, sin lotes (batch), sin tokenización, sin "
    "entrenamiento, sin KV-cache, sin atención eficiente ni cuantización, y sin las pruebas "
    "de seguridad, observabilidad y operación que exige un sistema real.",
    "Los parámetros W_Q, W_K, W_V, W_O, W1 y W2 son aleatorios y no están entrenados: los patrones "
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
    "Los números de result.ablacion no salen de tus funciones: son los que mide ablacion.py con "
    "sus semillas por defecto en el modelo diminuto del kit, medidos al preparar la clase "
    "(«python ablacion.py» los vuelve a medir en menos de un minuto, y da los mismos en "
    "cualquier ordenador). Sus propias limitaciones van con ellos, en "
    "result.ablacion.limitations.",
)

# What each key of the evidence's values means, as the notebook's summary shows it.
GLOSSES = {
    "max_abs_row_sum_error": "mayor error en la suma de una fila de pesos",
    "total_future_weight": "peso total sobre tokens futuros",
    "max_future_weight": "mayor peso sobre un token futuro",
    "non_finite_weights": "pesos que no son números finitos",
    "d_k": "dimensiones d_k probadas",
    "n_queries": "consultas por cada d_k",
    "scores_std": "desviación típica de las puntuaciones sin escalar, por d_k",
    "max_weight_unscaled": "mayor peso medio sin escalar, por d_k",
    "max_weight_scaled": "mayor peso medio escalando por √d_k, por d_k",
    "max_abs_weight_difference": "mayor diferencia entre los dos pesos",
    "max_rotation_error": "mayor diferencia entre PE(pos + k) y R_k·PE(pos)",
    "max_abs_difference": "mayor diferencia entre las salidas",
    "max_abs_token_mean": "mayor media (en valor absoluto) de un token de salida",
    "max_abs_variance_error": "mayor distancia entre la varianza de un token y 1",
    "max_abs_change_before_last": "mayor cambio en los tokens anteriores al último",
    "worked_example": "ejemplo resuelto del paso 3 del cuaderno: los pesos y la salida de sus dos tokens",
    "ablacion": "laboratorio de ablación: el modelo diminuto del kit entrenado con y sin cada "
                "pieza, no tus funciones (lo que imprime python ablacion.py)",
    "held_out_loss_with": "pérdida en secuencias nuevas con la pieza, por semilla",
    "held_out_loss_without": "pérdida en secuencias nuevas sin la pieza, por semilla",
    "held_out_loss_median_with": "mediana de la pérdida en secuencias nuevas con la pieza",
    "held_out_loss_median_without": "mediana de la pérdida en secuencias nuevas sin la pieza",
    "accuracy_with": "exactitud con la pieza, por semilla",
    "accuracy_without": "exactitud sin la pieza, por semilla",
    "early_gradient_with": "gradiente que llega a W_Q y W_K en los 15 primeros pasos, con la pieza",
    "early_gradient_without": "gradiente que llega a W_Q y W_K en los 15 primeros pasos, sin la pieza",
    "initial_max_weight_with": "mayor peso medio de la atención antes de entrenar, con la pieza",
    "initial_max_weight_without": "mayor peso medio de la atención antes de entrenar, sin la pieza",
    "chaotic_seeds_with": "semillas cuya pérdida final cambia al empujar los parámetros "
                          "iniciales 10⁻¹², con la pieza",
    "chaotic_seeds_without": "semillas cuya pérdida final cambia al empujar los parámetros "
                             "iniciales 10⁻¹², sin la pieza",
}

# What `python ablacion.py` prints with its default seeds, the lab's result.ablacion. ablacion.py
# trains the kit's own tiny model and never calls the student's functions, so these numbers are
# the lesson's: measured once and carried here, every folder's lab.py and the grader's fresh run
# of it print them without training anything. ablacion.py prints only what survives a 1e-12
# nudge and a second BLAS thread, so any machine prints this; tests/test_ablation.py holds this
# copy to a fresh run of ablacion.py and, when they differ, prints the copy to paste here.
ABLATION = {
    "kind": "transformer_attention_ablation",
    "seeds": [0, 1, 2, 3, 4, 5, 6, 7],
    "evidence": [
        {
            "id": "sin_escala_raiz_dk",
            "fact": "Sin dividir por √d_k, con d_k = 64: la softmax empieza más afilada (su mayor peso medio antes de entrenar es mayor) y el gradiente que llega a W_Q y W_K en los primeros pasos es mayor, no menor, en todas las semillas. Con la misma tasa de aprendizaje, ese paso efectivo mayor vuelve caótico el entrenamiento: en todas las semillas, empujar los parámetros iniciales una billonésima (10⁻¹²) cambia la pérdida final, y con la escala en ninguna; y la pérdida mediana en secuencias nuevas acaba más del doble de alta.",
            "holds": True,
            "values": {
                "initial_max_weight_with": [0.592, 0.5639, 0.5505, 0.6334, 0.5598, 0.5746, 0.5701, 0.4838],
                "initial_max_weight_without": [0.9293, 0.8908, 0.9038, 0.9244, 0.9017, 0.9204, 0.8985, 0.8581],
                "early_gradient_with": [0.3608, 0.2093, 0.3804, 0.2945, 0.3525, 0.3477, 0.2836, 0.2883],
                "early_gradient_without": [0.883, 0.6119, 0.8271, 0.776, 0.9652, 0.9631, 0.6617, 0.8783],
                "chaotic_seeds_with": 0,
                "chaotic_seeds_without": 8,
                "held_out_loss_with": [0.022, 0.02148, 0.01679, 0.01947, 0.02224, 0.01798, 0.03418, 0.02049],
                "held_out_loss_median_with": 0.02098,
                "accuracy_with": [0.9969, 0.9994, 1.0, 0.9981, 0.9988, 1.0, 0.995, 0.9994],
            },
        },
        {
            "id": "sin_codificacion_posicional",
            "fact": "Sin codificación posicional, la copia desplazada (escribir en t el token de t − 1) se aprende mucho peor: la pérdida en secuencias nuevas es mayor en todas las semillas. Aun así, la exactitud supera el 10 % del azar, gracias a la máscara causal: la posición 0 solo ve su propio token y la 1 solo ve otro, el anterior; a partir de la 2, el modelo no sabe cuál de los tokens que ve es el anterior.",
            "holds": True,
            "values": {
                "held_out_loss_with": [0.06374, 0.1215, 0.0954, 0.09809, 0.1361, 0.1218, 0.1396, 0.1455],
                "held_out_loss_without": [1.164, 1.186, 1.139, 1.164, 1.173, 1.155, 1.167, 1.192],
                "held_out_loss_median_with": 0.1217,
                "held_out_loss_median_without": 1.165,
                "accuracy_with": [0.9975, 0.9806, 0.9906, 0.9875, 0.9812, 0.9862, 0.98, 0.9831],
                "accuracy_without": [0.5281, 0.5294, 0.5563, 0.5381, 0.5431, 0.5531, 0.5363, 0.5275],
            },
        },
        {
            "id": "sin_residuales",
            "fact": "Sin conexiones residuales, una pila de dos bloques aprende peor la copia desplazada: la pérdida mediana en secuencias nuevas es mayor, y la exactitud es menor en todas las semillas.",
            "holds": True,
            "values": {
                "held_out_loss_with": [0.07745, 0.1447, 0.1031, 0.1097, 0.1586, 0.1048, 0.1375, 0.2249],
                "held_out_loss_without": [0.2262, 0.3219, 0.2482, 0.1902, 0.2346, 0.2795, 0.1597, 0.1901],
                "held_out_loss_median_with": 0.1236,
                "held_out_loss_median_without": 0.2304,
                "accuracy_with": [0.995, 0.9775, 0.9894, 0.985, 0.9744, 0.985, 0.9794, 0.9631],
                "accuracy_without": [0.9425, 0.9056, 0.9131, 0.9431, 0.9294, 0.915, 0.9537, 0.9487],
            },
        },
    ],
    "limitations": [
        "Un modelo diminuto (1 o 2 bloques, una cabeza) y tareas de juguete: las diferencias muestran el mecanismo, no su tamaño en un modelo real.",
        "Se entrena con SGD con momento, una tasa de aprendizaje (0,01) y pocos pasos (150): con Adam, con otra tasa o con más pasos algunas diferencias cambian de tamaño. Sin √d_k y con una tasa tres veces mayor (0,03), la pérdida mediana sube todavía más: lo que falla es un paso demasiado grande.",
        "Sin √d_k el entrenamiento es caótico: sus pérdidas semilla a semilla no se imprimen porque ninguna de sus cifras es estable (un empujón de 10⁻¹² las mueve entre 0,08 y 0,8); solo se imprime lo que no cambia con ese empujón ni con el número de hilos.",
        "Ocho semillas: cada hecho compara todas ellas, o sus medianas, con un margen que ningún empujón de 10⁻¹² ha cruzado; no es una prueba estadística.",
    ],
}


class Experiments:
    """The experiments. Every random draw happens here, in a fixed order, from one generator,
    so a fact that cannot be measured never changes the numbers of the others."""

    def __init__(self, functions: dict, rng):
        self.f = functions
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
        self._saturation = None

    # -- attention ---------------------------------------------------------------------

    def _attend(self, Q, K, V, mask=None):
        out, weights = call(self.f, "attention", ("la salida", "los pesos"), Q, K, V, mask)
        expect_shape("attention", "la salida", out, (Q.shape[0], V.shape[1]))
        expect_shape("attention", "los pesos", weights, (Q.shape[0], K.shape[0]))
        return out, weights

    def _projections(self):
        return self.X @ self.W_Q, self.X @ self.W_K, self.X @ self.W_V

    @fact("rows_sum_to_one", "Cada fila de pesos de la autoatención suma 1.", needs=["attention"])
    def rows_sum_to_one(self):
        _, weights = self._attend(*self._projections())
        error = max_abs(weights.sum(axis=1) - 1)
        return error <= TOLERANCES["row_sum"], dict(max_abs_row_sum_error=error)

    @fact("causal_mask_future_weight",
          "Con la máscara causal, ningún token da peso a los tokens futuros.", needs=["attention"])
    def causal_mask(self):
        _, weights = self._attend(*self._projections(), mask=self.causal)
        future = weights[~self.causal]
        return (max_abs(future) <= TOLERANCES["zero_weight"],
                dict(total_future_weight=sum_abs(future), max_future_weight=max_abs(future)))

    @fact("large_scores_stay_finite",
          f"Con puntuaciones de magnitud {LARGE_SCORE:g}, los pesos siguen siendo números "
          "finitos y cada fila suma 1.", needs=["attention"])
    def large_scores(self):
        Q, K, V = self._projections()
        # Scores around 1e3: exp() overflows unless the softmax subtracts each row's maximum.
        Q = Q * LARGE_SCORE / max(max_abs(Q @ K.T / np.sqrt(K.shape[1])), 1e-12)
        _, weights = self._attend(Q, K, V)
        non_finite = int((~np.isfinite(weights)).sum())
        error = max_abs(weights.sum(axis=1) - 1)  # NaN when some weight is NaN; printed as null
        return (non_finite == 0 and error <= TOLERANCES["row_sum"],
                dict(non_finite_weights=non_finite, max_abs_row_sum_error=error))

    def saturation(self):
        """One experiment, two facts: saturation without scaling, and what scaling does."""
        if self._saturation is None:
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
            self._saturation = grows, never_sharper, values
        return self._saturation

    @fact("softmax_saturation",
          f"Sin escalar, el mayor peso de una consulta crece hacia 1 al aumentar d_k: su media "
          f"sobre {SATURATION_QUERIES} consultas aumenta con d_k y llega al menos a "
          f"{spanish(SATURATED_WEIGHT)} con d_k = {SATURATION_D_K[-1]}.", needs=["attention"])
    def softmax_saturation(self):
        grows, _, values = self.saturation()
        return grows, values

    @fact("scaling_never_sharpens",
          "Escalando por √d_k, el mayor peso de cada consulta nunca es mayor que sin escalar.",
          needs=["attention"])
    def scaling_never_sharpens(self):
        _, never_sharper, values = self.saturation()
        return never_sharper, values

    @fact("scaling_by_sqrt_dk",
          "Duplicar d_k repitiendo las columnas de Q y K equivale a multiplicar Q por √2, "
          "como ocurre cuando las puntuaciones se dividen por √d_k.", needs=["attention"])
    def scaling_by_sqrt_dk(self):
        Q, K, V = self._projections()
        # Repeating the columns of Q and K doubles d_k and doubles Q·Kᵀ. Dividing by √d_k turns
        # that into a factor √2, the same as multiplying Q alone by √2.
        doubled = self._attend(np.hstack([Q, Q]), np.hstack([K, K]), V)[1]
        times_sqrt2 = self._attend(Q * np.sqrt(2), K, V)[1]
        error = max_abs(doubled - times_sqrt2)
        return error <= TOLERANCES["same_output"], dict(max_abs_weight_difference=error)

    # -- positional encoding -----------------------------------------------------------

    def _pe(self, n_positions, d_model):
        pe, omega = call(self.f, "positional_encoding", ("pe", "omega"), n_positions, d_model)
        expect_shape("positional_encoding", "pe", pe, (n_positions, d_model))
        expect_shape("positional_encoding", "omega", omega, ((d_model + 1) // 2,))
        return pe, omega

    @fact("pe_rotation", f"PE(pos + {PE_SHIFT}) es una rotación de PE(pos), la misma en todas "
          "las posiciones.", needs=["positional_encoding"])
    def pe_rotation(self):
        pe, omega = self._pe(PE_POSITIONS, PE_D_MODEL)
        k = PE_SHIFT
        R = np.zeros((PE_D_MODEL, PE_D_MODEL))
        for i, w in enumerate(omega):  # block-diagonal 2x2 rotations, one per frequency
            R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(k * w), np.sin(k * w)], [-np.sin(k * w), np.cos(k * w)]]
        error = max_abs(pe[k:] - pe[:-k] @ R.T)
        return error <= TOLERANCES["rotation"], dict(max_rotation_error=error)

    # -- multi-head and permutations ---------------------------------------------------

    def _multihead(self, X, mask=None):
        out = call(self.f, "multihead", ("la salida",), X, self.heads, self.W_O, mask)
        expect_shape("multihead", "la salida", out, X.shape)
        return out

    @fact("permutation_equivariance_without_pe",
          "Sin codificación posicional, barajar los tokens solo baraja las salidas.",
          needs=["multihead", "attention"])
    def permutation_without_pe(self):
        difference = max_abs(self._multihead(self.X)[self.perm] - self._multihead(self.X[self.perm]))
        return difference <= TOLERANCES["same_output"], dict(max_abs_difference=difference)

    @fact("permutation_equivariance_lost_with_pe",
          "Con codificación posicional, barajar los tokens cambia las salidas: el orden cuenta.",
          needs=["multihead", "attention", "positional_encoding"])
    def permutation_with_pe(self):
        pe = self._pe(len(SENTENCE), D_MODEL)[0]
        shuffled = self._multihead(self.X[self.perm] + pe)
        difference = max_abs(self._multihead(self.X + pe)[self.perm] - shuffled)
        return difference > TOLERANCES["different_output"], dict(max_abs_difference=difference)

    # -- the block ---------------------------------------------------------------------

    def _block(self, x):
        out = call(self.f, "transformer_block", ("la salida",), x, self.heads, self.W_O, self.W1,
                   self.b1, self.W2, self.b2, self.causal)
        expect_shape("transformer_block", "la salida", out, x.shape)
        return out

    def _block_input(self):
        return self.X + self._pe(len(SENTENCE), D_MODEL)[0]

    @fact("block_output_normalized",
          "Tras la última normalización de capa, cada token de salida tiene media 0 y varianza 1.",
          needs=["transformer_block", "multihead", "attention", "positional_encoding"])
    def block_normalized(self):
        y = self._block(self._block_input())
        mean, variance = max_abs(y.mean(axis=1)), max_abs(y.var(axis=1) - 1)
        return (mean <= TOLERANCES["row_sum"] and variance <= TOLERANCES["unit_variance"],
                dict(max_abs_token_mean=mean, max_abs_variance_error=variance))

    @fact("block_causal",
          "Con la máscara causal, cambiar el último token no cambia la salida de los anteriores.",
          needs=["transformer_block", "multihead", "attention", "positional_encoding"])
    def block_causal(self):
        x = self._block_input()
        changed = x.copy()
        changed[-1] += 1.0
        difference = max_abs(self._block(x)[:-1] - self._block(changed)[:-1])
        return difference <= TOLERANCES["zero_weight"], dict(max_abs_change_before_last=difference)

    # -- seed 003's worked example -----------------------------------------------------

    @measurement("worked_example", needs=["attention"])
    def worked_example(self):
        Q, K, V = (np.array(m) for m in (WORKED_Q, WORKED_K, WORKED_V))
        output, weights = self._attend(Q, K, V)
        causal_output, _ = self._attend(Q, K, V, mask=np.tril(np.ones((2, 2), dtype=bool)))
        return {
            "weights": weights.tolist(),
            "output": output.tolist(),
            "causal_output_first_row": causal_output[0].tolist(),
        }

    # -- the ablation lab's evidence, the lesson's and not the student's -----------------

    @measurement("ablacion", needs=[])
    def ablation(self):
        return copy.deepcopy(ABLATION)


LAB = lab_runner.Lab(
    kind=KIND, default_seed=DEFAULT_SEED, functions=GRADED, experiments=Experiments,
    inputs={
        "sentence": SENTENCE,
        "d_model": D_MODEL,
        "n_heads": N_HEADS,
        "d_ff": D_FF,
        "saturation": {"d_k": list(SATURATION_D_K), "n_keys": SATURATION_KEYS},
        "large_score": LARGE_SCORE,
        "positional_encoding": {"n_positions": PE_POSITIONS, "d_model": PE_D_MODEL,
                                "shift": PE_SHIFT},
        "worked_example": {"Q": WORKED_Q, "K": WORKED_K, "V": WORKED_V},
        "tolerances": TOLERANCES,
    },
    limitations=LIMITATIONS, glosses=GLOSSES, home=_HERE)

# The names the notebook, the validator and the grader use.
run_lab, run_cli, run_in_notebook = LAB.run, LAB.run_cli, LAB.run_in_notebook

if __name__ == "__main__":
    sys.exit(LAB.main())
