"""Where a ``positional_encoding`` that no catalogued mistake explains first departs, in the
order of step 7's formula: the frequencies ω_i, then the sines of the even columns and the
cosines of the odd ones, each rebuilt from the student's own ω (right by then), then the angles
pos·ω_i row by row.

Before the row of position 0 and the angles, two forms measured exactly: every column a sine or cosine of
one of the student's frequencies but not its pair's (np.tile for np.repeat), and the right values
in the wrong cells (a stack and a reshape).

The function has no other input than two sizes, so no probe is needed: its answer on the case
is split into those parts and each is compared with what the formula gives. The messages name
a part of the formula, never a value or an index that depends on the case.
"""

import numpy as np

from reference import attention as reference

from . import findings, tolerances
from .probe_compare import agrees

OMEGA_ATOL = tolerances.atol("positional_encoding", 1)  # as the judge compares omega

OMEGA = "positional_encoding.located_omega"
SINES = "positional_encoding.located_sines"
COSINES = "positional_encoding.located_cosines"
ROW_ZERO = "positional_encoding.located_row_zero"
ANGLES = "positional_encoding.located_angles"


def _rounded(omega, expected):
    """The decimals the right frequencies were rounded to, if they were."""
    for digits in range(1, 6):
        if np.array_equal(omega, np.round(expected, digits)):
            return digits
    return None


def _omega(omega, expected, pe_right):
    # Where they part depends on the case's d_model, and one message is said for every failing
    # case, so only "the first is already wrong" or "the first is right" is said.
    where = ("tus frecuencias omega: la primera, ω_0 = 1, está bien, pero no todas las "
             "siguientes son ω_i = 1/10000^(2i/d_model)")
    if not agrees(omega[0], expected[0], OMEGA_ATOL):
        where = ("tus frecuencias omega: ya la primera no es ω_0 = 1, y deberían ser "
                 "ω_i = 1/10000^(2i/d_model)")
    digits = _rounded(omega, expected)
    if digits is not None:
        where = (f"tus frecuencias omega: son las correctas redondeadas a {digits} decimales, "
                 "y las últimas, mucho menores que 1, pierden casi todas sus cifras: no las "
                 "redondees")
    found = (OMEGA, f"el fallo está en {where} (paso 7)")
    if not pe_right:
        return found
    # A case whose pe is right anyway (rounding that stays within the tolerance) says more;
    # the engine says the plain place if another case cannot.
    where += "; pe, en cambio, está bien, así que devuelves otra omega que la que usas"
    return [(f"{OMEGA}_returned_only", f"el fallo está en {where} (paso 7)"), found]


INTEGERS = "positional_encoding.located_integers"
ZERO_COLUMNS = "positional_encoding.located_zero_columns"
OMEGA_PER_COLUMN = "positional_encoding.located_omega_per_column"
POS_AND_I_SWAPPED = "positional_encoding.located_pos_and_i_swapped"
ROWS_REVERSED = "positional_encoding.located_rows_reversed"
ROWS_NORMALISED = "positional_encoding.located_rows_normalised"
OTHER_ARGUMENTS = "positional_encoding.located_other_arguments"
PLACES = "positional_encoding.located_places"
COLUMN_FREQUENCIES = "positional_encoding.located_column_frequencies"
OMEGA_IS_ANGLES = "positional_encoding.located_omega_is_angles"
COLUMNS_SHIFTED = "positional_encoding.located_columns_shifted"
FIXED_TABLE = "positional_encoding.located_fixed_table"
PHASES = "positional_encoding.located_phases"
ROWS_AND_COLUMNS_SWAPPED = "positional_encoding.located_rows_and_columns_swapped"
FLAT_INTERLEAVED = "positional_encoding.located_flat_interleaved"
POSITIONS_RESTART = "positional_encoding.located_positions_restart"
RESCALED = "positional_encoding.located_rescaled"
ANGLES_OF_PAIRS = "positional_encoding.located_angles_of_pairs"
ODD_COLUMNS_ZERO = "positional_encoding.located_odd_columns_zero"
ANGLES_SCALED = "positional_encoding.located_angles_scaled"
ROWS_ALTERNATE = "positional_encoding.located_rows_alternate"
# A phase is fitted from the rows, two unknowns per column: fewer positions fit anything.
MIN_FITTED_POSITIONS = 4
# Larger answers are not rebuilt to be compared: no case asks for one.
MAX_REBUILT = 4096
# Asked again with each size this much larger: an answer that grows with both follows its
# arguments, and is not another call's.
OTHER_SIZE = 3


def _trailing_zero_columns(pe):
    """How many columns at the right of ``pe`` are 0 at every position."""
    zero = np.all(np.abs(pe) <= tolerances.ATOL, axis=0)
    return int(np.argmin(zero[::-1])) if not zero.all() else pe.shape[1]


def _rows_alternate(pe, omega):
    """True when the even rows of ``pe`` are all sines and the odd rows all cosines of each
    column's angle: sines and cosines alternated by rows (pe[0::2]) instead of columns."""
    if pe.shape[0] < 2:
        return False
    angles = np.arange(pe.shape[0])[:, None] * np.repeat(omega, 2)[: pe.shape[1]]
    return agrees(pe[0::2], np.sin(angles[0::2])) and agrees(pe[1::2], np.cos(angles[1::2]))


def _odd_columns_zero(pe):
    """True when every odd column of ``pe`` is 0 at every position and some even one is not."""
    small = np.abs(pe) <= tolerances.ATOL
    return pe.shape[1] > 1 and bool(small[:, 1::2].all()) and not small[:, 0::2].all()


def _swapped(n_positions, d_model):
    """pe with pos and i swapped in the angle: sin(i / 10000^(2·pos/d_model)) and its cosine."""
    rows, pairs = np.arange(n_positions)[:, None], np.arange((d_model + 1) // 2)[None, :]
    angles = pairs / 10000 ** (2 * rows / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles[:, : d_model // 2])
    return pe


def _affine(pe, expected_pe):
    """(a, b) when ``pe`` is a·expected_pe + b for one a and one b, not (1, 0) and a ≠ 0:
    the right encoding rescaled or shifted as a whole; else None."""
    values = expected_pe.ravel()
    if np.unique(np.round(values, 9)).size < 3:
        return None  # through two values (one position: 0s and 1s) any line passes
    a, b = np.polyfit(values, pe.ravel(), 1)
    if abs(a) <= tolerances.ATOL or (abs(a - 1) <= tolerances.RTOL and abs(b) <= tolerances.ATOL):
        return None
    return (float(a), float(b)) if agrees(pe, a * expected_pe + b) else None


def _rows_and_columns_swapped(n_positions, d_model):
    """pe with the row index and the column index swapped: pe[p, j] is the sine (p even) or
    cosine (p odd) of j·ω_(p//2), the frequencies still of d_model (np.indices or np.meshgrid
    unpacked in the wrong order)."""
    omega = 1 / 10000 ** (2 * np.arange((n_positions + 1) // 2) / d_model)
    return _waves(d_model, omega)[:, :n_positions].T


def _flat_interleaved(n_positions, d_model, omega):
    """pe with sines and cosines of the right ``omega`` alternated in row-major order over the
    whole array (pe.flat[0::2], pe.flat[1::2]) rather than within each row: the same for
    d_model even, and from row 1 on the wrong cells (NumPy repeating or cutting the values)
    when odd."""
    angles = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe.flat[0::2] = np.sin(angles).ravel()
    pe.flat[1::2] = np.cos(angles)[:, : d_model // 2].ravel()
    return pe


ROWS_REVERSED_PLACE = (
    ROWS_REVERSED,
    "el orden de las filas: tu pe es la correcta con las filas al revés, así que cuentas las "
    "posiciones desde el final. La fila 0 es la posición 0, (0, 1, 0, 1, …), y la última, la "
    "posición n_positions − 1 (paso 7)")
POS_AND_I_SWAPPED_PLACE = (
    POS_AND_I_SWAPPED,
    "el ángulo: intercambias pos e i, y calculas sin(i / 10000^(2·pos/d_model)). El ángulo de "
    "la posición pos en la pareja i es pos·ω_i = pos / 10000^(2i/d_model): la posición "
    "multiplica, y el índice de la pareja va en el exponente (paso 7)")
ROWS_AND_COLUMNS_SWAPPED_PLACE = (
    ROWS_AND_COLUMNS_SWAPPED,
    "qué es fila y qué es columna: en tu pe, el índice de la columna hace de posición, y el de "
    "la fila elige la frecuencia y si es seno o coseno, pe[p, j] = sin(j·ω_(p//2)). "
    "¿Desempaquetas np.indices o np.meshgrid en el orden al revés? La fila es la posición y la "
    "columna la pareja: pe[pos, 2i] = sin(pos·ω_i) y pe[pos, 2i + 1] = cos(pos·ω_i) (paso 7)")
FLAT_INTERLEAVED_PLACE = (
    FLAT_INTERLEAVED,
    "cómo alternas senos y cosenos: los alternas sobre todo el array aplanado (pe.flat[0::2], "
    "o un ravel), no dentro de cada fila. Con d_model impar cada fila tiene un seno más que "
    "cosenos, así que desde la fila 1 la alternancia cae en otras columnas. Alterna por "
    "columnas, fila a fila: pe[:, 0::2] = senos y pe[:, 1::2] = cosenos (paso 7)")


def _said(place):
    return place[0], f"el fallo está en {place[1]}"


def swapped_forms(inputs, expected_omega):
    """``[(pe, place)]``: the pe of an angle or a layout swapped, in _whole_forms's order
    (None where the form does not apply)."""
    n_positions, d_model = inputs["n_positions"], inputs["d_model"]
    return [(_swapped(n_positions, d_model), POS_AND_I_SWAPPED_PLACE),
            (_rows_and_columns_swapped(n_positions, d_model), ROWS_AND_COLUMNS_SWAPPED_PLACE),
            (_flat_interleaved(n_positions, d_model, expected_omega) if d_model % 2 else None,
             FLAT_INTERLEAVED_PLACE)]


def _whole_forms(pe, omega, expected_pe, expected_omega, inputs):
    """A whole wrong form that the answer shows at once, or None: every value an integer,
    the last columns never filled, one ω per column, pos and i swapped in the angle."""
    d_model = inputs["d_model"]
    if pe.shape == expected_pe.shape and pe.size and not agrees(pe, expected_pe):
        # Where the right answer is itself all integers (one position: 0s and 1s), an
        # integer answer says nothing about its type; and integers that are not the right
        # values truncated (rows of (0, 1, 0, 1, …) from angles of 0) are no integer type.
        if (np.array_equal(pe, np.round(pe))
                and not np.array_equal(expected_pe, np.round(expected_pe))
                and np.array_equal(pe, np.trunc(expected_pe))):
            return INTEGERS, (
                "el fallo está en el tipo de tu pe: todos sus valores son números enteros, "
                "porque cada seno y coseno se trunca al guardarlo en un array de enteros. Crea "
                "pe con np.zeros((n_positions, d_model)), que es de números reales (float), no "
                "con dtype=int ni a partir de un array de enteros (paso 7)")
        zeros = _trailing_zero_columns(pe)
        kept = pe.shape[1] - zeros
        # Columns left at 0 by a loop that stops early, not by frequencies that are 0.
        omega_wrong = omega.shape == expected_omega.shape and not agrees(omega, expected_omega,
                                                                         OMEGA_ATOL)
        if (0 < zeros < pe.shape[1] and not omega_wrong
                and agrees(pe[:, :kept], expected_pe[:, :kept])):
            return ZERO_COLUMNS, (
                "el fallo está en las columnas que rellenas: las primeras están bien, pero las "
                "últimas valen 0 en todas las posiciones, así que tu bucle se para antes de "
                "llegar a la última pareja de columnas. Hay una frecuencia por pareja, "
                "⌈d_model/2⌉ en total, y cada pareja ocupa dos columnas (paso 7)")
        if pe.shape[0] > 1 and agrees(pe, expected_pe[::-1]):
            return _said(ROWS_REVERSED_PLACE)
        affine = _affine(pe, expected_pe)
        if affine is not None:
            a, b = (f"{v:.2f}".replace(".", ",").replace("-", "−") for v in affine)
            return RESCALED, (
                f"el fallo está en lo que haces después de los senos y cosenos: tu pe es la "
                f"correcta multiplicada por {a} y sumada {b} (¿la llevas a [0, 1], con "
                "(pe + 1)/2, o la normalizas?). pe son los senos y cosenos tal cual, entre −1 "
                "y 1: la fila 0 es (0, 1, 0, 1, …) (paso 7)")
        norms = np.linalg.norm(expected_pe, axis=1, keepdims=True)
        if agrees(pe, expected_pe / norms):
            return ROWS_NORMALISED, (
                "el fallo está en lo que haces después de los senos y cosenos: cada fila de tu "
                "pe es la correcta dividida por su norma. No se normaliza: cada pareja ya "
                "cumple sin² + cos² = 1 (paso 7)")
        for value, place in swapped_forms(inputs, expected_omega):
            if value is not None and agrees(pe, value):
                return _said(place)
    if (omega.shape == (d_model,) and omega.shape != expected_omega.shape
            and agrees(omega[0::2], expected_omega, OMEGA_ATOL)):
        return OMEGA_PER_COLUMN, (
            "el fallo está en la omega que devuelves: tiene una frecuencia por columna, "
            "d_model valores, cada ω_i repetida en sus dos columnas. Devuelve una por pareja, "
            "⌈d_model/2⌉ valores, ω_0, ω_1, … (paso 7)")
    return None


def _waves(n_positions, omega):
    """sin(pos·ω_0), cos(pos·ω_0), sin(pos·ω_1), …: the columns in their right order, one
    pair for every frequency (with d_model odd, one cosine more than pe has)."""
    return _interleaved(np.arange(n_positions)[:, None] * omega)


def _interleaved(angles):
    """The sine and the cosine of each column of ``angles``, side by side, pair after pair."""
    waves = np.empty((angles.shape[0], 2 * angles.shape[1]))
    waves[:, 0::2], waves[:, 1::2] = np.sin(angles), np.cos(angles)
    return waves


def _columns_of_other_pairs(pe, waves):
    """True when every column of ``pe`` is the sine (even column) or cosine (odd) of pos·ω_k
    for some k, and some column's k is not its pair's, column // 2 (``waves``: ``_waves``)."""
    if pe.shape[0] < 2:
        return False
    other = False
    for column in range(pe.shape[1]):
        kind = column % 2  # the sines sit at the even columns of waves, the cosines at the odd
        pairs = [k for k in range(waves.shape[1] // 2)
                 if agrees(pe[:, column], waves[:, 2 * k + kind])]
        if not pairs:
            return False
        other |= column // 2 not in pairs
    return other


def _shifted_by(pe, waves):
    """The non-zero distance s such that each column j of ``pe`` is the right column j + s
    (the right waves, each moved by the same distance), else None. Columns moved past either
    end are not compared, so at least half of the columns, and two, must be the moved ones."""
    if pe.shape[0] < 2:
        return None
    width = pe.shape[1]
    for shift in range(-width + 1, waves.shape[1]):
        kept = range(max(0, -shift), min(width, waves.shape[1] - shift))
        if (shift and len(kept) >= max(2, width / 2)
                and agrees(pe[:, kept], waves[:, [j + shift for j in kept]])):
            return shift
    return None


def _phases_wrong(pe, waves):
    """True when each column of ``pe`` is a sinusoid of its own pair's frequency,
    sin(pos·ω_i + φ) with amplitude 1, and some column's phase φ is not its own (0 for the
    sines, π/2 for the cosines). Fitted by least squares on sin(pos·ω_i) and cos(pos·ω_i)."""
    if pe.shape[0] < MIN_FITTED_POSITIONS:
        return False
    wrong = False
    for column in range(pe.shape[1]):
        pair = waves[:, 2 * (column // 2): 2 * (column // 2) + 2]
        if np.linalg.matrix_rank(pair) < 2:
            return False  # a frequency whose sine and cosine cannot be told apart here
        (a, b), *_ = np.linalg.lstsq(pair, pe[:, column], rcond=None)
        if not agrees(pair @ [a, b], pe[:, column]) or not agrees(np.hypot(a, b), 1.0):
            return False
        wrong |= not agrees(pe[:, column], waves[:, column])
    return wrong


def _angle_factor(pe, omega):
    """c when ``pe`` is the encoding of the angles c·pos·ω_i for one number c ≠ 1 (positions
    or frequencies scaled as a whole: 2π·pos·ω_i, np.linspace positions); else None."""
    n, pairs = pe.shape[0], pe.shape[1] // 2
    if n < 2 or pairs < 1:
        return None
    # The slowest complete pair: its angle at position 1 is small, so atan2 reads it whole.
    slowest = pairs - 1
    c = np.arctan2(pe[1, 2 * slowest], pe[1, 2 * slowest + 1]) / omega[slowest]
    if not np.isfinite(c) or abs(c - 1) <= tolerances.RTOL:
        return None
    return float(c) if agrees(pe, _waves(n, c * omega)[:, : pe.shape[1]]) else None


def _positions_restart(pe, expected_pe):
    """The row k > 1 from which ``pe`` starts again at position 0 (each row k + p is the
    right row p), its rows before k right: positions that wrap around; else None."""
    n = pe.shape[0]
    for k in range(2, n):
        if agrees(pe[k:], expected_pe[: n - k]):
            return k if agrees(pe[:k], expected_pe[:k]) else None
    return None


def _angles_of_pairs(pe):
    """The columns of ``pe``'s complete pairs when each pair (2i, 2i + 1) is a sine and a
    cosine of one same angle, sin² + cos² = 1 on every row; else None (what is compared with
    ``_interleaved`` angles)."""
    full = pe.shape[1] // 2
    if full == 0:
        return None
    sines, cosines = pe[:, 0:2 * full:2], pe[:, 1:2 * full:2]
    on_circle = agrees(sines ** 2 + cosines ** 2, np.ones_like(sines))
    return pe[:, :2 * full] if on_circle else None


def _fixed_length_table(pe, expected_pe, inputs, call):
    """True when ``pe`` is the right encoding cut at fewer rows than asked, and a call with
    fewer positions than that is answered right: a table of a fixed length, cut to
    n_positions, which cannot give more rows than it has."""
    rows = pe.shape[0] if pe.ndim == 2 else 0
    if not 1 < rows < expected_pe.shape[0] or pe.shape[1] != expected_pe.shape[1]:
        return False
    if not agrees(pe, expected_pe[:rows]):
        return False
    shorter = dict(inputs, n_positions=rows - 1)
    answer = call(shorter)
    return (answer is not None and len(answer) == 2
            and agrees(answer[0], reference.positional_encoding(**shorter)[0]))


def _for_other_arguments(pe, omega, expected_pe, inputs, call):
    """True when ``pe`` (and ``omega``) are the right answer for sizes other than the case's:
    the answer to another call, kept in a cache keyed on n_positions, or computed with a
    notebook's global d_model. Not when the sizes follow the arguments, one row or column
    too many for any n_positions (np.arange(n_positions + 1)): that is a range, not a cache."""
    if pe.ndim != 2 or pe.shape == expected_pe.shape or not 0 < max(pe.shape) <= MAX_REBUILT:
        return False
    other_pe, other_omega = reference.positional_encoding(*pe.shape)
    if not agrees(pe, other_pe) or not (omega.shape != other_omega.shape
                                        or agrees(omega, other_omega, OMEGA_ATOL)):
        return False
    for axis, grown in enumerate(("n_positions", "d_model")):
        again = call(dict(inputs, **{grown: inputs[grown] + OTHER_SIZE}))
        if again is None or len(again) != 2 or np.ndim(again[0]) != 2 or np.shape(
                again[0])[axis] == pe.shape[axis]:
            return True  # it does not grow with this argument: another call's answer
    return False


# A case of one position is located on this many positions too: one row, (0, 1, 0, 1, …),
# does not show which part of the formula departs, and a place is a property of the code.
ROWS_OF_ONE_POSITION_PROBE = 12
ONE_POSITION = (
    "positional_encoding.located_one_position",
    "el fallo está en el caso de una sola posición: con varias posiciones tu pe es la "
    "correcta, y con n_positions = 1 no. ¿Tratas aparte la primera posición, empiezas con las "
    "filas de las posiciones 0 y 1 ya puestas, divides por n_positions − 1 o aplanas "
    "(squeeze) la única fila? Con una posición pe es una fila, (0, 1, 0, 1, …), de forma "
    "(1, d_model) (paso 7)")


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where ``positional_encoding`` departs on
    ``inputs``, or None when its shapes are not the notebook's or nothing departs. A case of
    one position is located on more positions when the function departs there too."""
    found = _located(inputs, call)
    if inputs["n_positions"] != 1 or _right(call, inputs):
        return found
    # One row fits many formulas (sines wrong, cosines right, one angle per pair...): the
    # code's place is measured on more positions, unless they are right there.
    longer = dict(inputs, n_positions=ROWS_OF_ONE_POSITION_PROBE)
    if _right(call, longer):
        return found if found is not None and _first(found)[0] in CALL_FORMS else ONE_POSITION
    return _located(longer, call)


# Places that one call's answer shows whatever its rows: another call's answer, a table.
CALL_FORMS = (OTHER_ARGUMENTS, FIXED_TABLE)


def _first(found):
    return found[0] if isinstance(found, list) else found


def _right(call, inputs):
    """True when the student's pe and omega on ``inputs`` are the reference's."""
    parts = call(inputs)
    if parts is None or len(parts) != 2:
        return False
    expected_pe, expected_omega = reference.positional_encoding(**inputs)
    return agrees(parts[0], expected_pe) and agrees(parts[1], expected_omega, OMEGA_ATOL)


def _located(inputs, call):
    """``locate`` on ``inputs`` themselves."""
    parts = call(inputs)
    if parts is None or len(parts) != 2:
        return None
    pe, omega = (np.asarray(part, dtype=np.float64) for part in parts)
    expected_pe, expected_omega = reference.positional_encoding(**inputs)
    whole = _whole_forms(pe, omega, expected_pe, expected_omega, inputs)
    if whole is not None:
        return whole
    if _fixed_length_table(pe, expected_pe, inputs, call):
        return FIXED_TABLE, (
            "el fallo está en cuántas posiciones calculas: tus filas son las correctas, pero "
            "pe no pasa de un número fijo de posiciones, sea cual sea n_positions, y con menos "
            "posiciones está bien. ¿Precalculas una tabla de longitud fija (un MAX_LEN) y la "
            "recortas? Calcula pe con n_positions filas, las que te piden (paso 7)")
    if _for_other_arguments(pe, omega, expected_pe, inputs, call):
        return OTHER_ARGUMENTS, (
            "el fallo está en los argumentos con los que calculas: tu pe es la correcta, pero "
            "para otros n_positions o d_model (mira su forma), los de otra llamada. ¿Guardas "
            "resultados entre llamadas (una caché por n_positions) o usas una variable global "
            "del cuaderno, como d_model, en lugar del argumento? Calcula cada respuesta con los "
            "argumentos que recibe (paso 7)")
    angles = np.arange(inputs["n_positions"])[:, None] * expected_omega
    if omega.ndim == 2 and any(omega.shape == form.shape and agrees(omega, form, OMEGA_ATOL)
                               for form in (angles, angles.T)):
        return OMEGA_IS_ANGLES, (
            "el fallo está en la omega que devuelves: es la matriz de ángulos pos·ω_i, una fila "
            "por posición, no las frecuencias. omega son solo las ⌈d_model/2⌉ frecuencias "
            "ω_i = 1/10000^(2i/d_model), un vector; los ángulos se calculan con ellas"
            + (", y tu pe está bien" if agrees(pe, expected_pe) else "") + " (paso 7)")
    if pe.shape != expected_pe.shape or omega.shape != expected_omega.shape:
        return None  # the shape facts say it better
    if not agrees(omega, expected_omega, OMEGA_ATOL):
        # With one position pe is (0, 1, 0, 1, …) whatever ω is: it says nothing of ω.
        return _omega(omega, expected_omega, pe.shape[0] > 1 and agrees(pe, expected_pe))
    if agrees(pe, expected_pe):
        return None
    # Every wave of the student's own ω (right by now), computed once for every form below.
    waves = _waves(pe.shape[0], omega)
    right = waves[:, : pe.shape[1]]
    sines_right = agrees(pe[:, 0::2], right[:, 0::2])
    cosines_right = agrees(pe[:, 1::2], right[:, 1::2])
    # Row 0 alone departing is ROW_ZERO's below, whichever columns it touches (an eighteenth
    # blind probe's loop from position 1 was told «los cosenos»).
    only_row_zero = agrees(pe[1:], expected_pe[1:])
    if sines_right and not cosines_right and not only_row_zero:
        return COSINES, (
            "el fallo está en las columnas impares, los cosenos: tu omega es correcta y las "
            "columnas pares son sin(pos·ω_i), pero las impares no son cos(pos·ω_i), con la "
            "misma ω_i que el seno de su izquierda (paso 7)")
    if cosines_right and not sines_right and not only_row_zero:
        return SINES, (
            "el fallo está en las columnas pares, los senos: tu omega es correcta y las "
            "columnas impares son cos(pos·ω_i), pero las pares no son sin(pos·ω_i) (paso 7)")
    # A form measured exactly comes first, with the general place after it: the engine says
    # the most precise place that every failing case shares.
    specific = None
    restart = _positions_restart(pe, expected_pe)
    # Only where row 0 departs: otherwise «los ángulos» is already the general place.
    pairs = (None if only_row_zero or restart is not None or agrees(pe[0], expected_pe[0])
             else _angles_of_pairs(pe))
    if _rows_alternate(pe, omega):
        # A seventeenth blind probe's pe[0::2] = sin, pe[1::2] = cos: «la fila 0» alone before.
        specific = (ROWS_ALTERNATE,
                    "el fallo está en dónde van los senos y los cosenos: las filas pares de tu "
                    "pe son todo senos y las impares todo cosenos, y son las columnas las que "
                    "se alternan. ¿Seleccionas filas (pe[0::2]) donde van columnas "
                    "(pe[:, 0::2])? (paso 7)")
    elif _odd_columns_zero(pe):
        # The cosines written over the sines, column 2i for 2i + 1 (a sixteenth blind probe's
        # was told only «la fila de la posición 0»).
        over_sines = agrees(pe[:, 0:2 * (pe.shape[1] // 2):2], right[:, 1::2])
        specific = (ODD_COLUMNS_ZERO,
                    "el fallo está en las columnas impares: valen 0 en todas las posiciones, "
                    "así que los cosenos no llegan a su sitio" + (
                        "; están en las columnas pares, encima de los senos: ¿escribes "
                        "cos(pos·ω_i) en la columna 2i en lugar de en la 2i + 1?"
                        if over_sines else "")
                    + ". La columna 2i es sin(pos·ω_i) y la 2i + 1, cos(pos·ω_i) (paso 7)")
    elif pairs is not None:
        # pairs holds the complete pairs only: as many angles as it has pairs.
        added = agrees(pairs, _interleaved(
            (np.arange(pe.shape[0])[:, None] + omega)[:, : pairs.shape[1] // 2]))
        specific = (ANGLES_OF_PAIRS, "el fallo está en los ángulos: " + (
            "cada pareja de columnas de tu pe es el seno y el coseno de pos + ω_i, la suma, y "
            "no del producto pos·ω_i (¿np.add.outer en lugar de np.outer, o un + en lugar de "
            "un *?)" if added else
            "cada pareja de columnas de tu pe es el seno y el coseno de un mismo ángulo, como "
            "debe, pero ese ángulo no es pos·ω_i: con pos = 0 vale 0 en todas las parejas, y "
            "el tuyo no siempre") + ". El ángulo de la pareja i en la posición pos es "
            "pos·ω_i = pos / 10000^(2i/d_model): la posición multiplicada por la frecuencia "
            "(paso 7)")
    elif (factor := _angle_factor(pe, omega)) is not None:
        specific = (ANGLES_SCALED, "el fallo está en los ángulos: "
                    + findings.angle_factor_words(factor, pe.shape[0]) + " (paso 7)")
    elif restart is not None:
        specific = (POSITIONS_RESTART,
                    f"el fallo está en las posiciones: tus filas están bien hasta la {restart - 1}, "
                    f"y desde la {restart} vuelven a empezar por la de la posición 0, así que la "
                    "posición se reinicia. ¿La guardas en un tipo entero pequeño (np.uint8 no "
                    "pasa de 255, np.int8 de 127) o la calculas módulo algo? Cada fila usa su "
                    "posición, 0, 1, 2, … hasta n_positions − 1 (paso 7)")
    elif _columns_of_other_pairs(pe, waves):
        specific = (COLUMN_FREQUENCIES,
                    "el fallo está en la frecuencia de cada columna: cada columna de tu pe es un "
                    "seno o un coseno de una de tus frecuencias, pero no siempre la de su pareja. "
                    "Las columnas 2i y 2i + 1 usan las dos ω_i, ω_0, ω_0, ω_1, ω_1, …, lo que da "
                    "np.repeat(omega, 2), no np.tile(omega, 2) (paso 7)")
    elif _shifted_by(pe, waves) is not None:
        specific = (COLUMNS_SHIFTED,
                    "el fallo está en qué columna ocupa cada onda: las ondas de tu pe son "
                    "senos y cosenos correctos, pero corridos de columna, todos la misma "
                    "distancia. La columna 0 es sin(pos·ω_0), la 1 cos(pos·ω_0), y en "
                    "general la 2i es sin(pos·ω_i) y la 2i + 1 cos(pos·ω_i); con d_model impar "
                    "sobra el último coseno, no el primer seno (paso 7)")
    elif _phases_wrong(pe, waves):
        specific = (PHASES,
                    "el fallo está en la fase de algunas columnas: cada columna de tu pe oscila "
                    "con la frecuencia de su pareja, ω_i, pero no todas empiezan donde deben. "
                    "Las pares son sin(pos·ω_i), que vale 0 en pos = 0, y las impares "
                    "cos(pos·ω_i) = sin(pos·ω_i + π/2), que vale 1: si las escribes todas como "
                    "un seno desplazado, el desplazamiento es 0 en las columnas pares y π/2 en "
                    "las impares, nada más (paso 7)")
    elif (not only_row_zero and np.isfinite(pe).all()
            and agrees(np.sort(pe, axis=None), np.sort(expected_pe, axis=None))):
        specific = (PLACES,
                    "el fallo está en dónde colocas los valores: tu pe tiene exactamente los "
                    "valores de la correcta, pero en otras casillas. Cada fila es una posición "
                    "y, dentro de ella, la pareja i ocupa las columnas 2i (su seno) y 2i + 1 (su "
                    "coseno); revisa cómo juntas senos y cosenos (¿un stack y un reshape que "
                    "mezclan filas de posiciones distintas?) (paso 7)")
    if not agrees(pe[0], expected_pe[0]):
        general = (ROW_ZERO,
                   "el fallo está en la fila de la posición 0: tu omega es correcta, pero con "
                   "pos = 0 todos los ángulos valen 0, así que esa fila es (0, 1, 0, 1, …), un "
                   "seno y un coseno de 0 por pareja, y la tuya no lo es (paso 7)")
    else:
        general = (ANGLES,
                   "el fallo está en los ángulos pos·ω_i: tu omega es correcta y la fila de la "
                   "posición 0 también, pero alguna fila siguiente no es sin(pos·ω_i), "
                   "cos(pos·ω_i), … con su propia pos. Cada fila usa su posición, 0, 1, 2, …, "
                   "multiplicada por cada frecuencia (paso 7)")
    return general if specific is None else [specific, general]
