"""Spanish sentences for what the sandbox reports: a call's error, or why there is no answer.

Raw NumPy text never reaches a student: the sandbox sends only an error's kind and the sizes
NumPy reported, and this module turns them into a sentence about the student's function. Those
sizes are the student's code's to choose, so each is shown only through the call's
``CaseSizes`` (sizes.py): a size the case declares, or a fixed word. A lesson may add what those
sizes mean for its exercise (the shape the notebook asked for).
"""

from .sizes import MAX_SHOWN_DIMENSIONS, NO_SIZES


def _code_span(text):
    """The student's own code, one line of it, as a code span: a backtick in it would end the
    span, so it is shown as a quote (this layer has no Markdown writer of its own)."""
    return "`" + str(text).replace("`", "'") + "`"


def _product(numbers):
    total = 1
    for n in numbers:
        total *= n
    return total


def _ordinal(number):
    return f"{number}.º"


def arguments_message(function, error, parameters=()):
    """Why the call could not even start: the parameter it lacks, by the name the notebook
    gives it (``parameters``: the reference's, in order, as the statement writes them,
    ``mask=None``), never by the student's own."""
    numbers, keyword = error.get("numbers", []), error.get("name")
    names = [parameter.split("=")[0] for parameter in parameters]
    statement = f"`{function}({', '.join(parameters)})`" if parameters else f"`{function}`"
    # The report comes from the job, which the student's code runs: a name or a count is said
    # only when it is one a call of the statement can give, so it can spell nothing else.
    if keyword and keyword in names:
        return (f"tu `{function}` no tiene un parámetro llamado `{keyword}`, y el cuaderno lo "
                f"pasa por su nombre: usa los parámetros del enunciado, {statement}")
    given, accepted, required = (list(numbers[:3]) + [None] * 3)[:3]
    if all(type(n) is int for n in (given, accepted, required)) \
            and 0 <= given <= len(parameters) and -1 <= accepted <= given \
            and 0 <= required <= given + 1:
        if 0 <= accepted < given:
            extra = ", ".join(f"`{name}`" for name in names[accepted:given]) \
                or f"el {_ordinal(accepted + 1)} argumento"
            return (f"el cuaderno llama a tu `{function}` con {given} argumentos y solo acepta "
                    f"{accepted}: le falta el parámetro de {extra}; el enunciado es {statement}")
        if given < required:
            missing = f"`{names[given]}`" if given < len(names) else f"el {_ordinal(given + 1)}"
            return (f"en este caso el cuaderno llama a tu `{function}` con {given} argumentos, "
                    f"sin {missing}, y tu función exige más: ese parámetro necesita un valor "
                    f"por defecto, como en el enunciado, {statement}")
    return (f"tu `{function}` no acepta los argumentos con que la llama el cuaderno: el "
            f"enunciado es {statement}")


MAX_LINE_CHARS = 100
# Errors that come from how the function was called or what it returned, not from a line of
# it that failed: no line is said for them (a stub's `raise NotImplementedError` says nothing).
UNPLACED_KINDS = {"not_implemented", "missing", "not_callable", "arguments", "not_a_tuple",
                  "wrong_count", "tuple_instead", "unconvertible", "too_large"}


def placed(error, cells):
    """``error`` with the text of the student's line it came out of, as "line": the sandbox
    says only where (a cell's position and a line number, "at"), and the text is read here
    from the grader's own copy of the notebook's code ``cells``, so no value computed on a
    hidden input can travel in it."""
    if error.get("kind") in UNPLACED_KINDS:
        return error
    text = line_text(cells, error.get("at"))
    return {**error, "line": text} if text else error


def line_text(cells, at):
    """The line ``at`` ([cell position, line number]) of ``cells``, on one line and cut to
    MAX_LINE_CHARS, or None where there is no such line."""
    if not at:
        return None
    position, number = at
    lines = cells[position].splitlines() if 0 <= position < len(cells) else []
    text = " ".join(lines[number - 1].split()) if 0 < number <= len(lines) else ""
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS - 1].rstrip() + "…"
    return text or None


def error_message(function, error, part_names=(), parameters=(), *, sizes=NO_SIZES):
    """One sentence about the error ``function`` raised (or returned) on one call, whose
    inputs declared ``sizes``, and the student's line it came out of when known: "line" on a
    public call (``placed``), "public_line" on a hidden one (grading.py).
    ``parameters``: the reference's parameters as the statement writes them (``mask=None``),
    which say what a call passed."""
    sentence = _error_sentence(function, error, part_names, parameters, sizes=sizes)
    if error.get("kind") in UNPLACED_KINDS:
        return sentence
    if error.get("line"):
        if error.get("kind") == "time":
            return f"{sentence} (iba por tu línea {_code_span(error['line'])})"
        return f"{sentence}; salta en tu línea {_code_span(error['line'])}"
    if error.get("public_line"):  # a hidden case: where the same error came out in public
        verb = "iba por" if error.get("kind") == "time" else "salta en"
        return (f"{sentence}; en las pruebas públicas, este mismo error {verb} tu línea "
                f"{_code_span(error['public_line'])}")
    return sentence


def _error_sentence(function, error, part_names=(), parameters=(), *, sizes=NO_SIZES):
    """The error itself: only those of its numbers that the case's ``sizes`` allow are
    shown."""
    kind = error.get("kind")
    exception = error.get("exception")
    numbers, shapes = error.get("numbers", []), error.get("shapes", [])
    raised = f"lanzó {exception}" if exception else "lanzó una excepción propia"
    shown = sizes.allows
    if kind == "arguments":
        return arguments_message(function, error, parameters)
    if kind == "missing":
        return (f"no encuentro la función `{function}` en tu cuaderno: no cambies su nombre "
                "ni borres su celda")
    if kind == "not_callable":
        return f"`{function}` ya no es una función: ¿la sobrescribiste con otro valor?"
    if kind == "not_implemented":
        return (f"todavía no has implementado `{function}`: la celda aún lanza "
                "NotImplementedError")
    if kind == "not_a_tuple":
        return f"debe devolver una tupla ({', '.join(part_names)}), no un solo valor"
    if kind == "wrong_count" and numbers:
        count = f"devolvió {numbers[0]}" if shown(numbers[0]) else "devolvió otra cantidad"
        if not part_names:  # no statement of what it returns: only the count is known
            return f"no devuelve tantos valores como se esperan: {count}"
        return (f"debe devolver {len(part_names)} valores, ({', '.join(part_names)}), y "
                f"{count}")
    if kind == "tuple_instead" and numbers:
        count = f" de {numbers[0]}" if shown(numbers[0]) else ""
        return f"debe devolver un solo array, no una tupla{count}"
    if kind == "unconvertible":
        return "lo que devuelve no se puede leer como un array de números"
    if kind == "too_large":
        return "devuelve demasiados números para este caso"
    simple = {
        "memory": "se quedó sin memoria con este caso (MemoryError)",
        "recursion": "entra en una recursión sin fin (RecursionError)",
        "time": "no terminó a tiempo con este caso: ¿hay un bucle que no acaba?",
        "exit": "llama a exit() o a algo que termina Python",
        "stand_in": ("llamó a otra función del ejercicio (que aquí es la versión de "
                     "referencia) con argumentos que no encajan: revisa qué le pasas"),
        "zero_division": "divide por cero (ZeroDivisionError)",
        "concatenate_ndim": f"{raised}: concatena arrays con distinto número de dimensiones",
        "split_unequal": (f"{raised}: np.split no puede partir el eje en partes iguales (su "
                          "tamaño no es múltiplo del número de partes): ¿partes el eje que "
                          "toca? Sin axis, np.split parte el eje 0, las filas"),
        "integer_expected": (f"{raised}: usa un array o un número con decimales donde va un "
                             "entero (un eje, un tamaño, un índice). Por ejemplo, "
                             "np.max(0, x) toma x como el eje: el máximo elemento a elemento "
                             "es np.maximum(0, x)"),
        "ambiguous_truth": (f"{raised}: usa un array de varios elementos como condición (en un "
                            "if, and, or o not), y un array así no es ni verdadero ni falso. "
                            "Si comprobabas si un argumento llegó, escribe `if x is not None`; "
                            "si quieres que se cumpla en todos o en alguno, .all() o .any(). "
                            "max, min y sorted de Python también comparan así: sobre un array "
                            "de varias filas, usa np.max o np.min con su axis"),
        "invert_not_boolean": (f"{raised}: usa ~ sobre un array que no es de True/False: ~ "
                               "solo niega arrays booleanos. Crea la máscara con dtype=bool "
                               "(np.ones(…, dtype=bool)) o compárala, mask == 0"),
        "concatenate_empty": (f"{raised}: concatena (o apila) una lista vacía: no llegó "
                              "ningún array. ¿Se quedó vacía la lista que llenas en el bucle, "
                              "o recorres por segunda vez un generador o un map, que solo se "
                              "pueden recorrer una vez?"),
        "stack_not_sequence": (f"{raised}: np.hstack, np.vstack y np.stack necesitan una lista "
                               "o una tupla de arrays, no un map ni un generador: escribe "
                               "list(map(…)) o una lista por comprensión, [f(c) for c in …]"),
        "float_slice": (f"{raised}: corta (a:b) con un número con decimales: los límites "
                        "de un corte tienen que ser enteros. ¿Sale de una división /? Usa la "
                        "división entera // o int(…)"),
        "boolean_index": (f"{raised}: indexa un array con una máscara de True/False que no "
                          "tiene su forma: una máscara indexa los primeros ejes del array, "
                          "tantos como tiene ella. Para aplicarla a los últimos ejes, usa "
                          "np.where(mask, s, …), que la extiende sola"),
        "float_index": (f"{raised}: usa como índice un array de números con decimales "
                        "(float); los índices tienen que ser enteros. ¿Vienen de "
                        "np.fromfunction o np.indices con dtype=float, o de una división /? "
                        "Conviértelos con .astype(int) o usa la división entera //"),
        "function_operand": (f"{raised}: opera (+, −, *, @) con una función en lugar de con "
                             "lo que devuelve: ¿te faltan los paréntesis de la llamada, f(x) "
                             "en lugar de f?"),
        "scalar_function": (f"{raised}: una función para un solo número (math.sin, math.exp, "
                            "math.sqrt, float…) recibió un array; usa la de NumPy, np.sin, "
                            "np.exp o np.sqrt, que opera elemento a elemento"),
        "inhomogeneous": (f"{raised}: intenta hacer un array con piezas de formas distintas "
                          "(np.array o np.concatenate de una lista): ¿metes en la lista una "
                          "tupla, como (salida, pesos), donde va un solo array?"),
    }
    if kind in simple:
        return simple[kind]
    if kind == "unpack":
        expected = (f"{numbers[0]} nombres" if numbers and shown(numbers[0])
                    else "varios nombres")
        got = ("algo que tiene otro número de elementos"
               if len(numbers) < 2 or not shown(numbers[1]) else
               f"algo que tiene {numbers[1]} elemento{'' if numbers[1] == 1 else 's'}")
        return (f"{raised}: desempaqueta en {expected} {got}: revisa qué recorre el bucle o qué "
                "devuelve lo que desempaquetas (¿un zip(*lista), que agrupa los elementos por "
                "posición y no uno a uno?)")
    if kind == "attribute":
        return attribute_message(raised, error)
    if kind == "name":
        name = error.get("name")
        return (f"{raised}: usa el nombre `{name}`, que no existe al ejecutar tu cuaderno "
                "de arriba abajo" if name else f"{raised}: usa un nombre que no existe")
    if kind == "broadcast" and len(shapes) >= 2:
        return (f"{raised}: opera elemento a elemento arrays de formas {sizes.shape(shapes[0])} "
                f"y {sizes.shape(shapes[1])}, que no encajan")
    if kind == "broadcast_assign" and len(shapes) >= 2:
        return (f"{raised}: intenta guardar un array de forma {sizes.shape(shapes[0])} donde "
                f"cabe uno de forma {sizes.shape(shapes[1])}")
    if kind == "matmul" and len(numbers) >= 2:
        return (f"{raised} en un producto de matrices (@): la dimensión interior no coincide "
                f"({sizes.number(numbers[0])} frente a {sizes.number(numbers[1])})")
    if kind == "not_aligned" and len(shapes) >= 2:
        return (f"{raised}: multiplica matrices de formas {sizes.shape(shapes[0])} y "
                f"{sizes.shape(shapes[1])}, que no encajan")
    if kind == "reshape" and numbers and shapes:
        target = shapes[-1]
        needs = (f", que necesita {_product(target)}"
                 if all(map(shown, target)) and len(target) <= MAX_SHOWN_DIMENSIONS else "")
        if shown(numbers[0]):
            return (f"{raised}: cambia de forma (reshape) un array de {numbers[0]} números a "
                    f"{sizes.shape(target)}{needs}")
        return (f"{raised}: cambia de forma (reshape) un array a {sizes.shape(target)}{needs}, "
                "y el array no tiene esos números")
    if kind == "reshape":  # a shape with −1 (NumPy writes it «newaxis»): no size to compare
        return (f"{raised}: cambia de forma (reshape) un array a una forma con −1 que no le "
                "cabe: el número de elementos tiene que ser múltiplo del producto de los demás "
                "tamaños (¿un reshape en parejas, (…, −1, 2), de un número impar de columnas?)")
    if kind == "index" and len(numbers) >= 3:
        index = f"el índice {numbers[0]}" if shown(numbers[0]) else "un índice"
        axis = f"el eje {numbers[1]}" if shown(numbers[1]) else "un eje"
        size = f"solo tiene {numbers[2]} posiciones" if shown(numbers[2]) else "no lo tiene"
        return f"{raised}: usa {index} en {axis}, que {size}"
    if kind == "too_many_indices" and len(numbers) >= 2:
        if shown(numbers[0]) and shown(numbers[1]):
            return (f"{raised}: indexa un array de {numbers[0]} dimensiones con {numbers[1]} "
                    "índices")
        return f"{raised}: indexa un array con más índices que dimensiones"
    if kind == "axis" and len(numbers) >= 2:
        if shown(numbers[0]) and shown(numbers[1]):
            return f"{raised}: usa el eje {numbers[0]} en un array de {numbers[1]} dimensiones"
        return f"{raised}: usa un eje que ese array no tiene"
    if kind == "concatenate" and len(numbers) >= 5:
        return (f"{raised}: concatena arrays de tamaños distintos ({sizes.number(numbers[2])} y "
                f"{sizes.number(numbers[4])}) en la dimensión {sizes.number(numbers[0])}")
    if kind == "einsum" and len(numbers) >= 3:
        return (f"{raised} en einsum: un índice tiene tamaños distintos "
                f"({sizes.number(numbers[1])} frente a {sizes.number(numbers[2])})")
    return raised


UNVERIFIED = {
    "time": "no se pudo comprobar: tu cuaderno no terminó dentro del tiempo permitido",
    "memory": "no se pudo comprobar: tu cuaderno superó el límite de memoria",
    "disk": "no se pudo comprobar: tu cuaderno llenó el espacio de disco que tiene permitido",
    "died": ("no se pudo comprobar: el proceso que ejecutaba tu cuaderno terminó antes de "
             "responder (¿llamas a `os._exit()`, a `exit()` o a algo que cierre Python?)"),
    "protocol": ("no se pudo comprobar: la respuesta que llegó de tu cuaderno no se pudo "
                 "leer; una persona revisará tu entrega"),
    "internal": ("no se pudo comprobar por un error interno del corrector (no es culpa tuya); "
                 "una persona revisará tu entrega"),
}


def unverified_message(reason):
    return UNVERIFIED.get(reason, UNVERIFIED["internal"])


MAX_SHOWN_SHELL_ESCAPES = 5


def shell_escapes_note(escapes):
    """One remark about the shell escapes the sandbox refused (``!pip``, ``%%bash``...), each
    as the notebook wrote it, with its cell."""
    shown = []
    for escape in escapes[:MAX_SHOWN_SHELL_ESCAPES]:
        command = _code_span(escape.get("command", ""))
        cell = escape.get("cell")
        shown.append(f"{command} (celda [{cell}])" if cell is not None else command)
    more = len(escapes) - len(shown)
    listed = ", ".join(shown) + (f" y {more} más" if more > 0 else "")
    return ("al corregir, tu cuaderno no ejecuta órdenes del sistema (no hay terminal ni red), "
            f"así que se saltaron {listed}; el resto de esas celdas sí se ejecutó. Si te falta "
            "un paquete, instálalo antes de abrir el cuaderno (mira «Antes de empezar»)")


# --- the student's own cells: Python's English, in Spanish where it is a common message ---------

# Names NumPy 2.0 removed that older code and tutorials still use, and what replaces them.
NUMPY_2_REMOVED = {"NINF": "-np.inf", "PINF": "np.inf", "NZERO": "-0.0", "PZERO": "0.0",
                   "NaN": "np.nan", "NAN": "np.nan", "Inf": "np.inf", "Infinity": "np.inf",
                   "infty": "np.inf", "float_": "np.float64", "complex_": "np.complex128",
                   "product": "np.prod", "cumproduct": "np.cumprod", "alltrue": "np.all",
                   "sometrue": "np.any", "in1d": "np.isin", "row_stack": "np.vstack",
                   "trapz": "np.trapezoid", "asfarray": "np.asarray(…, dtype=float)",
                   "round_": "np.round", "mat": "np.asmatrix"}


def attribute_message(raised, error):
    """An AttributeError said with the attribute and what it was looked up on, when known:
    names of the student's own code, never the exception's message."""
    name, owner = error.get("name"), error.get("owner")
    if not name or not owner:
        return f"{raised}: usa un atributo o un método que no existe"
    if error.get("module") and owner == "numpy" and name in NUMPY_2_REMOVED:
        return (f"{raised}: usa np.{name}, que NumPy 2 ya no tiene (lo quitó en la versión "
                f"2.0): escribe {NUMPY_2_REMOVED[name]}")
    if error.get("module"):
        shown = "np" if owner == "numpy" else owner
        return (f"{raised}: usa `{shown}.{name}`, que no existe: ¿un nombre mal escrito o de "
                f"otra versión de {owner}?")
    if owner == "NoneType":
        return (f"{raised}: usa `.{name}` en None: ¿guardas el resultado de una función que "
                "no devuelve nada (le falta el return) o que cambia el array en su sitio?")
    return f"{raised}: usa `.{name}` en un valor de tipo `{owner}`, que no lo tiene"


def cell_error_text(exception, message):
    """An error of the student's own cell, as one line (public_checks.cell_error_text: one
    wording, shipped with grader.check, which says the student's function's errors so too)."""
    # Beside notebook_code, a student-side module the grader's Python finds the same way.
    from public_checks import cell_error_text as said

    return said(exception, message)
