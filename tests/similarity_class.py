"""A class built for the similarity pass (issue 50): independent work, and copies disguised.

Every notebook starts from the build's student notebook; only what students write changes: the
four graded functions, sometimes a helper cell, the nine written answers and the challenge's
five texts. Independent students are drawn from a grammar of choices (names, numpy idioms, the
way the mask, the softmax, the heads and the sinusoids are written, comments, a bug or none),
and their written answers from ideas phrased in several ways, so that two of them share what
two students of one class share: the formulas and the vocabulary, rarely a whole passage.

Each planted copy takes one independent student's work and disguises it the way students do
(``DISGUISES``): identifiers renamed, comments and blank lines changed, statements reordered
where order does not matter, a loop turned into a comprehension, answers paraphrased by a
synonym swap. ``PLANTED`` says which parts each copy takes; the rest is its own.

``build(student_nb, n_independent, seed)`` returns ``Class``: ``{file: notebook bytes}`` and the
planted pairs, reproducible for a seed.
"""

import random
import re
from dataclasses import dataclass, field

import nbformat

GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")

# --- the code grammar --------------------------------------------------------------------------
#
# A function is a list of statements; statements with the same ``group`` (not None) are
# independent of one another, so a copier may reorder them. Names in ``{braces}`` are the
# student's own identifiers, filled from the choices.

ATTENTION_NAMES = {
    "scores": ["scores", "s", "logits", "puntuaciones", "S", "energia", "sc"],
    "weights": ["weights", "w", "pesos", "A", "probs", "alfa", "attn"],
    "out": ["out", "output", "salida", "Z", "res", "contexto", "y"],
    "dk": ["d_k", "dk", "d", "dim", "escala_dim", "n_dims"],
    "e": ["e", "ex", "exps", "num", "exp_s"],
}
MULTIHEAD_NAMES = {
    "outs": ["outputs", "cabezas", "heads_out", "salidas", "partes", "resultados", "lista"],
    "wq": ["W_Q", "Wq", "wq", "Wq_h", "WQ", "q_w"],
    "wk": ["W_K", "Wk", "wk", "Wk_h", "WK", "k_w"],
    "wv": ["W_V", "Wv", "wv", "Wv_h", "WV", "v_w"],
    "head": ["head", "h", "cabeza", "hd", "proy", "pesos_h"],
    "concat": ["concat", "juntas", "H", "todo", "cat", "unidas"],
    "o": ["o", "salida_h", "out_h", "resultado", "z", "att"],
}
PE_NAMES = {
    "pos": ["pos", "positions", "posiciones", "p", "idx", "t"],
    "omega": ["omega", "freqs", "w", "frecuencias", "inv_freq", "om"],
    "pe": ["pe", "PE", "enc", "codif", "M", "tabla"],
    "ang": ["angles", "ang", "args", "fase", "theta", "arg"],
    "half": ["half", "n_cos", "mitad", "n_pares", "k", "nc"],
}
BLOCK_NAMES = {
    "a": ["a", "attn", "att_out", "mh", "sub1", "atencion"],
    "h": ["h", "hidden", "oculta", "ffn_in", "inter", "z"],
    "f": ["f", "ffn", "ff", "sub2", "red", "ffn_out"],
    "y": ["y", "x2", "out", "salida", "res", "x_out"],
}

COMMENT_POOLS = [
    ["# paso 1: puntuaciones", "# aplico la máscara", "# softmax por filas", "# media ponderada"],
    ["# calculamos QK^T / sqrt(dk)", "# posiciones prohibidas -> -inf", "# normalizo",
     "# salida"],
    ["# scores", "# mask", "# softmax", "# output"],
    ["# producto escalar escalado", "# si hay máscara", "# pesos que suman 1",
     "# combinación de valores"],
    ["# compute the scores", "# masking", "# normalize", "# weighted sum"],
]


@dataclass
class Statement:
    text: str  # one or more lines, indented as in the body (4 spaces)
    group: object = None  # statements of one group may be reordered


def _attention(rng, names, bug):
    dk_inline = rng.random() < 0.4
    dk_expr = rng.choice(["K.shape[-1]", "K.shape[1]", "Q.shape[-1]", "Q.shape[1]"])
    dk = dk_expr if dk_inline else "{dk}"
    scale = rng.choice(["/ np.sqrt({dk})", "/ {dk} ** 0.5", "* (1.0 / np.sqrt({dk}))",
                        "/ math.sqrt({dk})"]).replace("{dk}", dk)
    if bug == "no_sqrt_dk":
        scale = ""
    elif bug == "divides_by_dk":
        scale = f"/ {dk}"
    product = rng.choice(["Q @ K.T", "np.dot(Q, K.T)", "np.matmul(Q, K.T)",
                          "Q @ np.transpose(K)", "np.einsum('ik,jk->ij', Q, K)", "Q.dot(K.T)"])
    body = []
    if not dk_inline:
        body.append(Statement(f"    {{dk}} = {dk_expr}", group="start"))
    scores = f"({product}) {scale}" if scale and rng.random() < 0.5 else f"{product} {scale}"
    body.append(Statement(f"    {{scores}} = {scores.strip()}"))
    masking = rng.choice([
        "    if mask is not None:\n        {scores} = np.where(mask, {scores}, -np.inf)",
        "    if mask is not None:\n        {scores}[~mask] = -np.inf",
        "    if mask is not None:\n        {scores} = {scores} + np.where(mask, 0.0, -1e9)",
        "    if mask is not None:\n        {scores} = np.where(mask == False, -1e9, {scores})",
        "    if mask is not None:\n        {scores}[np.logical_not(mask)] = -1e30",
    ])
    axis = "0" if bug == "softmax_over_queries" else rng.choice(["-1", "1"])
    softmax_style = rng.choice(["given", "given", "inline", "shifted"])
    if softmax_style == "given":
        soft = [f"    {{weights}} = softmax({{scores}}, axis={axis})"]
    elif softmax_style == "inline":
        soft = [f"    {{e}} = np.exp({{scores}} - {{scores}}.max(axis={axis}, keepdims=True))",
                f"    {{weights}} = {{e}} / {{e}}.sum(axis={axis}, keepdims=True)"]
    else:
        soft = [f"    {{scores}} = {{scores}} - np.max({{scores}}, axis={axis}, keepdims=True)",
                "    {weights} = np.exp({scores})",
                f"    {{weights}} = {{weights}} / np.sum({{weights}}, axis={axis}, keepdims=True)"]
    output = rng.choice(["{weights} @ V", "np.dot({weights}, V)", "np.matmul({weights}, V)",
                         "np.einsum('ij,jk->ik', {weights}, V)"])
    if bug == "mask_after_softmax":
        body += [Statement(line) for line in soft]
        body.append(Statement(masking.replace("-np.inf", "0.0").replace("-1e9", "0.0")
                              .replace("-1e30", "0.0").replace("{scores}", "{weights}")))
    else:
        body.append(Statement(masking))
        body += [Statement(line) for line in soft]
    if rng.random() < 0.5:
        body.append(Statement(f"    {{out}} = {output}"))
        body.append(Statement("    return {out}, {weights}"))
    else:
        body.append(Statement(f"    return {output}, {{weights}}"))
    return body


def _multihead(rng, names, bug):
    mask = "" if bug == "mask_not_passed" else rng.choice([", mask", ", mask=mask"])
    project = rng.random() < 0.5
    call = ("attention(X @ {wq}, X @ {wk}, X @ {wv}" + mask + ")[0]" if not project else
            "attention(Q_h, K_h, V_h" + mask + ")[0]")
    style = rng.choice(["loop", "loop", "index", "comprehension"])
    body = []
    if style == "comprehension" and not project:
        body.append(Statement(f"    {{outs}} = [{call} for {{wq}}, {{wk}}, {{wv}} in heads]"))
    elif style == "index":
        lines = ["    {outs} = []", "    for i in range(len(heads)):",
                 "        {wq}, {wk}, {wv} = heads[i]"]
        if project:
            lines += ["        Q_h, K_h, V_h = X @ {wq}, X @ {wk}, X @ {wv}"]
        lines += [f"        {{o}} = {call}", "        {outs}.append({o})"]
        body.append(Statement("\n".join(lines)))
    else:
        lines = ["    {outs} = []", "    for {wq}, {wk}, {wv} in heads:"]
        if project:
            lines += ["        Q_h = X @ {wq}", "        K_h = X @ {wk}", "        V_h = X @ {wv}"]
        lines += [f"        {{outs}}.append({call})"]
        body.append(Statement("\n".join(lines)))
    joined = rng.choice(["np.concatenate({outs}, axis=1)", "np.hstack({outs})",
                         "np.concatenate({outs}, axis=-1)", "np.column_stack({outs})"])
    if bug == "sums_heads":
        joined = "sum({outs})"
        final = "{concat} @ W_O[: {concat}.shape[1]]"
    elif bug == "no_w_o":
        final = "{concat}"
    else:
        final = rng.choice(["{concat} @ W_O", "np.dot({concat}, W_O)", "np.matmul({concat}, W_O)"])
    if rng.random() < 0.5:
        body.append(Statement(f"    {{concat}} = {joined}"))
        body.append(Statement(f"    return {final}"))
    else:
        body.append(Statement(f"    return {final.replace('{concat}', '(' + joined + ')')}"))
    return body


def _positional(rng, names, bug):
    body = []
    group = "setup"
    pos = rng.choice(["np.arange({n})[:, None]", "np.arange({n}).reshape(-1, 1)",
                      "np.expand_dims(np.arange({n}), 1)", "np.arange({n})[:, np.newaxis]"])
    start = "1" if bug == "positions_from_one" else None
    if start:
        pos = pos.replace("np.arange({n})", "np.arange(1, {n} + 1)")
    omega = rng.choice([
        "1 / 10000 ** (np.arange(0, d_model, 2) / d_model)",
        "np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)",
        "1.0 / np.power(10000, np.arange(0, d_model, 2) / d_model)",
        "10000.0 ** (-np.arange(0, d_model, 2) / d_model)",
        "1 / (10000 ** (2 * np.arange((d_model + 1) // 2) / d_model))",
    ])
    zeros = rng.choice(["np.zeros(({n}, d_model))", "np.zeros((n_positions, d_model), dtype=float)",
                        "np.empty((n_positions, d_model))"])
    body.append(Statement(f"    {{pos}} = {pos}".replace("{n}", "n_positions"), group=group))
    body.append(Statement(f"    {{omega}} = {omega}", group=group))
    body.append(Statement(f"    {{pe}} = {zeros}".replace("{n}", "n_positions"), group=group))
    ang = rng.choice(["{pos} * {omega}", "np.outer({pos}, {omega})", "{pos} * {omega}[None, :]"])
    sin, cos = ("np.cos", "np.sin") if bug == "sin_cos_swapped" else ("np.sin", "np.cos")
    if bug == "odd_d_model":
        cos_line = f"    {{pe}}[:, 1::2] = {cos}({{ang}})"
    else:
        cos_line = rng.choice([
            f"    {{pe}}[:, 1::2] = {cos}({{ang}})[:, : d_model // 2]",
            f"    {{pe}}[:, 1::2] = {cos}({{ang}}[:, : d_model // 2])",
            f"    {{half}} = d_model // 2\n    {{pe}}[:, 1::2] = {cos}({{ang}}[:, :{{half}}])",
        ])
    body.append(Statement(f"    {{ang}} = {ang}"))
    body.append(Statement(f"    {{pe}}[:, 0::2] = {sin}({{ang}})"))
    body.append(Statement(cos_line))
    body.append(Statement(rng.choice(["    return {pe}, {omega}", "    return ({pe}, {omega})"])))
    return body


def _block(rng, names, bug):
    mask = "" if bug == "mask_not_passed" else rng.choice([", mask", ", mask=mask"])
    relu = rng.choice(["np.maximum(0, {inner})", "np.maximum({inner}, 0.0)",
                       "np.where({inner} > 0, {inner}, 0)", "relu({inner})"])
    body = []
    if relu.startswith("relu("):
        body.append(Statement("    relu = lambda v: np.maximum(v, 0)"))
    if bug == "pre_ln":
        body.append(Statement(f"    x = x + multihead(layer_norm(x), heads, W_O{mask})"))
        body.append(Statement("    {h} = " + relu.replace("{inner}", "layer_norm(x) @ W1 + b1")))
        body.append(Statement("    return x + {h} @ W2 + b2"))
        return body
    body.append(Statement(f"    {{a}} = multihead(x, heads, W_O{mask})"))
    body.append(Statement("    x = layer_norm(x + {a})"))
    inner = "x @ W1" if bug == "no_b1" else rng.choice(["x @ W1 + b1", "np.dot(x, W1) + b1"])
    hidden = relu.replace("{inner}", f"({inner})" if "where" in relu else inner)
    body.append(Statement(f"    {{h}} = {hidden}"))
    second = rng.choice(["{h} @ W2 + b2", "np.dot({h}, W2) + b2"])
    if rng.random() < 0.5:
        body.append(Statement(f"    {{f}} = {second}"))
        body.append(Statement("    {y} = layer_norm(x + {f})"))
        body.append(Statement("    return {y}"))
    else:
        body.append(Statement(f"    return layer_norm(x + {second})"))
    return body


MAKERS = {"attention": (_attention, ATTENTION_NAMES),
          "multihead": (_multihead, MULTIHEAD_NAMES),
          "positional_encoding": (_positional, PE_NAMES),
          "transformer_block": (_block, BLOCK_NAMES)}
BUGS = {"attention": ["no_sqrt_dk", "divides_by_dk", "softmax_over_queries",
                      "mask_after_softmax"],
        "multihead": ["mask_not_passed", "sums_heads", "no_w_o"],
        "positional_encoding": ["odd_d_model", "sin_cos_swapped", "positions_from_one"],
        "transformer_block": ["pre_ln", "mask_not_passed", "no_b1"]}

HELPERS = [
    "def relu(z):\n    return np.maximum(0, z)\n",
    "def comprueba(f, *args):\n    r = f(*args)\n    print(type(r), getattr(r, 'shape', None))\n",
    "# pruebas mías\nQ_t = np.eye(3)\nprint(attention(Q_t, Q_t, Q_t)[1].sum(axis=1))\n",
    "def mi_norma(x, eps=1e-6):\n    mu = x.mean(-1, keepdims=True)\n"
    "    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)\n",
    "import math\n",
    "def filas_suman_uno(p):\n    return np.allclose(p.sum(axis=-1), 1)\n",
]


@dataclass
class Code:
    """One student's graded function, as choices, so a copier can disguise it."""

    function: str
    statements: list
    names: dict
    comments: list  # one comment or None before each statement
    docstring: bool  # keeps the stub's docstring
    blank_lines: set = field(default_factory=set)  # statements followed by a blank line

    def render(self, stub_head):
        lines = list(stub_head if self.docstring else stub_head[:1])
        for index, (statement, comment) in enumerate(zip(self.statements, self.comments)):
            if comment:
                lines.append("    " + comment)
            text = statement.text
            for key, value in self.names.items():
                text = text.replace("{" + key + "}", value)
            lines.append(text)
            if index in self.blank_lines:
                lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def draw_code(rng, function, bug=None):
    maker, pools = MAKERS[function]
    names = {key: rng.choice(values) for key, values in pools.items()}
    statements = maker(rng, names, bug)
    pool = rng.choice(COMMENT_POOLS + [[]] * 3)
    comments = [pool[i % len(pool)] if pool and rng.random() < 0.5 else None
                for i in range(len(statements))]
    blanks = {i for i in range(len(statements) - 1) if rng.random() < 0.2}
    return Code(function, statements, names, comments, rng.random() < 0.7, blanks)


# --- written answers ---------------------------------------------------------------------------
#
# Each question has ideas; each idea is a sentence with slots, «{a|b|c}», one option drawn per
# slot. A student writes two to four ideas, in an order of their own.

IDEAS = {
    "q1": [
        "La atención {es|funciona como|se puede ver como} {un diccionario blando|una búsqueda "
        "suave|una consulta ponderada} {en el que|donde} cada consulta se compara con "
        "{todas las claves|las claves de todos los tokens}.",
        "{Los pesos|Las ponderaciones} {salen de|se obtienen con} una softmax de los productos "
        "escalares {escalados|divididos por la raíz de d_k}.",
        "{El Transformer|La arquitectura Transformer} {apila|encadena|combina} bloques de "
        "atención multicabeza y {redes feed-forward|una FFN por token}, con "
        "{conexiones residuales|sumas residuales} y normalización de capa.",
        "{A diferencia de|Frente a} una RNN, {cada token|todo token} {mira directamente|accede "
        "directamente} a {los demás|todos los otros} en un {solo|único} paso.",
        "{No depende de|No es} {ninguna biblioteca|un framework concreto}: es {una operación "
        "matemática|una cuenta con matrices} {sobre Q, K y V|entre consultas, claves y valores}.",
    ],
    "q2": [
        "La {autoatención|self-attention} {es|consiste en} {aplicar la atención|la atención "
        "aplicada} {a una misma secuencia|a los tokens de una frase consigo mismos}.",
        "{Multi-head|La atención multicabeza} {repite|ejecuta} {esa atención|la atención} "
        "{varias veces en paralelo|con varias proyecciones a la vez} y {concatena|junta} "
        "{los resultados|las salidas}.",
        "{La codificación posicional|El positional encoding} {añade|suma} {información del "
        "orden|la posición} {porque|ya que} la atención {sola|por sí misma} es "
        "{equivariante a permutaciones|ciega al orden}.",
        "{El bloque transformer|Un bloque Transformer} {junta|reúne} {todo lo anterior|esas "
        "piezas} con {la FFN|una red feed-forward} y {las normalizaciones|LayerNorm}.",
        "{Sin posiciones|Si no hay codificación posicional}, {barajar|permutar} {los tokens|la "
        "entrada} solo {baraja|permuta} {las salidas|la salida}.",
    ],
    "q3": [
        "{Con la misma semilla|Usando la misma seed} {los números|los resultados} {deben ser "
        "idénticos|tienen que repetirse} {en las dos ejecuciones|entre una ejecución y otra}.",
        "{Se conserva|Debe mantenerse} {el JSON completo|todo el resultado}: {inputs|las "
        "entradas}, {result|el resultado} y {evidence|la evidencia}.",
        "{Eso demuestra|Así se comprueba} que {el experimento|el laboratorio} es "
        "{reproducible|determinista} y {no depende|no varía} {del azar|de la suerte}.",
        "{Lo que puede cambiar|Solo cambiaría} {es|sería} {el orden de impresión|el tiempo de "
        "ejecución}, {nunca|no} {los valores|las cifras}.",
    ],
    "q4": [
        "{Una afirmación permitida|Algo que sí se puede afirmar} {es|sería} que {las filas de "
        "pesos suman 1|los pesos de cada fila suman uno} {con mis funciones|en el resultado}.",
        "{Exagerado sería decir|Una exageración es afirmar} que {el modelo entiende el "
        "lenguaje|la atención comprende el significado} {por este laboratorio|con estos datos}.",
        "{El laboratorio|La evidencia} {solo mide|mide únicamente} {propiedades|algunas "
        "propiedades} {de mis funciones|del código}, {no|nunca} {su utilidad|cómo se comporta "
        "un modelo grande}.",
        "{También es permitido|Se puede decir también} que {la máscara causal|la máscara} "
        "{deja a cero|anula} {los pesos del futuro|los pesos de los tokens futuros}.",
    ],
    "q5": [
        "{Una prueba negativa|Un caso límite} {sería|puede ser} {una máscara con una fila entera "
        "a False|una fila de la máscara sin ninguna clave permitida}, {que daría|lo que "
        "produce} {NaN|valores no definidos}.",
        "{Probaría|Comprobaría} {con d_model impar|un d_model impar} {en la codificación "
        "posicional|en positional_encoding}.",
        "{Otra opción|Otro caso} {es|sería} {usar|probar} {n distinto de m|más claves que "
        "consultas} {para ver|y comprobar} que {las formas|las dimensiones} {son correctas|"
        "cuadran}.",
        "{Con puntuaciones enormes|Con valores muy grandes} la softmax {sin restar el "
        "máximo|ingenua} {desborda|daría infinito}.",
    ],
    "q6": [
        "(a) {Sumar|Añadir} {el mismo vector|un vector c} a {todas las claves|cada clave} "
        "{suma|añade} q·c a {toda la fila|cada puntuación de la fila}, y la softmax {no "
        "cambia|queda igual} {porque|ya que} es invariante a {constantes|desplazamientos}.",
        "(b) {Multiplicar|Escalar} {las claves|todas las claves} por 10 {multiplica|escala} "
        "{las puntuaciones|los scores} por 10 y {los pesos|la distribución} se {vuelven más "
        "picudos|concentran}.",
        "(c) {Poner a cero|Anular} {después de la softmax|tras la softmax} {deja filas que no "
        "suman 1|rompe la normalización}, {salvo que|a menos que} se {renormalice|vuelva a "
        "dividir}.",
        "{Lo comprobé|Lo verifiqué} {ejecutando|con} {attention|mi función} {y coincide|y "
        "sale lo esperado}.",
    ],
    "q7": [
        "{Como PE(i-1)|Puesto que PE(i-1)} es una {rotación|rotación fija} de PE(i), "
        "{tomo|elijo} W^K {como|igual a} {esa rotación|la matriz de rotación} y W^Q {la "
        "identidad|como identidad}.",
        "{Así|De esta forma} {la puntuación|el producto escalar} {entre i e i-1|de la consulta "
        "i con la clave i-1} {es máxima|es el mayor} {porque|pues} {los vectores coinciden|"
        "quedan alineados}.",
        "{En la posición 0|Para el primer token} {no hay|no existe} {token anterior|anterior}, "
        "{así que|por lo que} {atiende a otro|el máximo cae en otra clave}.",
        "{Lo comprobé|Lo probé} {con mi attention|con attention} y {positional_encoding|la "
        "codificación posicional} {y el argmax|y el máximo} {cae en i-1|está en la diagonal "
        "inferior}.",
    ],
    "q8": [
        "{Si permutamos|Al permutar} {X|la entrada} {con P|por una matriz P}, {las "
        "puntuaciones|QK^T} {pasan a ser|se convierten en} P S P^T.",
        "{La softmax por filas|Una softmax fila a fila} {conmuta|es compatible} con "
        "{permutar filas y columnas|la permutación}, {así que|de modo que} {los pesos|A} "
        "{quedan|resultan} P A P^T.",
        "{Entonces|Por tanto} {la salida|el resultado} {es|queda} P A P^T P V = P A V, "
        "{porque|ya que} P^T P es la identidad.",
        "{Con la máscara causal|Si hay máscara causal} {falla|deja de valer} {el paso|la "
        "igualdad} {de la softmax|de los pesos}, {porque|pues} {la máscara no se permuta|M no "
        "es invariante a P}.",
    ],
    "q9": [
        "{Que el modelo acierte|Acertar} {sin la escala|quitando 1/sqrt(d_k)} {no prueba|no "
        "demuestra} {que sobre|que no sirva}: {un modelo entrenado|el modelo} {tolera|aguanta} "
        "{errores|fallos pequeños}.",
        "{La ablación|El experimento de ablación} {entrena|vuelve a entrenar} {con y sin|sin} "
        "{la escala|la división} y {mide|compara} {la pérdida|las curvas de pérdida}.",
        "{Sin la escala|Sin escalar} {la pérdida|el error} {baja más despacio|tarda más en "
        "bajar} {con d_k = 64|cuando d_k es grande}.",
        "{Los números|Las cifras} {de la ablación|del laboratorio} {muestran|indican} {una "
        "diferencia clara|que la escala ayuda al entrenamiento}.",
    ],
}

CHALLENGE = {
    "supuesto": [
        "{Supongo|Mi supuesto es} que {los pesos de atención|las filas de pesos} {suman 1|"
        "forman una distribución} {para cada consulta|en cada fila}.",
        "{Pongo a prueba|Compruebo} que {la máscara causal|la máscara} {anula|pone a cero} "
        "{el futuro|los pesos futuros}.",
        "{El supuesto|Lo que supongo} es que {la codificación posicional|PE} {rota|es una "
        "rotación} {al avanzar|con el desplazamiento}.",
    ],
    "medicion": [
        "{En el ejemplo trabajado|En el resultado del laboratorio}, {el peso|el valor} "
        "{de la fila 1|de la primera fila} {es|vale} {0,6698|0,67} {según|como dice} "
        "{evidence|la evidencia}.",
        "{La diferencia máxima|El error máximo} {de la rotación|medido} {es|sale} "
        "{2,4e-15|del orden de 1e-15} {en evidence|en el JSON}.",
        "{La suma de las filas|Cada fila} {da|suma} {1,0|exactamente 1} {según|en} "
        "{result|el resultado} {del laboratorio|de lab.py}.",
    ],
    "conclusion": [
        "{Concluyo|La conclusión es} que {mi implementación|mi attention} {cumple|respeta} "
        "{la propiedad|lo que esperaba} {en estos datos|con esta semilla}.",
        "{Los datos|Las medidas} {apoyan|confirman} {el supuesto|lo que supuse} {solo|"
        "únicamente} {para estas entradas|en este caso}.",
        "{Se cumple|Vale} {la propiedad|el supuesto} {dentro de|hasta} {la precisión|el "
        "redondeo} {de coma flotante|numérico}.",
    ],
    "limitacion": [
        "{Solo|Únicamente} {se probó|lo comprobé} {con una semilla|con seed 55} y {entradas "
        "pequeñas|tamaños pequeños}.",
        "{No se midió|No medí} {nada sobre|el comportamiento en} {modelos grandes|datos "
        "reales}.",
        "{La evidencia|El laboratorio} {no cubre|no incluye} {máscaras con filas vacías|casos "
        "límite}.",
    ],
    "riesgo": [
        "{El riesgo|Un riesgo} es {generalizar|extrapolar} {el resultado|esto} a {otros "
        "modelos|cualquier Transformer}.",
        "{Puede ser peligroso|Sería arriesgado} {afirmar|decir} que {el modelo|la red} "
        "{entiende|comprende} {el texto|el lenguaje}.",
        "{Si la máscara|Cuando la máscara} {está mal|falla}, {los resultados|las "
        "conclusiones} {serían|quedarían} {engañosos|inválidos}.",
    ],
}

# A paraphrase by synonym swap: what a copier changes, word by word.
SYNONYMS = {
    "es": "resulta", "cada": "toda", "todas": "cada una de", "compara": "contrasta",
    "suma": "agrega", "suman": "dan en total", "pesos": "ponderaciones", "salida": "resultado",
    "token": "elemento", "tokens": "elementos", "claves": "keys", "consulta": "query",
    "matriz": "tabla", "valores": "values", "cambia": "varía", "muestran": "enseñan",
    "demuestra": "prueba", "función": "rutina", "comprobé": "verifiqué", "probé": "testeé",
    "mismo": "idéntico", "misma": "idéntica", "solo": "sólo", "varias": "múltiples",
    "porque": "dado que", "entonces": "por consiguiente", "así": "de este modo",
    "también": "además", "datos": "cifras", "modelo": "sistema", "paso": "etapa",
    "ejecutando": "corriendo", "produce": "genera", "cae": "queda", "máximo": "mayor valor",
    "mide": "cuantifica", "resultado": "desenlace", "fila": "renglón",
    "filas": "renglones", "pequeñas": "reducidas", "grandes": "enormes", "con": "usando",
    "sin": "prescindiendo de", "donde": "en donde",
}


def _fill(rng, template):
    return re.sub(r"\{([^{}]*)\}", lambda m: rng.choice(m.group(1).split("|")), template)


def draw_text(rng, ideas, low=2, high=4):
    chosen = rng.sample(ideas, min(len(ideas), rng.randint(low, high)))
    return " ".join(_fill(rng, idea) for idea in chosen)


def paraphrase(text, rng):
    """Every word the synonym table knows, swapped, and a sentence or two reordered."""
    def swap(match):
        word = match.group(0)
        new = SYNONYMS.get(word.lower())
        if new is None:
            return word
        return new[0].upper() + new[1:] if word[0].isupper() else new
    swapped = re.sub(r"\b\w+\b", swap, text)
    return swapped


# --- disguises ---------------------------------------------------------------------------------


def rename(code: Code, rng):
    """Every identifier of the student's own replaced by another of the same pool or a new
    one."""
    pools = MAKERS[code.function][1]
    code.names = {key: (rng.choice([v for v in pools[key] if v != value]) + "_")
                  for key, value in code.names.items()}


def recomment(code: Code, rng):
    pool = rng.choice([p for p in COMMENT_POOLS if p])
    code.comments = [None if comment else pool[i % len(pool)]
                     for i, comment in enumerate(code.comments)]
    code.blank_lines = {i for i in range(len(code.statements) - 1)
                        if i not in code.blank_lines and rng.random() < 0.6}
    code.docstring = not code.docstring


def reorder(code: Code, rng):
    """Statements of one group (independent of one another) in another order."""
    groups = {}
    for index, statement in enumerate(code.statements):
        if statement.group is not None:
            groups.setdefault(statement.group, []).append(index)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        moved = list(indices)
        while moved == indices:
            moved = rng.sample(indices, len(indices))
        picked = [code.statements[i] for i in moved]
        for i, statement in zip(indices, picked):
            code.statements[i] = statement


LOOP = re.compile(r"    \{outs\} = \[\]\n    for (?P<target>[^\n]*) in heads:\n"
                  r"(?P<body>(?:        [^\n]*\n)*)        \{outs\}\.append\((?P<call>.*)\)$")


def to_comprehension(code: Code, rng):
    """multihead's loop over the heads, as a list comprehension (a loop that projects first
    keeps its projections inline)."""
    for index, statement in enumerate(code.statements):
        match = LOOP.match(statement.text)
        if not match:
            continue
        call = match.group("call")
        for line in match.group("body").splitlines():
            name, _, value = line.strip().partition(" = ")
            call = call.replace(name, f"({value})")
        code.statements[index] = Statement(
            f"    {{outs}} = [{call} for {match.group('target')} in heads]")
        return True
    return False


DISGUISES = {"rename": rename, "comments": recomment, "reorder": reorder,
             "comprehension": to_comprehension}


@dataclass
class Student:
    code: dict  # function -> Code
    helper: object  # a helper cell's source, or None
    answers: dict  # q1..q9 -> text ("" when left empty)
    challenge: dict  # field -> text


@dataclass(frozen=True)
class Plant:
    """A planted copy: what it takes from its source and how it disguises it."""

    name: str
    functions: tuple = ()
    disguises: tuple = ()
    written: tuple = ()  # the written answers it takes, paraphrased
    challenge: bool = False  # the challenge's texts, paraphrased


PLANTED = (
    Plant("renombra", GRADED, ("rename",)),
    Plant("comentarios", GRADED, ("comments",)),
    Plant("reordena", GRADED, ("reorder",)),
    Plant("comprension", ("multihead", "transformer_block"), ("comprehension", "rename")),
    Plant("parafrasea", written=tuple(f"q{i}" for i in range(1, 10))),
    Plant("reto", challenge=True, written=("q3", "q4")),
    Plant("dos_funciones", ("attention", "positional_encoding"), ("rename", "comments")),
    Plant("todo", GRADED, ("rename", "comments", "reorder", "comprehension"),
          written=tuple(f"q{i}" for i in range(1, 10)), challenge=True),
    Plant("bloque", ("multihead", "transformer_block", "positional_encoding"),
          ("rename", "reorder")),
    Plant("mitad", ("attention", "multihead"), ("comments", "reorder"),
          written=("q1", "q2", "q6", "q8")),
)


def draw_student(rng):
    code = {}
    buggy = rng.random() < 0.4
    wrong = set(rng.sample(GRADED, rng.randint(1, 2))) if buggy else set()
    for function in GRADED:
        bug = rng.choice(BUGS[function]) if function in wrong else None
        code[function] = draw_code(rng, function, bug)
    helper = rng.choice(HELPERS) if rng.random() < 0.35 else None
    answers = {q: (draw_text(rng, ideas) if rng.random() < 0.9 else "")
               for q, ideas in IDEAS.items()}
    challenge = {key: draw_text(rng, ideas, 1, 2) for key, ideas in CHALLENGE.items()}
    return Student(code, helper, answers, challenge)


def disguised_copy(source: Student, own: Student, plant: Plant, rng):
    import copy

    code = {}
    for function in GRADED:
        if function not in plant.functions:
            code[function] = own.code[function]
            continue
        taken = copy.deepcopy(source.code[function])
        for disguise in plant.disguises:
            DISGUISES[disguise](taken, rng)
        code[function] = taken
    answers = {q: (paraphrase(source.answers[q], rng) if q in plant.written else own.answers[q])
               for q in own.answers}
    challenge = ({k: paraphrase(v, rng) for k, v in source.challenge.items()}
                 if plant.challenge else own.challenge)
    helper = source.helper if plant.functions == GRADED else own.helper
    return Student(code, helper, answers, challenge)


# --- notebooks ---------------------------------------------------------------------------------


def _stub_heads(student_nb):
    """``{function: [def line, docstring lines...]}`` of the build's stubs, as students get
    them: everything before the stub's ``raise``."""
    import ast

    heads = {}
    for cell in student_nb.cells:
        if cell.cell_type != "code":
            continue
        for function in GRADED:
            if cell.source.startswith(f"def {function}("):
                tree = ast.parse(cell.source).body[0]
                heads[function] = cell.source.splitlines()[:tree.body[-1].lineno - 1]
    return heads


def _written_cells(nb):
    """The answer cells of the written questions, in order (each holds the placeholder)."""
    return [cell for cell in nb.cells if cell.cell_type == "markdown"
            and "otter_answer_cell" in cell.metadata.get("tags", [])]


def notebook(student_nb, student: Student, heads):
    nb = nbformat.from_dict(student_nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for function in GRADED:
            if cell.source.startswith(f"def {function}("):
                cell.source = student.code[function].render(heads[function])
        if cell.source.lstrip().startswith("# Sustituye cada None"):
            cell.source = "student_extension = {\n" + "".join(
                f"    {key!r}: {text!r},\n" for key, text in student.challenge.items()) + "}\n" \
                "resultado = {**resultado_lab, \"student_extension\": student_extension}\n"
        if cell.source.startswith("import numpy as np") and "math" not in cell.source:
            cell.source = "import math\n" + cell.source
    for cell, (question, text) in zip(_written_cells(nb), student.answers.items()):
        cell.source = text or cell.source
    if student.helper:
        index = next(i for i, cell in enumerate(nb.cells)
                     if cell.cell_type == "code" and cell.source.startswith("def attention("))
        nb.cells.insert(index + 1, nbformat.v4.new_code_cell(student.helper))
    return nbformat.writes(nb).encode("utf-8")


@dataclass
class Class:
    files: dict  # file name -> notebook bytes
    planted: dict  # copy's file -> (source's file, Plant)
    students: dict  # file name -> Student


def build(student_nb, n_independent=60, seed=50, planted=PLANTED):
    rng = random.Random(seed)
    heads = _stub_heads(student_nb)
    students = {f"alumno_{i:03d}.ipynb": draw_student(rng) for i in range(n_independent)}
    # A copy that turns a loop into a comprehension takes work that has the loop.
    looped = [n for n in sorted(students)
              if any(LOOP.match(s.text) for s in students[n].code["multihead"].statements)]
    sources = []
    for plant in planted:
        pool = looped if "comprehension" in plant.disguises else sorted(students)
        sources.append(rng.choice([n for n in pool if n not in sources]))
    copies = {}
    for number, (plant, source) in enumerate(zip(planted, sources)):
        own = draw_student(rng)
        copies[f"alumno_{n_independent + number:03d}.ipynb"] = (source, plant, own)
    planted_pairs = {}
    for name, (source, plant, own) in copies.items():
        students[name] = disguised_copy(students[source], own, plant, rng)
        planted_pairs[name] = (source, plant)
    files = {name: notebook(student_nb, student, heads) for name, student in students.items()}
    return Class(files, planted_pairs, students)
