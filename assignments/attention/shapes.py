"""A shape error explained with the sizes the notebook names, and the shapes it asked for.

The sandbox reports an error's kind and the integer sizes NumPy printed, never its text, and
kit_autograder.verdicts.messages turns them into a sentence about the student's function.
Here those sizes get their names in the exercise. On the multihead case with n = 4, h = 2,
d_k = 2 and d_v = 3, "a reshape of 16 numbers into (4, 2, 3)" becomes n·h·d_k numbers put
into (n, h, d_v): a head's d_v used where its d_k belonged. Every sentence ends with what the
notebook asks for, so the student can compare.

Sizes and shapes are not hidden values: the case descriptions and the shape checks already
give them. The sizes in an error are the student's code's to choose, though, so each one is
shown only if the case declares it (case_sizes, through kit_autograder's CaseSizes), by
its name or as «otro tamaño»: code that spelled a hidden input into a shape gets nothing back.
"""

from itertools import combinations_with_replacement

import numpy as np
from kit_autograder.verdicts.sizes import CaseSizes, MAX_SHOWN_DIMENSIONS, OTHER_SIZE


def named_sizes(function, inputs):
    """The case's sizes in the notebook's notation, primary ones first: {name: size}."""
    if function == "attention":
        (n, d_k), (m, _), (_, d_v) = (np.shape(inputs[k]) for k in ("Q", "K", "V"))
        return {"n": n, "m": m, "d_k": d_k, "d_v": d_v}
    if function in ("multihead", "transformer_block"):
        x = inputs["X" if function == "multihead" else "x"]
        n, d_model = np.shape(x)
        heads = inputs["heads"]
        sizes = {"n": n, "d_model": d_model, "h": len(heads), "d_k": np.shape(heads[0][0])[1],
                 "d_v": np.shape(heads[0][2])[1]}
        if function == "transformer_block":
            sizes["d_ff"] = np.shape(inputs["W1"])[1]
        sizes["h·d_k"] = sizes["h"] * sizes["d_k"]
        sizes["h·d_v"] = sizes["h"] * sizes["d_v"]
        if sizes["h"] > 1:  # a head left out of the concatenation
            sizes["(h − 1)·d_v"] = (sizes["h"] - 1) * sizes["d_v"]
        sizes["h·n"] = sizes["h"] * n  # the heads' weights concatenated, not their outputs
        if d_model % sizes["h"] == 0:
            sizes["d_model/h"] = d_model // sizes["h"]
        return sizes
    n_positions, d_model = inputs["n_positions"], inputs["d_model"]
    sizes = {"n_positions": n_positions, "d_model": d_model, "⌈d_model/2⌉": (d_model + 1) // 2,
             "⌊d_model/2⌋": d_model // 2}
    if d_model % 2 == 0:  # one frequency too many: a range that reaches d_model itself
        sizes["d_model/2 + 1"] = d_model // 2 + 1
    return sizes


def case_sizes(function, inputs):
    """The sizes a message may show of the student's numbers on this case: those its inputs
    declare, and the ones the notebook names from them (named_sizes: ``h·d_v``...)."""
    return CaseSizes.of(inputs).with_derived(named_sizes(function, inputs).values())


PRIMARY = {"n", "m", "d_k", "d_v", "d_model", "h", "d_ff", "n_positions"}


def _same_by_algebra(sizes):
    """Derived names that, for this case's h, are a primary size under another name: with one
    head h·d_v is d_v, with two (h − 1)·d_v is d_v. Said beside it they read as a finding
    («d_v = (h − 1)·d_v») where they are only the same size written twice."""
    h = sizes.get("h")
    if h == 1:
        return {"h·d_k", "h·d_v", "h·n", "d_model/h"}
    return {"(h − 1)·d_v"} if h == 2 else set()


def name_of(size, sizes, shown):
    """``size`` by its names in this case ("d_v = d_model/h"), or as ``shown`` shows it."""
    same = _same_by_algebra(sizes)
    names = [name for name, value in sizes.items() if value == size and name not in same]
    return " = ".join(names) if names else shown.number(size)


def counted(size, noun, sizes, shown):
    """«d_model columnas»; a size that is none of the case's is named as a product of them
    when one fits («h·d_model columnas»: V left unprojected in every head), else it reads «un
    número de columnas que no es ningún tamaño de las entradas…», never «otro tamaño
    columnas», and never «que no sale de las entradas», which no measurement says."""
    named = name_of(size, sizes, shown)
    if not any(name in sizes for name in named.split(" = ")):
        product = product_named(size, sizes, shown)
        if product != shown.number(size):
            return f"{product} {noun}"
    if named == OTHER_SIZE:
        return (f"un número de {noun} que no es ningún tamaño de las entradas ni el producto "
                "de dos o tres de ellos")
    return f"{named} {noun}"


def shape_named(shape, sizes, shown):
    """A shape with each size named: ``(4, 2, 3) = (n, h, d_v)``."""
    numbers = shown.shape(shape)
    named = [name_of(size, sizes, shown) for size in shape]
    if len(shape) > MAX_SHOWN_DIMENSIONS or all(
            not any(value == size for value in sizes.values()) for size in shape):
        return numbers
    return f"{numbers} = ({', '.join(named)}{',' if len(shape) == 1 else ''})"


def _with_number(total, names, shown):
    """``total`` named ``names`` (a product of sizes): with its number when it may be shown."""
    return f"{total} = {names}" if shown.allows(total) else names


def product_named(total, sizes, shown):
    """``total`` as a product of two or three primary sizes (16 = n·h·d_k), if one fits."""
    primary = [(name, value) for name, value in sizes.items() if name in PRIMARY and value > 1]
    if type(total) is int:
        for count in (1, 2, 3):
            for factors in combinations_with_replacement(primary, count):
                if int(np.prod([value for _, value in factors])) == total:
                    return _with_number(total, "·".join(name for name, _ in factors), shown)
    return shown.number(total)


def reshaped_named(total, target, sizes, shown):
    """The size of a reshaped array named after the target's leading sizes, which the code
    got right more often than the last one: 30 = n·h·d_k for a target (n, h, d_model/h)."""
    lead = int(np.prod(target[:-1])) if len(target) > 1 and None not in target else 0
    if len(target) > 1 and lead and type(total) is int and total % lead == 0:
        names = [name_of(size, sizes, shown).split(" = ")[0]
                 for size in (*target[:-1], total // lead)]
        if all(name in sizes for name in names):
            return _with_number(total, "·".join(names), shown)
    return product_named(total, sizes, shown)


def _case(sizes):
    return ", ".join(f"{name} = {value}" for name, value in sizes.items() if name in PRIMARY)


# np.split's unequal division is a shape error whose message gives no sizes: the case's own
# (d_k ≠ d_v, when a fused W_Q|W_K|W_V is cut in three) are what explains it.
SHAPE_KINDS = ("reshape", "broadcast", "not_aligned", "broadcast_assign", "matmul",
               "concatenate", "einsum", "index", "split_unequal")


def error_in_sizes(function, inputs, error):
    """The error's sizes named in the notebook's notation: a sentence, or None."""
    sizes, shown = named_sizes(function, inputs), case_sizes(function, inputs)
    kind, numbers, shapes = error.get("kind"), error.get("numbers", []), error.get("shapes", [])
    values = [v for v in [*numbers, *(d for shape in shapes for d in shape)] if type(v) is int]
    # A sentence whose every size is «otro tamaño» says nothing the error's own line does not.
    if not any(product_named(v, sizes, shown) != shown.number(v) for v in values):
        return None
    if kind == "reshape" and numbers and shapes:
        said = (f"cambias de forma {reshaped_named(numbers[0], shapes[-1], sizes, shown)} "
                f"números a {shape_named(shapes[-1], sizes, shown)}")
    elif kind in ("broadcast", "not_aligned") and len(shapes) >= 2:
        verb = "multiplicas" if kind == "not_aligned" else "operas elemento a elemento"
        said = (f"{verb} {shape_named(shapes[0], sizes, shown)} con "
                f"{shape_named(shapes[1], sizes, shown)}")
    elif kind == "broadcast_assign" and len(shapes) >= 2:
        said = (f"guardas un array {shape_named(shapes[0], sizes, shown)} donde cabe uno "
                f"{shape_named(shapes[1], sizes, shown)}")
    elif kind == "matmul" and len(numbers) >= 2:
        said = (f"en un producto A @ B, A tiene {counted(numbers[1], 'columnas', sizes, shown)} y "
                f"B tiene {counted(numbers[0], 'filas', sizes, shown)}")
    elif kind == "concatenate" and len(numbers) >= 5:
        said = (f"concatenas arrays que en el eje {shown.number(numbers[0])} miden "
                f"{name_of(numbers[2], sizes, shown)} y {name_of(numbers[4], sizes, shown)}")
    elif kind == "einsum" and len(numbers) >= 3:
        said = (f"en einsum, un mismo índice vale {name_of(numbers[1], sizes, shown)} en un "
                f"operando y {name_of(numbers[2], sizes, shown)} en otro")
    elif kind == "index" and len(numbers) >= 3:
        index = f"el índice {numbers[0]}" if shown.allows(numbers[0]) else "un índice"
        said = f"usas {index} en un eje de {counted(numbers[2], 'posiciones', sizes, shown)}"
    else:
        return None
    return f"en este caso, con {_case(sizes)}, {said}"


ASKED = {
    "attention": "el cuaderno pide Q de forma (n, d_k), K (m, d_k) y V (m, d_v), y devolver "
                 "la salida (n, d_v) y los pesos (n, m) (paso 3)",
    "multihead": "el cuaderno pide X de forma (n, d_model); en cada cabeza, W_Q y W_K de forma "
                 "(d_model, d_k) y W_V (d_model, d_v); W_O de forma (h·d_v, d_model); y "
                 "devolver la salida (n, d_model) (paso 6)",
    "positional_encoding": "el cuaderno pide pe de forma (n_positions, d_model) y omega con "
                           "⌈d_model/2⌉ frecuencias, una por pareja de columnas (paso 7)",
    "transformer_block": "el cuaderno pide x de forma (n, d_model), W1 (d_model, d_ff), "
                         "W2 (d_ff, d_model), y devolver un array de la forma de x (paso 8)",
}


def _mismatched(error):
    """The sizes an error says disagree: a matrix product's two inner sizes, an index and its
    axis's size, or the entries where two shapes differ (aligned from the right, as NumPy
    broadcasts); none for an error that is not about sizes; None when a shape error gives no
    two shapes to compare."""
    numbers, shapes = error.get("numbers", []), error.get("shapes", [])
    if error.get("kind") == "matmul" and len(numbers) >= 2:
        return set(numbers[:2])
    if error.get("kind") == "index" and len(numbers) >= 3:
        return {numbers[0], numbers[2]}  # the index and the axis's size
    if error.get("kind") not in SHAPE_KINDS:
        return set()  # no sizes at all: nothing for a note on the case's sizes to explain
    if len(shapes) < 2 or not shapes[0] or not shapes[1]:
        return None
    first, second = list(shapes[0])[::-1], list(shapes[1])[::-1]
    differing = {size for a, b in zip(first, second) if a != b for size in (a, b)}
    return differing | set(first[len(second):]) | set(second[len(first):])


def case_note(function, inputs, error=None):
    """(id, sentence) saying what makes this case's shapes unusual, when that is what usually
    breaks code; None for an ordinary case, or when ``error``'s disagreeing sizes are none of
    the unusual ones (the note would blame the case for an error every case gives)."""
    sizes = named_sizes(function, inputs)
    mismatched = _mismatched(error) if error is not None else None

    def involved(*names):
        return mismatched is None or any(sizes.get(name) in mismatched for name in names)

    if function == "multihead" and (sizes["d_k"] != sizes["d_v"]
                                    or sizes["d_k"] != sizes.get("d_model/h")) and involved(
                                        "d_k", "d_v", "h·d_k", "h·d_v", "(h − 1)·d_v"):
        return ("multihead.head_sizes",
                f"aquí las cabezas tienen d_k = {sizes['d_k']} (columnas de W_Q y W_K) y "
                f"d_v = {sizes['d_v']} (columnas de W_V), y d_model/h = "
                f"{sizes.get('d_model/h', 'no es entero')}: toma el tamaño de cada cabeza de "
                "la forma de sus matrices, sin suponer que d_k = d_v = d_model/h")
    if function == "positional_encoding" and sizes["d_model"] % 2 and involved("⌊d_model/2⌋"):
        return ("positional_encoding.odd_d_model",
                f"con d_model impar ({sizes['d_model']}) hay {sizes['⌈d_model/2⌉']} columnas "
                f"pares (senos) y solo {sizes['⌊d_model/2⌋']} impares (cosenos): omega tiene "
                f"{sizes['⌈d_model/2⌉']} frecuencias y los cosenos usan solo las "
                f"{sizes['⌊d_model/2⌋']} primeras, porque la última columna es un seno sin "
                "pareja")
    if function == "positional_encoding" and not sizes["d_model"] % 2 and involved(
            "d_model/2 + 1"):
        return ("positional_encoding.one_frequency_too_many",
                f"con d_model par ({sizes['d_model']}) hay {sizes['⌊d_model/2⌋']} parejas de "
                f"columnas y {sizes['⌊d_model/2⌋']} frecuencias; una más, d_model/2 + 1, es lo "
                "que da np.arange(0, d_model + 1, 2) o un range que llega hasta d_model "
                "incluido")
    return None


KEEPDIMS = ("shapes.reduction_without_keepdims",
            "operas una matriz con un vector de un valor por fila: es lo que da sumar (o sacar "
            "el máximo de) cada fila sin keepdims=True, porque NumPy alinea ese vector con el "
            "último eje, el de las columnas, y no con las filas. Escribe "
            "x.sum(axis=-1, keepdims=True), o añade el eje que falta con [:, None]")


TRANSPOSED = ("shapes.transposed_operand",
              "operas una matriz con otra de la forma traspuesta, (a, b) con (b, a): una de las "
              "dos está traspuesta (¿la máscara, o las puntuaciones?); la máscara tiene la forma "
              "de las puntuaciones, una fila por consulta y una columna por clave")


def _transposed_operands(error):
    """True for a broadcast of a matrix (a, b) with one (b, a), a ≠ b (scalars aside: np.where
    reports its −∞ too)."""
    shapes = [tuple(shape) for shape in error.get("shapes", []) if len(shape)]
    return (error.get("kind") == "broadcast" and len(shapes) == 2
            and all(len(shape) == 2 for shape in shapes) and shapes[0] == shapes[1][::-1]
            and shapes[0][0] != shapes[0][1])


def _reduced_without_keepdims(error):
    """True for a broadcast of a matrix (a, b) with a vector (a,), a ≠ b: one value per row,
    aligned by NumPy with the columns."""
    shapes = [tuple(shape) for shape in error.get("shapes", []) if len(shape)]
    if error.get("kind") != "broadcast" or len(shapes) != 2:
        return False
    matrix = next((shape for shape in shapes if len(shape) == 2), None)
    vector = next((shape for shape in shapes if len(shape) == 1), None)
    return (matrix is not None and vector is not None and vector[0] == matrix[0]
            and matrix[0] != matrix[1])


MISSING_HEAD = ("multihead.head_left_out",
                "tu concatenación tiene (h − 1)·d_v columnas, las de todas las cabezas menos "
                "una: ¿recorres range(len(heads) − 1), o te dejas la última cabeza?")
# Said from the error's sizes alone, so as a question: the weights, (n, n), are one way to give
# each head n columns; heads computed on transposed projections (d_k, n) are another (an eleventh
# blind probe, p11 003, was told «son los pesos» for the second).
WEIGHTS_CONCATENATED = ("multihead.weights_concatenated",
                        "tu concatenación tiene h·n columnas, n por cabeza, donde van h·d_v: "
                        "cada cabeza te da n columnas en lugar de d_v. ¿Concatenas los pesos de "
                        "las cabezas, de forma (n, n), en lugar de sus salidas? attention "
                        "devuelve (salida, pesos): concatena la primera, de forma (n, d_v). ¿O "
                        "calculas las cabezas con las proyecciones traspuestas (una columna por "
                        "token)? Cada una es attention(X·W_Q, X·W_K, X·W_V)")


FOREIGN_SIZE = ("shapes.foreign_size",
                "un tamaño de este error no es ninguno de los de las entradas de la función ni "
                "un producto de ellos: revisa de dónde sale (¿una variable global del "
                "cuaderno, como X, W1 o d_k, en lugar de un argumento? ¿un número escrito a "
                "mano? ¿un ±1?)")


def _foreign_size(function, inputs, error):
    """True when the error reports a size that is none of the case's, nor a product of them:
    a size the function took from somewhere else than its arguments."""
    sizes, shown = named_sizes(function, inputs), case_sizes(function, inputs)
    values = [v for v in [*error.get("numbers", []),
                          *(d for shape in error.get("shapes", []) for d in shape)]
              if type(v) is int and v > 1]
    return error.get("kind") in SHAPE_KINDS and any(
        product_named(v, sizes, shown) == shown.number(v) and not shown.allows(v)
        for v in values)


def _multihead_cause(function, inputs, error):
    """What the left side of a product that does not fit says about the concatenation."""
    numbers = error.get("numbers", [])
    if function != "multihead" or error.get("kind") != "matmul" or len(numbers) < 2:
        return []
    sizes = named_sizes(function, inputs)
    columns = numbers[1]
    # With h = 2, (h − 1)·d_v is d_v, which summing the heads gives too: not said then.
    if sizes["h"] > 2 and columns == sizes.get("(h − 1)·d_v"):
        return [MISSING_HEAD]
    # With n = d_model, h·n columns are also h heads of d_model columns (X used as V): only
    # a count that nothing else gives says the weights were concatenated.
    width = sizes["h"] * np.shape(inputs["X"])[1]
    if columns == sizes["h·n"] and columns not in (sizes["h·d_v"], width):
        return [WEIGHTS_CONCATENATED]
    return []


def explain_error(function, inputs, error, notes=True):
    """[(id or None, sentence)] explaining a shape error: the case's sizes (and, with
    ``notes``, what makes them unusual), then what the notebook asked for, which is the same
    on every case and so said once for all of them; empty when the error says nothing about
    shapes."""
    said = error_in_sizes(function, inputs, error)
    # A shape error whose sizes are all hidden still gets what the notebook asked for.
    shape_error = error.get("kind") in SHAPE_KINDS
    if said is None and not shape_error and error.get("kind") not in ("other", "stand_in"):
        return []
    note = case_note(function, inputs, error) if notes else None
    sentences = [s for s in (said, note and note[1]) if s]
    # Said apart from the case's sizes, so that every case that raised it says it once.
    cause = ([KEEPDIMS] if _reduced_without_keepdims(error) else []) + (
        [TRANSPOSED] if _transposed_operands(error) else []) + _multihead_cause(
        function, inputs, error) + ([FOREIGN_SIZE] if _foreign_size(function, inputs, error)
                                    else [])
    if not sentences:
        return cause + [(None, ASKED[function])] if shape_error else []
    return [(note and note[0], "; ".join(sentences))] + cause + [(None, ASKED[function])]
