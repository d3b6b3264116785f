"""Diagnoses beyond the catalog: properties of the student's output on the failing case.

A catalogued mutant names one exact mistake. These checks ask broader questions of the output
itself, so they also name mistakes written in ways the catalog never imagined:

* multihead: is the output the sum or the mean of the heads, one head alone, the same head in
  every block, or the right heads in another order?
* positional_encoding: which frequencies do omega and pe really use? Their law is fitted
  (ω_i = ω_0 · r^i) and its start, base and exponent are judged separately; the notebook's
  ω_i = 1/10000^(2i/d_model) has ω_0 = 1 and d_model·ln(1/r) = 2·ln 10000. With an odd
  d_model: an extra column, or a frequency missing.
* transformer_block: does the output match a LayerNorm with a larger epsilon (fitted)?

Each check rebuilds what it claims from trusted code (the reference, the mutants'
implementations) and compares it with the student's output within the grading tolerances,
so a finding is only reported when it reproduces the output. Pure: plain arrays in, Spanish
out; no hidden value is quoted (sizes and the student's own constants may be).
"""

import math
from itertools import permutations

import numpy as np

from reference import attention as reference
from kit_autograder.verdicts.compare import same_within
from kit_autograder.verdicts.outcome import Failure

from . import tolerances
from .mutants import Mutant


def _same(a, b):
    return same_within(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                       atol=tolerances.ATOL, rtol=tolerances.RTOL)


def _finding(finding_id, message, readings=()):
    """A finding; with ``readings``, ``message`` has a ``{readings}`` slot for the ways of
    writing the formula that give exactly this output, and ``diagnose.summarize`` keeps only
    those every failing case shares."""
    details = {"kind": "finding", "id": finding_id}
    if readings:
        details.update(frame=message, readings=list(readings))
        message = message.format(readings=READINGS_JOIN.join(readings))
    return Failure(message, None, details)


READINGS_JOIN = "; o bien, porque da las mismas frecuencias, "


# --- every function: the precision of float16 --------------------------------------------------

# Evidence of half precision: this many entries that are float16 numbers needing most of its
# 11 significant bits. Simple numbers (0, 1, ½, ¾...) are float16 numbers in any precision:
# an omega of ones, or a causal row of weights 1, says nothing about the precision.
FLOAT16_ENTRIES = 4
RICH_BITS = 8


def _float16(array):
    """Every entry is a float16 number, and enough of them need most of its bits."""
    # The one reading of it, shared with the notebook's checks, which say the same.
    from public_checks import float16_valued

    return float16_valued(array, FLOAT16_ENTRIES, RICH_BITS)


def precision_findings(parts, expected, part_names):
    """A returned part every entry of which is a float16 number, where the reference's is not:
    the function computed in half precision, about three significant digits, whose rounding
    the tolerance does not cover. The sandbox hands every part over as float64, so the values
    keep the precision they were computed in."""
    for name, part, reference_part in zip(part_names, parts, expected):
        if (part.shape == reference_part.shape and _float16(part)
                and not _float16(reference_part)):
            return [_finding("precision.float16", FLOAT16_WORDS.format(name=name))]
    return []


# What precision_findings says of a part ``{name}`` (the notebook's checks say it too).
FLOAT16_WORDS = ("{name} tiene la precisión de float16: todos sus valores son números de media "
                 "precisión, con unas 3 cifras significativas, y sus redondeos superan la "
                 "tolerancia; calcula en float64, el tipo por defecto de NumPy (o en float32), y "
                 "no conviertas a float16")


# --- multihead ----------------------------------------------------------------------------------


def _head_outputs(inputs):
    X, mask = inputs["X"], inputs.get("mask")
    return [reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
            for W_Q, W_K, W_V in inputs["heads"]]


def multihead_findings(inputs, parts, expected):
    output, W_O = parts[0], inputs["W_O"]
    heads = _head_outputs(inputs)
    h, (n, d_v) = len(heads), heads[0].shape
    total = sum(heads)
    concat = " una al lado de la otra, Concat(head_1, …, head_h), de forma (n, h·d_v)"
    candidates = []
    if output.shape == (n, d_v) and h > 1:
        # With one head, its sum, its mean and the head alone are that head: what is missing is
        # W_O, which the catalogue's multihead.no_w_o says; a "sum" would be no mistake there.
        candidates += [
            ("multihead.sum_of_heads", total,
             "tu salida es la suma de las cabezas, sin W_O: las cabezas no se suman, se ponen"
             + concat + ", y eso se multiplica por W_O (paso 6)"),
            ("multihead.mean_of_heads", total / h,
             "tu salida es la media de las cabezas, sin W_O: las cabezas no se promedian, se "
             "ponen" + concat + ", y eso se multiplica por W_O (paso 6)")]
        candidates += [
            ("multihead.one_head_only", head,
             f"tu salida es solo la cabeza head_{i + 1}, sin las demás y sin W_O: "
             "MultiHead(X) = Concat(head_1, …, head_h)·W_O (paso 6)")
            for i, head in enumerate(heads)]
    elif output.shape == (n, W_O.shape[1]) and W_O.shape[0] == h * d_v:
        first_block = W_O[:d_v]
        candidates += [
            ("multihead.sum_of_heads", total @ first_block,
             "tu salida es la suma de las cabezas multiplicada solo por las primeras d_v filas "
             "de W_O: las cabezas no se suman, se ponen" + concat + ", y esa matriz se "
             "multiplica por W_O entera (paso 6)"),
            ("multihead.mean_of_heads", total / h @ first_block,
             "tu salida es la media de las cabezas multiplicada solo por las primeras d_v filas "
             "de W_O: las cabezas no se promedian, se ponen" + concat + ", y esa matriz se "
             "multiplica por W_O entera (paso 6)")]
        # The sum (or mean) of the heads written into every head's block: no head's own
        # output is in the concatenation, whatever loop or array built it.
        candidates += [
            ("multihead.sum_of_heads_repeated", np.concatenate([total] * h, axis=1) @ W_O,
             "cada bloque de d_v columnas de tu concatenación es la suma de todas las cabezas, "
             "la misma en los h bloques: las cabezas no se suman, se ponen" + concat + ", cada "
             "una en su bloque, y esa matriz se multiplica por W_O (paso 6)"),
            ("multihead.mean_of_heads_repeated", np.concatenate([total / h] * h, axis=1) @ W_O,
             "cada bloque de d_v columnas de tu concatenación es la media de todas las cabezas, "
             "la misma en los h bloques: las cabezas no se promedian, se ponen" + concat + ", "
             "cada una en su bloque, y esa matriz se multiplica por W_O (paso 6)")] if h > 1 else []
        candidates += [
            ("multihead.same_head_everywhere", np.concatenate([head] * h, axis=1) @ W_O,
             f"en tu salida todas las cabezas valen lo mismo que head_{i + 1}: cada cabeza i "
             "usa sus propias matrices W_i^Q, W_i^K y W_i^V; revisa que cada cabeza tome las de "
             "su tupla de heads, y no siempre las mismas (paso 6)")
            for i, head in enumerate(heads)]
        candidates += [
            ("multihead.heads_out_of_order", np.concatenate([heads[i] for i in order], axis=1)
             @ W_O,
             "cada cabeza está bien calculada, pero las concatenas en otro orden: head_1 va en "
             "las primeras d_v columnas de la concatenación, head_2 en las siguientes, y así, "
             "porque cada bloque de filas de W_O corresponde a una cabeza (paso 6)")
            for order in (permutations(range(h)) if h <= 4 else [range(h)[::-1]])
            if list(order) != list(range(h))]
    for finding_id, candidate, message in candidates:
        if _same(output, candidate):
            return [_finding(finding_id, message)]
    if output.shape == (n, W_O.shape[1]) and W_O.shape[0] == h * d_v:
        return _same_blocks(output, W_O, h, d_v)
    return []


def _same_blocks(output, W_O, h, d_v):
    """Every head's block of the concatenation is one same (n, d_v) array B, whichever head it
    came from: then output = B·S, with S the sum of W_O's blocks of rows, so each row of the
    output lies in the d_v rows' span of S. With d_v < d_model that is a real constraint,
    which any other output misses."""
    S = sum(np.vsplit(W_O, h))
    # NaN everywhere fits any span: heads that all give NaN are not «the same head».
    if h < 2 or d_v >= W_O.shape[1] or not np.isfinite(output).all():
        return []
    B = np.linalg.lstsq(S.T, output.T, rcond=None)[0].T
    if not _same(output, B @ S):
        return []
    return [_finding("multihead.same_head_everywhere",
                     "en tu salida todas las cabezas dan el mismo resultado: cada cabeza i usa "
                     "sus propias matrices W_i^Q, W_i^K y W_i^V, así que sus salidas deberían "
                     "ser distintas; revisa qué matrices usa cada cabeza y qué pones en cada "
                     "bloque de d_v columnas de la concatenación (paso 6)")]


# --- positional_encoding ----------------------------------------------------------------------

# Round bases a student might write; with the exponent i/d_model only up to the notebook's.
BASES = (10, 100, 1000, 10000, 100000)


def frequency_law(omega, d_model):
    """(ω_0, d_model·ln(1/r)) when ``omega`` is geometric, ω_i = ω_0·r^i; None otherwise."""
    if omega.ndim != 1 or omega.size < 2 or not np.isfinite(omega).all() or (omega <= 0).any():
        return None
    i, logs = np.arange(omega.size), np.log(omega)
    slope, intercept = np.polyfit(i, logs, 1)
    if np.abs(intercept + slope * i - logs).max() > 1e-4:
        return None
    return math.exp(intercept), -slope * d_model


def _close(a, b):
    return abs(a - b) <= 1e-3 * abs(b)


def _reading(step, base):
    """One way of writing these frequencies, judged part by part against 1/10000^(2i/d_model)."""
    exponent = "2i/d_model" if step == 2 else "i/d_model"
    if base == 10000:
        return f"el exponente es {exponent} en lugar de 2i/d_model; la base 10000 está bien"
    if step == 2:
        return f"la base es {base} en lugar de 10000; el exponente 2i/d_model está bien"
    return f"el exponente es {exponent} en lugar de 2i/d_model y la base es {base} en lugar de 10000"


def _other_laws(decay, d_model, n_positions):
    """Other ways of writing the formula whose frequencies (with ω_0 = 1) decay exactly as
    these do, each said; several when this case cannot tell them apart."""
    ln, said = math.log(10000), []
    if _close(decay, 4 * ln):
        said.append("el exponente es 4i/d_model en lugar de 2i/d_model: si tu i ya es el índice "
                    "de la columna par (0, 2, 4, …), no lo multipliques otra vez por 2; la base "
                    "10000 está bien")
    if _close(decay * (d_model + 1) / d_model, 2 * ln):
        said.append("el exponente se divide por d_model + 1 en lugar de por d_model: "
                    "2i/(d_model + 1) en lugar de 2i/d_model (¿los índices pares salen de un "
                    "np.linspace o un np.arange con otro paso que 2?); la base 10000 está bien")
    if n_positions and _close(decay * n_positions / d_model, 2 * ln):
        said.append("el exponente se divide por n_positions en lugar de por d_model: "
                    "2i/n_positions en lugar de 2i/d_model; la base 10000 está bien")
    pairs = (d_model + 1) // 2
    if pairs > 2 and _close(decay * (pairs - 1) / d_model, ln):  # decay is d_model·ln(1/r)
        # ω reaches 1/10000 at its last pair, which 2i/d_model < 1 never does: a range from
        # 1 to 1/10000 with its end included (a nineteenth blind probe's np.geomspace).
        said.append("tu última frecuencia vale justo 1/10000, y con ω_i = 1/10000^(2i/d_model) "
                    "nunca llega a ese valor, porque 2i < d_model: es lo que da repartir las "
                    "frecuencias entre 1 y 1/10000 con el extremo incluido (np.geomspace, o "
                    "np.linspace en el exponente); la base 10000 está bien")
    if _close(decay, 2 * ln * math.log(2)):
        said.append("decrecen como si la base fuera otra: es lo que da escribir "
                    "10000^(−2i/d_model) como exp(−2i·log(10000)/d_model) con np.exp2, que "
                    "eleva 2 y no e, en lugar de np.exp")
    for name, logarithm in (("np.log10", math.log10), ("np.log2", math.log2)):
        if _close(decay, 2 * logarithm(10000)):
            said.append("decrecen como si la base fuera otra: es lo que da escribir "
                        "10000^(−2i/d_model) como exp(−2i·log(10000)/d_model) con "
                        f"{name} en lugar de np.log, el logaritmo natural")
    return said


def describe_frequencies(omega, d_model, n_positions=None):
    """What is wrong with these frequencies, in Spanish, with their start, base and exponent
    judged separately; None when they are right or follow no law this can name.

    Base B with exponent 2i/d_model gives the same frequencies as base B² with i/d_model, so
    when both readings use round bases both are said.
    """
    law = frequency_law(omega, d_model)
    if law is None:
        return None, []
    start, decay = law
    if _close(start, 1 / d_model) and _close(decay, 2 * math.log(10000) * d_model):
        return ("son 10000^(−2i)/d_model: sin paréntesis, la potencia se calcula antes que "
                "la división; el exponente entero va entre paréntesis, "
                "10000 ** (−2i / d_model)"), []
    if abs(decay) < 1e-6:  # ω_i = ω_0 for every pair: the exponent never grows
        if _close(start, 1.0):
            # Both causes give every ω_i = 1 (an eighteenth blind probe's base n_positions
            # was told the first on its one-position case): say both, claim neither.
            return ("todas valen 1: la potencia de cada pareja vale 1, porque el exponente "
                    "2i/d_model vale 0 en todas (es lo que da la división entera, 2i // "
                    "d_model, que es 0 mientras 2i < d_model) o porque la base vale 1 en lugar "
                    "de 10000"), []
        return "todas valen lo mismo, cuando deberían decrecer desde 1 hacia 1/10000", []
    problems = []
    if not _close(start, 1.0):
        problems.append("la primera no vale ω_0 = 1 (el exponente de la primera pareja es 0)")
    readings = [(step, base) for step in (2, 1) for base in BASES
                if _close(decay, step * math.log(base)) and (step == 2 or base <= 10000)]
    if decay < 0:
        problems.append("crecen con i, cuando deberían decrecer desde 1 hacia 1/10000, "
                        "ω_i = 1/10000^(2i/d_model)")
    elif (2, 10000) in readings:
        pass
    elif readings or (_close(start, 1.0) and _other_laws(decay, d_model, n_positions)):
        # Every reading that gives exactly these frequencies: one that this case cannot tell
        # from another is not said alone.
        laws = _other_laws(decay, d_model, n_positions) if _close(start, 1.0) else []
        problems.append("{readings}")
        return "; ".join(problems), [_reading(step, base) for step, base in readings] + laws
    else:
        problems.append("decrecen a otro ritmo: de una pareja a la siguiente deberían "
                        "dividirse por 10000^(2/d_model), con la base 10000 y el exponente "
                        "2i/d_model")
    return "; ".join(problems) if problems else None, []


def frequencies_in_pe(pe, d_model):
    """The frequency of each pair of columns when ``pe`` is the notebook's layout (sin(pos·ω_i)
    in column 2i, cos(pos·ω_i) in 2i + 1) with some frequencies; None otherwise."""
    if pe.ndim != 2 or pe.shape[1] != d_model or pe.shape[0] < 2:
        return None
    sines, cosines = pe[1, 0::2], pe[1, 1::2]
    omega = np.arctan2(sines[: cosines.size], cosines)
    if sines.size > cosines.size:  # odd d_model: the last column is a sine alone
        omega = np.append(omega, np.arcsin(np.clip(sines[-1], -1, 1)))
    rebuilt = np.zeros_like(pe)
    angles = np.arange(pe.shape[0])[:, None] * omega
    rebuilt[:, 0::2], rebuilt[:, 1::2] = np.sin(angles), np.cos(angles[:, : cosines.size])
    return omega if _same(pe, rebuilt) else None


def _angle_factor(in_pe, omega, n_positions):
    """When pe's frequencies are the right ones times one number c, what c says: the angles
    turned from degrees to radians, or the positions divided by their number; else None."""
    factor = float(in_pe[0] / omega[0])
    if not _same(in_pe, factor * omega) or _close(factor, 1.0):
        return None
    return angle_factor_words(factor, n_positions)


def angle_factor_words(factor, n_positions):
    """What every angle of pe multiplied by one number ``factor`` says, in Spanish."""
    # The factor is named by what it is where that is case-independent, so that every failing
    # case says the same sentence; a number only when nothing names it.
    said = "cada ángulo pos·ω_i de pe está multiplicado por un mismo número"
    if _close(factor, 2 * math.pi):
        return (f"{said}, 2π: ω_i ya es una frecuencia en radianes por posición, y el ángulo "
                "es pos·ω_i, sin multiplicar por 2π")
    if n_positions > 1 and _close(factor, n_positions / (n_positions - 1)):
        return (f"{said}, n_positions/(n_positions − 1): es lo que da tomar las posiciones de "
                "np.linspace(0, n_positions, n_positions), que no son 0, 1, 2, …; "
                "np.arange(n_positions) sí")
    if _close(factor, math.pi / 180):
        return (f"{said}, π/180: conviertes los ángulos de grados a radianes (np.radians o "
                "np.deg2rad), pero pos·ω_i ya está en radianes: no conviertas nada")
    for count, written in ((n_positions - 1, "n_positions − 1"), (n_positions, "n_positions")):
        if count > 0 and _close(factor, 1 / count):
            return (f"{said}, 1/({written}): divides cada posición por {written}, y las "
                    "posiciones son 0, 1, 2, …, n_positions − 1, sin normalizarlas entre 0 y 1")
    number = f"{factor:.4g}".replace(".", ",")
    return f"{said}, {number}; el ángulo es pos·ω_i, sin ningún factor más"


def positional_encoding_findings(inputs, parts, expected):
    pe, omega = parts
    n_positions, d_model = inputs["n_positions"], inputs["d_model"]
    expected_pe, expected_omega = expected
    findings = []
    if d_model % 2 and pe.shape == (n_positions, d_model + 1):
        findings.append(_finding(
            "positional_encoding.odd_extra_column",
            f"con d_model impar ({d_model}) tu pe tiene una columna de más: al intercalar senos "
            f"y cosenos salen {d_model + 1}; la última columna es un seno sin su coseno, así que "
            "pe tiene exactamente d_model columnas (paso 7)"))
    if d_model % 2 and omega.shape == (d_model // 2,):
        findings.append(_finding(
            "positional_encoding.omega_short",
            f"omega tiene {d_model // 2} frecuencias y con d_model impar ({d_model}) hacen "
            f"falta {(d_model + 1) // 2}, una por pareja, contando la última columna, un seno "
            "sin coseno (paso 7)"))
    omega_right = omega.shape == expected_omega.shape and _same(omega, expected_omega)
    if (not omega_right and omega.shape == expected_omega.shape and omega.size > 1
            and _same(omega, expected_omega[::-1])):
        findings.append(_finding(
            "positional_encoding.omega_reversed",
            "tu omega tiene las frecuencias correctas, pero al revés: de la más lenta a la más "
            "rápida. ω_0 = 1 es la de la primera pareja de columnas, y decrecen con i (paso 7)"))
        return findings
    in_pe = frequencies_in_pe(pe, d_model) if pe.shape == expected_pe.shape else None
    if not omega_right and omega.shape == expected_omega.shape:
        wrong, readings = describe_frequencies(omega, d_model, n_positions)
        if wrong:
            same_in_pe = in_pe is not None and _same(in_pe, omega)
            # With two positions or more pe measures its frequencies: right there, the omega
            # returned is not the one its angles used (a nineteenth blind probe's divisor).
            pe_right = (n_positions > 1 and pe.shape == expected_pe.shape
                        and _same(pe, expected_pe))
            findings.append(_finding(
                "positional_encoding.frequencies",
                f"las frecuencias de tu omega no son las del cuaderno: {wrong}"
                + ("; pe está bien construida a partir de ellas" if same_in_pe else
                   "; tu pe sí es la correcta, así que la omega que devuelves no es la que "
                   "usas en sus ángulos" if pe_right else "")
                + " (paso 7)", readings))
    elif omega_right and in_pe is not None and not _same(in_pe, expected_omega):
        scaled = _angle_factor(in_pe, expected_omega, n_positions)
        wrong, readings = (scaled, []) if scaled else describe_frequencies(in_pe, d_model,
                                                                             n_positions)
        if wrong:
            findings.append(_finding(
                "positional_encoding.frequencies",
                f"omega es correcta, pero no las frecuencias con las que construyes pe: {wrong} "
                "(paso 7)", readings))
    return findings


# --- transformer_block ----------------------------------------------------------------------------


def _superscript(exponent):
    return str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def fitted_epsilon(inputs, output):
    """The LayerNorm epsilon, used in both of the block's norms, that reproduces ``output``, or
    None. Searched on a logarithmic grid from 10⁻⁵ to 10⁻¹ and refined between the best
    point's neighbours: the output moves smoothly with epsilon, most where a row's variance is
    small, which is where the first norm's epsilon shows as much as the last one's."""
    def error(log_eps):
        return np.abs(Mutant.of("transformer_block", eps=10 ** log_eps)(**inputs) - output).max()

    grid = np.linspace(-5, -1, 33)
    errors = [error(x) for x in grid]
    best = int(np.argmin(errors))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(30):  # golden-section search on log10(epsilon)
        a, b = high - 0.618 * (high - low), low + 0.618 * (high - low)
        if error(a) < error(b):
            high = b
        else:
            low = a
    eps = 10 ** ((low + high) / 2)
    return eps if _same(output, Mutant.of("transformer_block", eps=eps)(**inputs)) else None


def transformer_block_findings(inputs, parts, expected):
    """A LayerNorm whose epsilon is larger than the given layer_norm's, found by rebuilding the
    block with the epsilon that fits the student's output (``fitted_epsilon``)."""
    output = parts[0]
    if output.shape != expected[0].shape or np.abs(output.mean(axis=-1)).max() > tolerances.ATOL:
        return []
    eps = fitted_epsilon(inputs, output)
    # Above 0.1 it would be no epsilon anyone writes, but another mistake that shrinks rows.
    if eps is None or not tolerances.LAYER_NORM_EPS[1] < eps <= 0.1:
        return []
    power = round(math.log10(eps))
    return [_finding(
        "transformer_block.layer_norm_epsilon",
        f"tu salida coincide con la de un bloque correcto cuya LayerNorm usa ε ≈ "
        f"10{_superscript(power)}, más grande que el 10⁻⁵ de la layer_norm que viene hecha: un "
        "ε tan grande cambia la normalización de las filas con poca varianza; usa la "
        "layer_norm dada, o tu propia versión con ε = 10⁻⁵ o menor (paso 8)")]


FINDINGS = {
    "attention": lambda inputs, parts, expected: [],
    "multihead": multihead_findings,
    "positional_encoding": positional_encoding_findings,
    "transformer_block": transformer_block_findings,
}
