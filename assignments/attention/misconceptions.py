"""The catalog of typical mistakes in lesson 055, each one a mutant of the reference.

When a student's output on a hidden case matches a mutant's output on that case, the feedback
names the mistake, explains it in one sentence and points to the notebook step and formula,
without code (``attention.diagnose``). The mutants live in ``attention.mutants``, as the
switches of a graded function's implementation (``mutants.MISTAKES``, keyed by the entry's id).

Seed 003's five "errores conceptuales frecuentes", and where the kit deals with each:

1. "La atención tiene en cuenta el orden": no graded function can show it; the notebook teaches
   it in step 7 (the permutation check) and its closing table.
2. "√d_k es un detalle menor": ``attention.no_sqrt_dk``.
3. "Cada cabeza tiene un rol asignado": not a property of code; taught in step 6 and the table.
4. "Se procesa token a token al entrenar": the causal mask is what makes the parallel pass
   legitimate, so forgetting it is ``multihead.mask_not_passed`` and
   ``transformer_block.mask_not_passed``; the parallelism itself is taught in step 5.
5. "La FFN mezcla tokens": the signature (W1 of shape (d_model, d_ff)) leaves no way to write
   it; taught in step 8 (the cell that changes one token) and the table.
"""

import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Optional

from . import mutants


@dataclass(frozen=True)
class Misconception:
    """One typical mistake: what students read about it, and the mutants that reproduce it."""

    id: str  # "<graded function>.<mistake>"
    name: str  # Spanish, short: what the student did
    explanation: str  # Spanish, one sentence: why it is wrong
    hint: str  # Spanish: the notebook step and formula to look at, never code
    seed_error: Optional[int] = None  # its number in seed 003's "errores conceptuales frecuentes"

    @property
    def function(self):
        return self.id.split(".")[0]

    @property
    def forms(self):
        """The mutants that reproduce this mistake, one per form of it (``mutants.MISTAKES``)."""
        return mutants.forms(self.id)

    @property
    def mutant(self):
        return self.forms[0]

    def source(self):
        """The mutant as the student's cell of ``self.function``."""
        return render_source(self.mutant, self.function)


def render_source(fn, name):
    """``fn`` as a standalone cell ``def name(...)``, followed by the functions it calls that a
    notebook does not define: a mutant's implementation, and private ``_name`` helpers."""
    if isinstance(fn, mutants.Mutant):
        sources, called = [fn.call_source(name)], [fn.implementation]
    else:
        sources = [re.sub(r"^def \w+\(", f"def {name}(", textwrap.dedent(inspect.getsource(fn)),
                          count=1)]
        called = []
    for helper in called + _private_helpers(called[0] if called else fn):
        sources.append(textwrap.dedent(inspect.getsource(helper)))
    return "\n\n".join(source.rstrip() for source in sources) + "\n"


def _private_helpers(fn, found=None):
    """Module-level ``_name`` functions that ``fn`` calls, directly or through each other."""
    found = [] if found is None else found
    module = inspect.getmodule(fn)
    for name in _global_names(fn.__code__):
        helper = getattr(module, name, None)
        if name.startswith("_") and inspect.isfunction(helper) and helper not in found:
            found.append(helper)
            _private_helpers(helper, found)
    return found


def _global_names(code):
    names = list(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):  # comprehensions and lambdas keep their own names
            names += _global_names(const)
    return names


CATALOG = (
    # --- attention: step 3 (formula), step 4 (√d_k), step 5 (mask) ---------------------------
    Misconception("attention.no_sqrt_dk",
        "No divides las puntuaciones por √d_k",
        "Sin el escalado, los productos escalares crecen con la dimensión d_k y la softmax se "
        "satura: una sola clave se lleva casi todo el peso.",
        "Repasa los pasos 3 y 4: las puntuaciones son QKᵀ/√d_k, con d_k el número de columnas "
        "de K.",
        seed_error=2),
    Misconception("attention.divides_by_dk",
        "Divides por d_k en lugar de por √d_k",
        "Dividir por d_k encoge de más las puntuaciones, así que los pesos quedan más repartidos "
        "de lo que deberían; el factor que las devuelve a varianza 1 es √d_k.",
        "Repasa el paso 4: si q y k tienen componentes de varianza 1, q·k tiene varianza d_k, así "
        "que se divide por su desviación típica, √d_k."),
    Misconception("attention.sqrt_of_num_keys",
        "Tomas d_k del número de claves en lugar de su dimensión",
        "d_k es la longitud de cada vector clave (las columnas de K), no cuántas claves hay (sus "
        "filas); solo coinciden cuando m = d_k.",
        "Repasa el paso 3: en QKᵀ/√d_k, K tiene forma (m, d_k) y d_k es su número de columnas."),
    Misconception("attention.k_not_transposed",
        "Multiplicas Q por K sin trasponer K",
        "Cada puntuación es el producto escalar de una consulta (fila de Q) con una clave (fila "
        "de K), así que hace falta Kᵀ para obtener una matriz (n, m).",
        "Repasa el paso 3: QKᵀ tiene forma (n, d_k)·(d_k, m) = (n, m), una fila por consulta y "
        "una columna por clave."),
    Misconception("attention.q_transposed",
        "Traspones Q en lugar de K",
        "QᵀK compara columnas de características en lugar de tokens y da una matriz (d_k, d_k), "
        "no las puntuaciones (n, m) de cada consulta con cada clave.",
        "Repasa el paso 3: la traspuesta va sobre K, en QKᵀ, de forma (n, d_k)·(d_k, m) = (n, m)."),
    Misconception("attention.softmax_over_queries",
        "Aplicas la softmax por columnas en lugar de por filas",
        "Cada consulta reparte su atención entre las claves, así que son las filas de los pesos, "
        "no las columnas, las que deben sumar 1.",
        "Repasa el paso 3, punto 3: la softmax se aplica a cada fila de QKᵀ/√d_k, sobre el eje "
        "de las claves."),
    Misconception("attention.mask_after_softmax",
        "Aplicas la máscara después de la softmax",
        "Si anulas los pesos prohibidos después de normalizar, las filas dejan de sumar 1; la "
        "máscara tiene que actuar sobre las puntuaciones, antes de la softmax.",
        "Repasa el paso 3, punto 2, y el paso 5: −∞ en las puntuaciones prohibidas y después la "
        "softmax, porque e^(−∞) = 0."),
    Misconception("attention.mask_inverted",
        "Inviertes la máscara",
        "Aquí True significa «puede atender», así que el −∞ va donde la máscara es False; al "
        "invertirla, cada consulta solo mira lo que tenía prohibido.",
        "Repasa el paso 5: con la máscara causal, el token i ve los tokens 0…i, el triángulo "
        "inferior, que es donde la máscara vale True."),
    Misconception("attention.mask_multiplied",
        "Multiplicas las puntuaciones por la máscara",
        "Multiplicar por la máscara deja un 0 en las posiciones prohibidas, y como e⁰ = 1 siguen "
        "recibiendo peso; hace falta −∞ para que su peso sea exactamente 0.",
        "Repasa el paso 3, punto 2: las posiciones donde la máscara es False reciben −∞ antes de "
        "la softmax."),
    Misconception("attention.unshifted_softmax",
        "Tu softmax no resta el máximo de cada fila",
        "Con puntuaciones del orden de 1000 la exponencial desborda a infinito y ∞/∞ da NaN; "
        "restar el máximo de la fila no cambia el resultado y lo evita.",
        "Repasa el paso 3: usa la softmax que ya viene hecha, que calcula "
        "e^(z − máx z) / Σ e^(z − máx z) en cada fila."),
    Misconception("attention.returns_only_output",
        "Devuelves un solo array en lugar de la tupla (salida, pesos)",
        "attention tiene que devolver la salida y también los pesos, en ese orden, como una tupla "
        "de dos elementos.",
        "Repasa el enunciado del ejercicio 1, en el paso 3: la función devuelve (salida, pesos)."),
    Misconception("attention.returns_weights_first",
        "Devuelves (pesos, salida) en lugar de (salida, pesos)",
        "El orden importa: primero va la salida, de forma (n, d_v), y después los pesos, de forma "
        "(n, m).",
        "Repasa el ejercicio 1, en el paso 3: primero softmax(QKᵀ/√d_k)·V y después la matriz de "
        "pesos softmax(QKᵀ/√d_k)."),
    Misconception("attention.sqrt_of_num_queries",
        "Tomas d_k del número de consultas en lugar de la dimensión de las claves",
        "d_k es la longitud de cada vector clave (las columnas de K), no cuántas consultas hay "
        "(las filas de Q); con una sola consulta es como no escalar.",
        "Repasa el paso 3: en QKᵀ/√d_k, Q tiene forma (n, d_k) y K (m, d_k), y d_k es su número "
        "de columnas."),
    Misconception("attention.sqrt_of_d_v",
        "Escalas por √d_v en lugar de por √d_k",
        "El escalado compensa la varianza de los productos escalares QKᵀ, que depende de la "
        "dimensión de las consultas y claves, d_k, no de la de los valores, d_v.",
        "Repasa el paso 4: se divide por √d_k, con d_k el número de columnas de Q y de K."),
    Misconception("attention.mask_added",
        "Sumas la máscara a las puntuaciones",
        "Sumar la máscara solo añade 1 a las puntuaciones permitidas y deja las prohibidas tal "
        "cual, así que siguen recibiendo peso; hace falta −∞ donde la máscara es False.",
        "Repasa el paso 3, punto 2: las posiciones donde la máscara es False reciben −∞ antes de "
        "la softmax, y las demás no cambian."),
    Misconception("attention.weights_transposed",
        "Devuelves los pesos traspuestos",
        "Los pesos tienen una fila por consulta y una columna por clave, y cada fila suma 1; "
        "traspuestos tienen forma (m, n) y sus filas ya no suman 1.",
        "Repasa el ejercicio 1, en el paso 3: los pesos softmax(QKᵀ/√d_k) tienen forma (n, m)."),
    Misconception("attention.keys_for_values",
        "Multiplicas los pesos por K en lugar de por V",
        "La salida es la media ponderada de los valores: los pesos dicen cuánto mira cada "
        "consulta a cada clave, y lo que se promedia son las filas de V.",
        "Repasa el paso 3, punto 4: salida = softmax(QKᵀ/√d_k)·V, de forma (n, d_v)."),
    # --- multihead: step 6 --------------------------------------------------------------------
    Misconception("multihead.no_w_o",
        "Falta la proyección final W_O",
        "Concatenar las cabezas no basta: la matriz W_O mezcla la información de todas ellas en "
        "las d_model columnas de la salida.",
        "Repasa el paso 6: MultiHead(X) = Concat(head_1, …, head_h)·W_O."),
    Misconception("multihead.sums_heads",
        "Sumas, promedias o apilas las cabezas en lugar de concatenarlas por columnas",
        "Al sumar las cabezas, promediarlas o apilarlas por filas te quedan solo d_v columnas, y "
        "W_O espera las h·d_v columnas de todas las cabezas puestas una al lado de la otra.",
        "Repasa el paso 6: Concat(head_1, …, head_h) pone cada cabeza en su propio bloque de "
        "columnas y tiene forma (n, h·d_v)."),
    Misconception("multihead.concat_along_rows",
        "Concatenas las cabezas por filas y después reorganizas la forma",
        "Si pones las cabezas una debajo de otra y luego reorganizas a (n, h·d_v), cada fila "
        "mezcla trozos de tokens distintos en lugar de las h cabezas de un mismo token.",
        "Repasa el paso 6: la fila i de Concat(head_1, …, head_h) es la fila i de cada cabeza, "
        "una al lado de la otra."),
    Misconception("multihead.mask_not_passed",
        "No pasas la máscara a las cabezas",
        "Sin la máscara cada cabeza deja que un token mire a los tokens futuros, y es la máscara "
        "la que permite procesar toda la secuencia a la vez sin ver la respuesta.",
        "Repasa los pasos 5 y 6: cada head_i = Attention(XW_i^Q, XW_i^K, XW_i^V) recibe la misma "
        "máscara.",
        seed_error=4),
    Misconception("multihead.scales_by_d_model",
        "Escalas cada cabeza por √d_model en lugar de por su √d_k",
        "Cada cabeza trabaja con proyecciones de dimensión d_k, no d_model, así que sus "
        "puntuaciones se dividen por √d_k.",
        "Repasa el paso 6: cada cabeza es una atención completa, softmax(QKᵀ/√d_k)·V, con la d_k "
        "de sus propias proyecciones."),
    Misconception("multihead.w_o_transposed",
        "Multiplicas por la traspuesta de W_O",
        "W_O tiene forma (h·d_v, d_model) y se usa tal cual: su traspuesta solo encaja en forma "
        "cuando es cuadrada, y entonces mezcla las cabezas con los pesos equivocados.",
        "Repasa el paso 6: Concat(head_1, …, head_h)·W_O, con la concatenación a la izquierda."),
    Misconception("multihead.returns_tuple",
        "Devuelves una tupla en lugar de solo la salida",
        "A diferencia de attention, multihead devuelve un único array, la salida de forma "
        "(n, d_model), sin los pesos.",
        "Repasa el enunciado del ejercicio 2, en el paso 6: MultiHead(X) es solo "
        "Concat(head_1, …, head_h)·W_O."),
    Misconception("multihead.w_o_per_head",
        "Multiplicas cada cabeza por W_O por separado",
        "W_O se aplica una sola vez, a la concatenación de todas las cabezas: cada bloque de filas "
        "de W_O corresponde a una cabeza y la suma de esos productos es exactamente "
        "Concat(head_1, …, head_h)·W_O, no un producto por cabeza con W_O entera.",
        "Repasa el paso 6: MultiHead(X) = Concat(head_1, …, head_h)·W_O, con la concatenación "
        "de forma (n, h·d_v)."),
    Misconception("multihead.heads_not_split",
        "Calculas una sola atención con las proyecciones de todas las cabezas juntas",
        "Juntar las W_Q, W_K y W_V de todas las cabezas en una sola atención mezcla las cabezas "
        "en una única softmax: cada cabeza tiene que repartir su atención por su cuenta.",
        "Repasa el paso 6: head_i = Attention(XW_i^Q, XW_i^K, XW_i^V) para cada cabeza por "
        "separado, y después se concatenan."),
    Misconception("multihead.scales_by_d_model_over_h",
        "Escalas cada cabeza por √(d_model/h) en lugar de por su √d_k",
        "d_model/h es el tamaño de cabeza más habitual, pero aquí cada cabeza tiene su propia d_k, "
        "la de sus proyecciones, y solo coinciden cuando d_k = d_model/h.",
        "Repasa el paso 6: toma d_k de la forma de W_Q (o de W_K) de cada cabeza, sin suponer "
        "que d_k = d_model/h."),
    Misconception("multihead.scales_by_d_v",
        "Escalas cada cabeza por √d_v en lugar de por √d_k",
        "El escalado compensa la varianza de los productos escalares entre consultas y claves, "
        "que depende de d_k, no de la dimensión de los valores, d_v.",
        "Repasa el paso 6: cada cabeza es softmax(QKᵀ/√d_k)·V, con la d_k de sus W_Q y W_K."),
    Misconception("multihead.w_k_for_values",
        "Usas W_K también para los valores",
        "Cada cabeza tiene tres proyecciones distintas: los valores salen de X·W_V, no de X·W_K, "
        "que da las claves.",
        "Repasa el paso 6: head_i = Attention(XW_i^Q, XW_i^K, XW_i^V)."),
    # --- positional_encoding: step 7 ----------------------------------------------------------
    Misconception("positional_encoding.sin_cos_swapped",
        "Intercambias senos y cosenos",
        "Las columnas pares (2i) llevan el seno y las impares (2i + 1) el coseno; al revés, la "
        "fila de la posición 0 empieza por 1 en lugar de por 0.",
        "Repasa el paso 7: PE(pos, 2i) = sin(pos·ω_i) y PE(pos, 2i + 1) = cos(pos·ω_i)."),
    Misconception("positional_encoding.exponent_i_over_d",
        "Usas el exponente i/d_model en lugar de 2i/d_model",
        "La frecuencia de la pareja i es ω_i = 1/10000^(2i/d_model); con i/d_model, o con la base "
        "100, que da lo mismo, las frecuencias decrecen la mitad de deprisa y las últimas "
        "columnas no llegan a ser lentas.",
        "Repasa el paso 7: el exponente usa el índice de la columna par, 2i = 0, 2, 4, …, "
        "dividido por d_model."),
    Misconception("positional_encoding.halves_concatenated",
        "Pones todos los senos y después todos los cosenos",
        "Poner todos los senos y después todos los cosenos es una disposición habitual, con los "
        "mismos números en otro orden de columnas, pero rompe la convención del cuaderno, en la "
        "que el seno y el coseno de cada frecuencia ocupan las columnas vecinas 2i y 2i + 1.",
        "Repasa el paso 7: seno, coseno, seno, coseno…, con PE(pos, 2i) y PE(pos, 2i + 1) "
        "compartiendo ω_i."),
    Misconception("positional_encoding.transposed",
        "Devuelves pe traspuesta",
        "pe tiene una fila por posición y una columna por dimensión; el mapa de calor del paso 7 "
        "dibuja su traspuesta, pero la función devuelve la matriz sin trasponer.",
        "Repasa el ejercicio 3, en el paso 7: pe tiene forma (n_positions, d_model) y su fila pos "
        "es PE(pos, 0), PE(pos, 1), …"),
    Misconception("positional_encoding.positions_from_one",
        "Cuentas las posiciones desde 1",
        "La primera posición es pos = 0, cuya fila es (0, 1, 0, 1, …); empezar en 1 desplaza toda "
        "la codificación un paso.",
        "Repasa el paso 7: pos recorre 0, 1, …, n_positions − 1."),
    Misconception("positional_encoding.frequency_not_inverted",
        "Multiplicas por 10000^(2i/d_model) en lugar de dividir",
        "La frecuencia ω_i = 1/10000^(2i/d_model) decrece con i; sin invertirla crece, y las "
        "últimas columnas oscilan más deprisa en lugar de más despacio.",
        "Repasa el paso 7: el ángulo es pos/10000^(2i/d_model), es decir, pos·ω_i."),
    Misconception("positional_encoding.column_index_exponent",
        "Calculas una frecuencia por columna en lugar de una por pareja",
        "El seno y el coseno de una pareja comparten la frecuencia ω_i; con 10000^(j/d_model) "
        "para cada columna j, cada coseno usa una frecuencia distinta de la de su seno.",
        "Repasa el paso 7: ω tiene una frecuencia por pareja de columnas, ⌈d_model/2⌉ en total, "
        "con exponente 2i/d_model."),
    Misconception("positional_encoding.reshaped_not_transposed",
        "Cambias la forma de pe en lugar de trasponerla",
        "Si construyes pe con una fila por dimensión, cambiar su forma a (n_positions, d_model) "
        "reparte los mismos números en otro orden y mezcla posiciones y dimensiones; lo que la "
        "pone con una fila por posición es trasponerla.",
        "Repasa el paso 7: pe tiene forma (n_positions, d_model) y su fila pos es PE(pos, 0), "
        "PE(pos, 1), …"),
    # --- transformer_block: step 8 ------------------------------------------------------------
    Misconception("transformer_block.pre_ln",
        "Implementas la variante pre-LN en lugar de la post-LN",
        "La variante pre-LN normaliza la entrada de cada subcapa y es la de muchos modelos "
        "modernos, pero aquí se evalúa la post-LN del artículo original, que normaliza después de "
        "cada suma residual.",
        "Repasa el paso 8 y su nota del kit: x ← LayerNorm(x + MultiHead(x)) y después "
        "salida = LayerNorm(x + FFN(x))."),
    Misconception("transformer_block.no_attention_residual",
        "Falta la conexión residual de la atención",
        "La primera subcapa suma la entrada a la salida de la atención antes de normalizar; sin "
        "esa suma el bloque pierde la información original de cada token.",
        "Repasa el paso 8: x ← LayerNorm(x + MultiHead(x)), con la x de entrada dentro de la "
        "suma."),
    Misconception("transformer_block.no_ffn_residual",
        "Falta la conexión residual de la FFN",
        "La segunda subcapa también suma su entrada: la salida es LayerNorm(x + FFN(x)), no "
        "LayerNorm(FFN(x)).",
        "Repasa el paso 8: cada subcapa va envuelta en su residual, LayerNorm(x + Subcapa(x))."),
    Misconception("transformer_block.no_relu",
        "Falta la ReLU de la FFN",
        "Sin la no linealidad, las dos capas de la FFN se reducen a una sola transformación "
        "lineal.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2, con la ReLU entre las dos capas."),
    Misconception("transformer_block.relu_after_second_layer",
        "Aplicas la ReLU después de la segunda capa de la FFN",
        "La ReLU va entre las dos capas, sobre xW_1 + b_1; aplicada al final anula todos los "
        "valores negativos que la FFN suma a cada token.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2, con la ReLU entre las dos capas."),
    Misconception("transformer_block.gelu_instead_of_relu",
        "Usas GELU en lugar de ReLU en la FFN",
        "GELU es la activación de BERT y de GPT, pero la FFN de este bloque, la del artículo "
        "original, usa ReLU, que anula los valores negativos en lugar de suavizarlos.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2, con ReLU(z) = máx(0, z)."),
    Misconception("transformer_block.ffn_without_biases",
        "La FFN no usa los sesgos b_1 y b_2",
        "Los sesgos forman parte de cada capa de la FFN: sin ellos cambia dónde se activa la ReLU "
        "y lo que la FFN suma a cada token.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2."),
    Misconception("transformer_block.layer_norm_over_tokens",
        "Normalizas por columnas en lugar de por filas",
        "LayerNorm normaliza cada token por separado, cada fila a media 0 y varianza 1; "
        "normalizar cada columna mezcla información entre tokens.",
        "Repasa el paso 8: la normalización de capa que ya viene hecha trabaja sobre el último "
        "eje, el de las dimensiones de cada token."),
    Misconception("transformer_block.layer_norm_unbiased_variance",
        "Normalizas con la varianza corregida, dividiendo por d_model − 1",
        "La normalización de capa divide cada fila centrada por la raíz de su varianza, la media "
        "de los cuadrados sobre las d_model columnas; con d_model − 1, la corrección de Bessel "
        "que PyTorch aplica por defecto en su std, las filas quedan con varianza "
        "(d_model − 1)/d_model en lugar de 1.",
        "Repasa el paso 8: usa la normalización de capa que ya viene hecha, con la varianza de "
        "cada token dividida por d_model."),
    Misconception("transformer_block.mask_not_passed",
        "No pasas la máscara a multihead",
        "Sin la máscara el bloque deja que cada token vea los tokens futuros, y es la máscara la "
        "que permite procesar toda la secuencia a la vez sin ver la respuesta.",
        "Repasa el paso 8, punto 1: x ← LayerNorm(x + MultiHead(x)), con la misma máscara que "
        "recibe el bloque.",
        seed_error=4),
    Misconception("transformer_block.no_final_norm",
        "Falta la LayerNorm final",
        "En el bloque post-LN la segunda subcapa también termina normalizando, así que cada token "
        "de la salida tiene media 0 y varianza 1.",
        "Repasa el paso 8: salida = LayerNorm(x + FFN(x))."),
    Misconception("transformer_block.ffn_on_block_input",
        "Aplicas la FFN a la entrada del bloque",
        "La FFN procesa el resultado de la primera subcapa, ya mezclado por la atención, no la x "
        "original que entró al bloque.",
        "Repasa el paso 8: primero x ← LayerNorm(x + MultiHead(x)) y después la FFN sobre esa "
        "nueva x."),
)


CATALOG += (
    # --- transformer_block: the FFN and the residuals, step 8 ---------------------------------
    Misconception("transformer_block.leaky_relu",
        "Usas una leaky ReLU en lugar de la ReLU en la FFN",
        "La leaky ReLU deja pasar una fracción de los valores negativos, y la FFN de este bloque "
        "usa la ReLU, que los anula.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2, con ReLU(z) = máx(0, z)."),
    Misconception("transformer_block.no_b1",
        "La FFN no suma el sesgo b_1",
        "El sesgo b_1 se suma antes de la ReLU y decide qué neuronas de la capa oculta se "
        "activan; sin él cambia lo que la FFN suma a cada token.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2."),
    Misconception("transformer_block.no_b2",
        "La FFN no suma el sesgo b_2",
        "El sesgo b_2 es parte de la segunda capa de la FFN: sin él, a cada token le falta el "
        "mismo vector antes de la residual.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2."),
    Misconception("transformer_block.b1_after_relu",
        "Sumas b_1 después de la ReLU",
        "El sesgo b_1 va dentro de la ReLU, sumado a xW_1, porque decide dónde se activa cada "
        "neurona; sumado después de la ReLU ya no puede hacerlo.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2, con b_1 dentro de la ReLU."),
    Misconception("transformer_block.second_residual_from_input",
        "La segunda residual suma la entrada del bloque",
        "La residual de la FFN suma la x que recibe la FFN, la salida de la primera subcapa ya "
        "normalizada, no la x original que entró al bloque.",
        "Repasa el paso 8: primero x ← LayerNorm(x + MultiHead(x)) y después "
        "salida = LayerNorm(x + FFN(x)) con esa nueva x."),
    Misconception("transformer_block.w1_transposed",
        "Multiplicas por la traspuesta de W_1",
        "W_1 tiene forma (d_model, d_ff) y lleva cada token de d_model a d_ff dimensiones tal "
        "cual; su traspuesta solo encaja si d_ff = d_model.",
        "Repasa el paso 8: en xW_1, x tiene forma (n, d_model) y W_1 (d_model, d_ff)."),
    Misconception("transformer_block.one_layer_ffn",
        "Tu FFN tiene una sola capa",
        "La FFN tiene dos capas: la primera lleva cada token a d_ff dimensiones y la segunda, "
        "W_2, lo devuelve a d_model para sumarlo a la residual.",
        "Repasa el paso 8: FFN(x) = ReLU(xW_1 + b_1)W_2 + b_2."),
)


CATALOG += (
    # --- mistakes met in notebooks in the wild (issue 31) --------------------------------------
    Misconception("attention.column_max_shift",
        "Restas el máximo de cada columna, no el de cada fila, antes de la softmax",
        "Restar una constante no cambia la softmax solo si es la misma en toda la fila; el máximo "
        "de cada columna es distinto para cada clave, así que cambia los pesos de cada consulta.",
        "Repasa el paso 3: la softmax de cada fila resta el máximo de esa fila, "
        "e^(z − máx z) / Σ e^(z − máx z); la softmax que ya viene hecha lo hace así."),
    Misconception("attention.squeezed",
        "Quitas con squeeze el eje de tamaño 1 de la salida y de los pesos",
        "Con una sola consulta (n = 1), la salida tiene que seguir siendo una matriz de forma "
        "(1, d_v) y los pesos de forma (1, m); .squeeze() los convierte en vectores, y quien "
        "llame a attention con una sola consulta recibe una forma distinta de la prometida.",
        "Repasa el paso 3: devuelve la salida y los pesos con su forma de matriz, sin quitar "
        "el eje de las consultas aunque solo haya una."),
    Misconception("positional_encoding.exponent_over_d_minus_one",
        "Divides el exponente por d_model − 1 en lugar de por d_model",
        "Con 2i/(d_model − 1) cada frecuencia baja un poco más deprisa de lo que debe, y la "
        "diferencia cambia con d_model: no es otra base fija, es otro exponente.",
        "Repasa el paso 7: ω_i = 1 / 10000^(2i/d_model), con d_model, el número de columnas, "
        "en el denominador del exponente."),
    Misconception("positional_encoding.exponent_2i_plus_1",
        "Usas 2i + 1 en el exponente en lugar de 2i",
        "La pareja i de columnas (2i y 2i + 1) comparte la frecuencia 1/10000^(2i/d_model): con "
        "2i + 1 todas las frecuencias bajan un paso, y la primera ya no es ω_0 = 1.",
        "Repasa el paso 7: el exponente es 2i/d_model para las dos columnas de la pareja i, así "
        "que ω_0 = 1 y la columna 0 es sin(pos)."),
    Misconception("positional_encoding.cos_everywhere",
        "Pones un coseno en todas las columnas",
        "Las columnas pares llevan el seno y las impares el coseno de la misma frecuencia: es esa "
        "pareja la que hace de avanzar k posiciones una rotación.",
        "Repasa el paso 7: PE(pos, 2i) = sin(pos · ω_i) y PE(pos, 2i + 1) = cos(pos · ω_i)."),
    # Named by what it does to the output: dividing Concat·W_O by h and averaging the heads'
    # products with their blocks of W_O are one number, whichever way the code wrote it.
    Misconception("multihead.divided_by_h",
        "Divides la salida por el número de cabezas (o promedias las cabezas en lugar de sumarlas)",
        "Tu salida es la correcta dividida por h: Concat(head_1, …, head_h)·W_O es la suma de "
        "cada cabeza por su bloque de filas de W_O, y esa suma no se divide por el número de "
        "cabezas.",
        "Repasa el paso 6: MultiHead(X) = Concat(head_1, …, head_h)·W_O, sin dividir por h ni "
        "hacer la media de las cabezas."),
    Misconception("transformer_block.layer_norm_on_ffn_only",
        "Normalizas solo la salida de la FFN, no la suma con la residual",
        "La segunda subcapa normaliza la suma x + FFN(x); normalizando solo FFN(x) y sumando "
        "después la residual, los tokens de salida no tienen media 0 ni varianza 1.",
        "Repasa el paso 8: salida = LayerNorm(x + FFN(x)), con la suma dentro de la "
        "normalización."),
)


def for_function(function):
    """The catalog entries of one graded function, in catalog order."""
    return [entry for entry in CATALOG if entry.function == function]


def get(misconception_id):
    for entry in CATALOG:
        if entry.id == misconception_id:
            return entry
    raise KeyError(f"no misconception {misconception_id!r}")
