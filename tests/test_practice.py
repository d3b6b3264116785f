"""The practice exercises of «Más allá de los nueve pasos» (issue 33): each check accepts the
solution, rejects a typical mistake with the sentence that names it, and, while the exercise is
not done, fails with a Spanish reminder (an AssertionError, the only failure Otter's check shows
as a sentence) instead of stopping the notebook.

The exercises, their solutions and their checks are read from the master, as Otter Assign reads
them; the graded functions they use are the reference's."""

import ast
import re

import numpy as np
import pytest

from reference import attention as reference
from kit_autograder.build.otter_master import _raw_config, QUESTION_HEADER, load_master
from lesson055 import MASTER

PRACTICE = ("cruzada", "relleno", "cabezas", "cache_kv", "coste")
UNFINISHED = "Todavía no se puede comprobar"


def given():
    """What the notebook defines before the exercises: the reference's graded functions and
    the given helpers."""
    return {"np": np, "mascara_causal": lambda n: np.tril(np.ones((n, n), dtype=bool)),
            **{name: getattr(reference, name) for name in
               ("attention", "multihead", "softmax", "positional_encoding")}}


def between(source, begin, end):
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(begin))
    stop = next(i for i, line in enumerate(lines) if i > start and line.strip().startswith(end))
    return "\n".join(lines[start + 1:stop])


def exercises():
    """``{question: (solution source, stub source, test function, test source)}`` of the
    master's practice questions, in its order."""
    found, question = {}, None
    for cell in load_master(MASTER).cells:
        config = _raw_config(cell, QUESTION_HEADER)
        if config is not None:
            question = config["name"]
        if question not in PRACTICE or cell.cell_type != "code":
            continue
        if "# BEGIN SOLUTION NO PROMPT" in cell.source:
            found[question] = [between(cell.source, "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION"),
                               between(cell.source, '""" # BEGIN PROMPT', '""" # END PROMPT')]
        elif "BEGIN TEST CONFIG" in cell.source:
            namespace = {}
            exec(cell.source, namespace)
            (test,) = [value for name, value in namespace.items() if name.startswith("test_")]
            found[question] += [test, cell.source]
    return found


EXERCISES = exercises()


def defined(source, namespace=None):
    """The one function ``source`` defines, in a namespace with what the notebook gives."""
    namespace = {**given(), **(namespace or {})}
    exec(source, namespace)
    (name,) = re.findall(r"^def (\w+)\(", source, re.M)
    return namespace[name]


def run_check(question, function, **graded):
    """The question's check with ``function`` as the student's, and the graded functions it
    uses (the reference's unless given)."""
    test = EXERCISES[question][2]
    environment = {**given(), **graded}
    arguments = [function if i == 0 else environment[name]
                 for i, name in enumerate(test.__code__.co_varnames[:test.__code__.co_argcount])]
    return test(*arguments)


def failure(question, function, **graded):
    with pytest.raises(AssertionError) as raised:
        run_check(question, function, **graded)
    return str(raised.value)


def test_the_master_has_the_five_exercises_each_with_a_solution_a_stub_and_one_check():
    assert list(EXERCISES) == list(PRACTICE)
    for question, (solution, stub, test, _) in EXERCISES.items():
        assert solution.split("(")[0] == stub.split("(")[0], question  # the same function
        assert "raise NotImplementedError" in stub and "ejercicio sin nota" in stub, question
        assert test.__name__.startswith(f"test_{question}_"), test.__name__


@pytest.mark.parametrize("question", PRACTICE)
def test_each_check_accepts_the_solution(question):
    run_check(question, defined(EXERCISES[question][0]))


@pytest.mark.parametrize("question", PRACTICE)
def test_an_unfinished_exercise_fails_its_check_with_a_reminder_not_an_error(question):
    """The stub as students get it: one AssertionError that quotes the stub's own sentence."""
    stub = EXERCISES[question][1]
    message = failure(question, defined(stub))
    name = re.search(r"^def (\w+)\(", stub, re.M).group(1)
    assert message.startswith(f"{UNFINISHED}: Escribe {name}: sustituye esta línea"), message


@pytest.mark.parametrize("question, graded", [("cruzada", "multihead"), ("cabezas", "multihead"),
                                              ("cache_kv", "attention")])
def test_a_graded_function_not_done_yet_is_named_by_the_check(question, graded):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"Implementa {graded}: sustituye esta línea por tu código.")

    message = failure(question, defined(EXERCISES[question][0]), **{graded: stub})
    assert f"Implementa {graded}" in message, message


def test_cruzada_rejects_queries_from_the_encoder():
    def swapped(Y, Z, heads, W_O):
        outputs = [reference.attention(Z @ W_Q, Y @ W_K, Y @ W_V)[0] for W_Q, W_K, W_V in heads]
        return np.concatenate(outputs, axis=1) @ W_O

    assert "¿proyectas las consultas desde Z" in failure("cruzada", swapped)


def test_cruzada_rejects_self_attention_over_the_decoder():
    def self_attention(Y, Z, heads, W_O):
        return reference.multihead(Y, heads, W_O)

    assert "las claves y los valores salen de Z" in failure("cruzada", self_attention)


def test_relleno_rejects_an_encoder_mask_made_causal():
    """Issue 48.4: the exercise is an encoder's mask, where the padding mask is what keeps the
    real tokens as they are; a causal one would take real keys away."""
    def causal_too(longitudes, n):
        reales = np.arange(n)[None, :] < np.asarray(longitudes)[:, None]
        return reales[:, None, :] & np.tril(np.ones((n, n), dtype=bool))

    assert "no hay máscara causal" in failure("relleno", causal_too)


def test_relleno_rejects_padding_taken_from_the_queries():
    def rows(longitudes, n):
        reales = np.arange(n)[None, :] < np.asarray(longitudes)[:, None]
        return np.repeat(reales[:, :, None], n, axis=2)

    message = failure("relleno", rows)
    assert "no puede mirar ninguna clave" in message and "softmax daría NaN" in message


def test_relleno_rejects_one_padding_key_too_many():
    def off_by_one(longitudes, n):
        reales = np.arange(n)[None, :] <= np.asarray(longitudes)[:, None]
        return np.repeat(reales[:, None, :], n, axis=1)

    assert "deja mirar claves de relleno" in failure("relleno", off_by_one)


def fused(split, scale):
    """The fused multi-head attention with a chosen way of splitting heads and scale."""
    def multicabeza_fusionada(X, W_Q, W_K, W_V, W_O, h, mask=None):
        n, d_model = X.shape
        d_k = d_model // h
        Qs, Ks, Vs = (split(X @ W, n, h, d_k) for W in (W_Q, W_K, W_V))
        scores = Qs @ Ks.transpose(0, 2, 1) / np.sqrt(scale(d_model, d_k))
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        heads = reference.softmax(scores, axis=-1) @ Vs
        return heads.transpose(1, 0, 2).reshape(n, d_model) @ W_O
    return multicabeza_fusionada


def test_cabezas_accepts_a_right_answer_written_otherwise_and_rejects_a_reshape_without_transpose():
    right = fused(lambda M, n, h, d_k: M.reshape(n, h, d_k).transpose(1, 0, 2), lambda d, d_k: d_k)
    run_check("cabezas", right)  # the positive control of the two mistakes below
    no_transpose = fused(lambda M, n, h, d_k: M.reshape(h, n, d_k), lambda d, d_k: d_k)
    assert "reshape a (n, h, d_k) y después transpose" in failure("cabezas", no_transpose)


def test_cabezas_rejects_scaling_by_d_model():
    by_d_model = fused(lambda M, n, h, d_k: M.reshape(n, h, d_k).transpose(1, 0, 2),
                       lambda d, d_k: d)
    assert "su propia d_k = d_model / h" in failure("cabezas", by_d_model)


def test_cabezas_rejects_a_fused_attention_that_ignores_the_mask():
    right = defined(EXERCISES["cabezas"][0])

    def no_mask(X, W_Q, W_K, W_V, W_O, h, mask=None):
        return right(X, W_Q, W_K, W_V, W_O, h)

    assert "con la máscara causal no" in failure("cabezas", no_mask)


def test_cache_kv_rejects_a_step_that_forgets_the_new_token():
    def without_itself(x, K_cache, V_cache, W_Q, W_K, W_V):
        salida = reference.attention(x @ W_Q, K_cache, V_cache)[0]
        return salida, np.vstack([K_cache, x @ W_K]), np.vstack([V_cache, x @ W_V])

    assert "también se mira a sí mismo" in failure("cache_kv", without_itself)


def test_cache_kv_rejects_a_causal_mask_over_the_cache():
    def masked(x, K_cache, V_cache, W_Q, W_K, W_V):
        K, V = np.vstack([K_cache, x @ W_K]), np.vstack([V_cache, x @ W_V])
        mask = np.tril(np.ones((1, len(K)), dtype=bool))  # the full computation's first row
        return reference.attention(x @ W_Q, K, V, mask)[0], K, V

    assert "sin máscara" in failure("cache_kv", masked)


def test_cache_kv_rejects_a_cache_that_does_not_grow():
    def forgetful(x, K_cache, V_cache, W_Q, W_K, W_V):
        K, V = np.vstack([K_cache, x @ W_K]), np.vstack([V_cache, x @ W_V])
        return reference.attention(x @ W_Q, K, V)[0], K_cache, V_cache

    assert "La caché crece una fila por paso" in failure("cache_kv", forgetful)


@pytest.mark.parametrize("wrong, says", [
    (lambda n: (n * n, n * (n + 1) // 2), "no solo en el último"),
    (lambda n: (sum(t * t for t in range(1, n + 1)), n), "con las t claves de la caché"),
    (lambda n: (n * (n + 1) // 2, sum(t * t for t in range(1, n + 1))), "están al revés"),
])
def test_coste_rejects_the_usual_miscounts(wrong, says):
    assert says in failure("coste", wrong)


def test_coste_s_counts_are_the_two_generation_loops_counted():
    """The check's totals are written out (a formula in the check would be the answer): they
    are the dot products of the two generation loops, counted here, and the solution's."""
    written = ast.literal_eval(re.search(r"cuentas = (\{.*?\})", EXERCISES["coste"][3]).group(1))
    solution = defined(EXERCISES["coste"][0])
    for n, totals in written.items():
        without, with_cache = 0, 0
        for t in range(1, n + 1):
            without += np.ones((t, t)).size  # the prefix's whole t × t scores
            with_cache += np.ones((1, t)).size  # one query against the t cached keys
        assert totals == (without, with_cache) == solution(n), n


def test_the_kv_cache_statement_says_how_many_tokens_its_check_generates():
    statement = next(c.source for c in load_master(MASTER).cells
                     if c.cell_type == "markdown" and "**Ejercicio sin nota D" in c.source)
    steps = int(re.search(r"d_model, d_k, pasos = \d+, \d+, (\d+)", EXERCISES["cache_kv"][3]).group(1))
    assert f"La comprobación genera {steps} tokens" in statement
