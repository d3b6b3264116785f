"""A class built for the similarity pass (issue 50): independent work, and copies disguised.

Every notebook starts from the build's student notebook; only what students write changes: the
four graded functions (and the cells some put beside them), a practice exercise or two, the
nine written answers and the challenge's five texts.

Independent students write as a class does. A graded function is either one of the
repository's independently written implementations (``POOLS``: the probe's styles and
mistakes, the correct and public-style variants; each used by one student at most, as no two
students write the same idiosyncratic function), or drawn from a grammar of the small choices a
student makes at every line (which product, which scale, how the mask is written, the softmax
given or their own, intermediate names or not, tuple or index), weighted so that the form the
notebook suggests is the most common, as in a real class: independent students often write the
same ten lines. Written answers start from ideas phrased several ways, and each student has
their own habits: connectors, words they prefer, sentences of their own, accents dropped,
typos, lengths from one sentence to several.

Each planted copy takes one independent student's work and disguises it the way students do
(``DISGUISES``), on the source text itself, so that any student's code can be disguised:
identifiers renamed, comments and blank lines changed, independent statements reordered, a
loop turned into a comprehension, answers paraphrased by a synonym swap. ``PLANTED`` says which
parts each copy takes; the rest is its own.

``build(student_nb, n_independent, seed)`` returns ``Class``: ``{file: notebook bytes}`` and the
planted pairs, reproducible for a seed.
"""

import ast
import difflib
import io
import json
import random
import re
import textwrap
import tokenize
import unicodedata
from dataclasses import dataclass, field

import nbformat

GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")
GIVEN = {"np", "math", "softmax", "layer_norm", "init_multihead", "attention", "multihead",
         "positional_encoding", "transformer_block", "print", "len", "range", "zip", "sum",
         "enumerate", "list", "tuple", "float", "int", "map", "max", "min", "abs", "isinstance",
         "dict", "np", "self", "super", "True", "False", "None", "reversed", "sorted", "any", "all",
         "getattr", "setattr", "type", "object", "round", "lambda"}


def pick(rng, options):
    """One of ``options``: a list (uniform) or ``{option: weight}``."""
    if isinstance(options, dict):
        return rng.choices(list(options), weights=list(options.values()))[0]
    return rng.choice(options)


# --- the code grammar --------------------------------------------------------------------------
#
# Each maker returns the body's lines (indented by 4). ``{x}`` marks a name the student chooses;
# ``NAMES`` holds the pools, the first of each the notebook's own wording.

NAMES = {
    "scores": {"scores": 6, "s": 2, "puntuaciones": 3, "logits": 1, "S": 1, "sc": 1,
               "energia": 1, "scaled": 1, "att_scores": 1},
    "weights": {"weights": 6, "w": 2, "pesos": 3, "A": 1, "probs": 1, "alpha": 1, "attn": 1,
                "p": 1},
    "out": {"output": 4, "out": 3, "salida": 3, "Z": 1, "res": 1, "contexto": 1, "y": 1},
    "dk": {"d_k": 8, "dk": 3, "d": 2, "dim": 1, "n_dim": 1},
    "e": {"e": 3, "exp_scores": 1, "exps": 1, "num": 1, "ex": 1},
    "outs": {"outputs": 3, "heads_out": 2, "cabezas": 2, "salidas": 3, "outs": 2, "resultados": 1,
             "lista": 1, "head_outputs": 1},
    "wq": {"W_Q": 6, "Wq": 2, "wq": 1, "q_w": 1, "WQ": 1},
    "wk": {"W_K": 6, "Wk": 2, "wk": 1, "k_w": 1, "WK": 1},
    "wv": {"W_V": 6, "Wv": 2, "wv": 1, "v_w": 1, "WV": 1},
    "head": {"head": 3, "h": 2, "cabeza": 2, "out_h": 1, "salida_h": 1, "o": 1},
    "concat": {"concat": 4, "H": 1, "juntas": 1, "concatenado": 2, "cat": 1, "multi": 1},
    "pos": {"pos": 6, "positions": 2, "posiciones": 2, "p": 1, "idx": 1},
    "omega": {"omega": 8, "freqs": 1, "w": 1, "frecuencias": 1, "inv_freq": 1},
    "pe": {"pe": 6, "PE": 3, "enc": 1, "M": 1, "codif": 1},
    "ang": {"angles": 3, "ang": 2, "args": 1, "fase": 1, "theta": 1, "angulos": 2},
    "i": {"i": 6, "dims": 1, "idx2": 1, "k": 1, "j": 1},
    "a": {"attn": 3, "a": 2, "att_out": 1, "mh": 2, "sub1": 1, "atencion": 1, "z": 1},
    "h": {"h": 4, "hidden": 2, "oculta": 1, "ffn_in": 1, "inter": 1},
    "f": {"ffn": 3, "f": 2, "ff": 1, "ffn_out": 1, "red": 1},
    "y": {"y": 2, "out": 2, "salida": 1, "res": 1, "x2": 2},
}


def _attention(rng, bug):
    lines = []
    if rng.random() < 0.08:
        lines.append(pick(rng, ["    assert Q.shape[1] == K.shape[1]",
                                "    n, m = Q.shape[0], K.shape[0]",
                                "    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)"]))
    dk_expr = pick(rng, {"K.shape[-1]": 5, "K.shape[1]": 4, "Q.shape[-1]": 1, "Q.shape[1]": 1,
                         "len(K[0])": 0.3, "np.shape(K)[1]": 0.3})
    if bug == "sqrt_of_num_queries":
        dk_expr = pick(rng, ["Q.shape[0]", "len(Q)"])
    inline = rng.random() < 0.45
    if not inline:
        lines.append(f"    {{dk}} = {dk_expr}")
    dk = dk_expr if inline else "{dk}"
    scale = pick(rng, {f"/ np.sqrt({dk})": 12, f"/ {dk} ** 0.5": 2, f"/ math.sqrt({dk})": 1.5,
                       f"* (1 / np.sqrt({dk}))": 1, f"/ np.sqrt(float({dk}))": 0.5,
                       f"* {dk} ** -0.5": 0.5})
    if bug == "no_sqrt_dk":
        scale = ""
    elif bug == "divides_by_dk":
        scale = f"/ {dk}"
    product = pick(rng, {"Q @ K.T": 12, "np.dot(Q, K.T)": 3, "np.matmul(Q, K.T)": 2,
                         "Q @ K.transpose()": 0.7, "Q @ np.transpose(K)": 0.7,
                         "np.einsum('ik,jk->ij', Q, K)": 0.6, "Q.dot(K.T)": 1})
    if scale and rng.random() < 0.25:
        product = f"({product})"
    if rng.random() < 0.06 and scale:
        lines.append(f"    escala = 1 / np.sqrt({dk})" if "sqrt" in scale else f"    escala = {dk}")
        scale = "* escala" if "sqrt" in scale else "/ escala"
    lines.append(f"    {{scores}} = {product} {scale}".rstrip())
    fill = pick(rng, {"-np.inf": 10, "-1e9": 4, "float('-inf')": 1, "-1e30": 0.5,
                      "-np.infty": 0.3, "-10**9": 0.3})
    masking = pick(rng, {
        f"np.where(mask, {{scores}}, {fill})": 12,
        f"np.where(mask == 0, {fill}, {{scores}})": 1,
        f"np.where(~mask, {fill}, {{scores}})": 1,
        f"np.where(np.logical_not(mask), {fill}, {{scores}})": 0.5,
        f"np.where(mask == False, {fill}, {{scores}})": 0.7,
        "index": 2.5,
        "additive": 0.8,
    })
    if masking == "index":
        chosen = pick(rng, {"~mask": 3, "mask == 0": 1, "mask == False": 1, "np.logical_not(mask)": 1})
        block = [f"        {{scores}}[{chosen}] = {fill}"]
        if rng.random() < 0.4:
            block.insert(0, "        {scores} = {scores}.copy()")
    elif masking == "additive":
        block = [f"        {{scores}} = {{scores}} + np.where(mask, 0, {fill})"]
    else:
        block = [f"        {{scores}} = {masking}"]
    mask_test = pick(rng, {"mask is not None": 12, "not mask is None": 0.3, "mask is not None:  #": 0})
    if bug == "mask_after_softmax":
        mask_lines = []
    else:
        mask_lines = [f"    if {mask_test}:"] + block
    axis_given = pick(rng, {"": 6, ", axis=-1": 3, ", axis=1": 1.5, ", -1": 0.5})
    axis = pick(rng, {"-1": 3, "1": 2})
    if bug == "softmax_over_queries":
        axis_given, axis = ", axis=0", "0"
    style = pick(rng, {"given": 8, "inline": 2, "shifted": 1, "unshifted": 0.3})
    if bug == "unshifted_softmax":
        style = "unshifted"
    keep = pick(rng, {"keepdims=True": 4, "keepdims = True": 0})
    if style == "given":
        soft = [f"    {{weights}} = softmax({{scores}}{axis_given})"]
    elif style == "inline":
        soft = [f"    {{e}} = np.exp({{scores}} - {{scores}}.max(axis={axis}, {keep}))",
                f"    {{weights}} = {{e}} / {{e}}.sum(axis={axis}, {keep})"]
    elif style == "shifted":
        soft = [f"    {{scores}} = {{scores}} - np.max({{scores}}, axis={axis}, {keep})",
                "    {weights} = np.exp({scores})",
                f"    {{weights}} = {{weights}} / np.sum({{weights}}, axis={axis}, {keep})"]
    else:
        soft = ["    {e} = np.exp({scores})",
                f"    {{weights}} = {{e}} / {{e}}.sum(axis={axis}, {keep})"]
    lines += mask_lines + soft
    if bug == "mask_after_softmax":
        lines += ["    if mask is not None:",
                  pick(rng, ["        {weights} = {weights} * mask",
                             "        {weights} = np.where(mask, {weights}, 0)"])]
    values = "K" if bug == "keys_for_values" else "V"
    output = pick(rng, {f"{{weights}} @ {values}": 10, f"np.dot({{weights}}, {values})": 3,
                        f"np.matmul({{weights}}, {values})": 1,
                        f"{{weights}}.dot({values})": 0.7})
    returned = "{weights}.T" if bug == "weights_transposed" else "{weights}"
    if rng.random() < 0.5:
        lines.append(f"    {{out}} = {output}")
        lines.append(pick(rng, {f"    return {{out}}, {returned}": 4,
                                f"    return ({{out}}, {returned})": 1}))
    else:
        lines.append(f"    return {output}, {returned}")
    return lines


def _multihead(rng, bug):
    mask = pick(rng, {", mask": 4, ", mask=mask": 3, ", mask = mask": 0})
    if bug == "mask_not_passed":
        mask = ""
    values = "{wk}" if bug == "w_k_for_values" else "{wv}"
    project = rng.random() < 0.3
    take = pick(rng, {"[0]": 3, "unpack": 2})
    if project:
        args = "Q_h, K_h, V_h"
        projection = pick(rng, [
            [f"        Q_h = X @ {{wq}}", "        K_h = X @ {wk}", f"        V_h = X @ {values}"],
            [f"        Q_h, K_h, V_h = X @ {{wq}}, X @ {{wk}}, X @ {values}"],
            ["        Q_h = np.dot(X, {wq})", "        K_h = np.dot(X, {wk})",
             f"        V_h = np.dot(X, {values})"]])
    else:
        product = pick(rng, {"@": 5, "dot": 1})
        if product == "@":
            args = f"X @ {{wq}}, X @ {{wk}}, X @ {values}"
        else:
            args = f"np.dot(X, {{wq}}), np.dot(X, {{wk}}), np.dot(X, {values})"
        projection = []
    call = f"attention({args}{mask})"
    style = pick(rng, {"loop": 5, "index": 1.5, "enumerate": 1, "comprehension": 3})
    if project and style == "comprehension":
        style = "loop"
    if bug == "sums_heads":
        style = pick(rng, ["loop", "comprehension"]) if not project else "loop"
    lines = []
    unpack = take == "unpack" and style != "comprehension"
    if style == "comprehension":
        lines.append(f"    {{outs}} = [{call}[0] for {{wq}}, {{wk}}, {{wv}} in heads]")
    else:
        lines.append("    {outs} = []")
        if style == "loop":
            lines.append(pick(rng, {"    for {wq}, {wk}, {wv} in heads:": 5,
                                    "    for ({wq}, {wk}, {wv}) in heads:": 1}))
        elif style == "index":
            lines += ["    for i in range(len(heads)):", "        {wq}, {wk}, {wv} = heads[i]"]
        else:
            lines.append("    for i, ({wq}, {wk}, {wv}) in enumerate(heads):")
        lines += projection
        if unpack:
            lines += [f"        {{head}}, _ = {call}", "        {outs}.append({head})"]
        elif rng.random() < 0.3:
            lines += [f"        {{head}} = {call}[0]", "        {outs}.append({head})"]
        else:
            lines.append(f"        {{outs}}.append({call}[0])")
    joined = pick(rng, {"np.concatenate({outs}, axis=1)": 6, "np.concatenate({outs}, axis=-1)": 3,
                        "np.hstack({outs})": 3, "np.column_stack({outs})": 0.7,
                        "np.concatenate({outs}, 1)": 0.5})
    final = pick(rng, {"{concat} @ W_O": 6, "np.dot({concat}, W_O)": 2,
                       "np.matmul({concat}, W_O)": 0.7, "{concat}.dot(W_O)": 0.4})
    if bug == "sums_heads":
        joined = pick(rng, ["sum({outs})", "np.sum({outs}, axis=0)"])
        final = "{concat} @ W_O[: {concat}.shape[1]]"
    elif bug == "no_w_o":
        final = "{concat}"
    if rng.random() < 0.55:
        lines.append(f"    {{concat}} = {joined}")
        lines.append(f"    return {final}")
    else:  # every way of joining is a call: no parentheses needed around it
        lines.append(f"    return {final.replace('{concat}', joined)}")
    return lines


def _positional(rng, bug):
    lines = []
    arange = "np.arange(1, n_positions + 1)" if bug == "positions_from_one" else \
        pick(rng, {"np.arange(n_positions)": 8, "np.arange(0, n_positions)": 1})
    pos = pick(rng, {f"{arange}[:, None]": 6, f"{arange}.reshape(-1, 1)": 3,
                     f"{arange}[:, np.newaxis]": 2, f"np.expand_dims({arange}, 1)": 0.7,
                     f"{arange}.reshape(n_positions, 1)": 0.7})
    i_expr = pick(rng, {"np.arange(0, d_model, 2)": 8, "2 * np.arange((d_model + 1) // 2)": 2,
                        "np.arange(d_model)[::2]": 1})
    base = "1000" if bug == "base_1000" else pick(rng, {"10000": 6, "10000.0": 2, "10_000": 0.4})
    exponent = f"{{i}} / d_model"
    if bug == "exponent_i_over_d":
        exponent = f"({{i}} // 2) / d_model"
    omega = pick(rng, {f"1 / {base} ** ({exponent})": 6,
                       f"1.0 / np.power({base}, {exponent})": 2,
                       f"np.exp(-np.log({base}) * {exponent})": 1.5,
                       f"{base} ** (-{exponent})": 1,
                       f"np.power({base}, -{exponent})": 0.7})
    separate_i = rng.random() < 0.35
    if separate_i:
        lines.append(f"    {{i}} = {i_expr}")
    else:
        omega = omega.replace("{i}", "(" + i_expr + ")" if not i_expr.startswith("np.arange(0")
                              else i_expr)
    zeros = pick(rng, {"np.zeros((n_positions, d_model))": 8,
                       "np.zeros((n_positions, d_model), dtype=float)": 1,
                       "np.empty((n_positions, d_model))": 1.5,
                       "np.zeros(shape=(n_positions, d_model))": 0.5})
    setup = [f"    {{pos}} = {pos}", f"    {{omega}} = {omega}", f"    {{pe}} = {zeros}"]
    rng.shuffle(setup)  # the order a student writes them in
    lines += setup
    ang = pick(rng, {"{pos} * {omega}": 6, "np.outer({pos}, {omega})": 0.7,
                     "{pos} * {omega}[None, :]": 1, "{pos} * {omega}.reshape(1, -1)": 0.5,
                     "{pos} @ {omega}[None, :]": 0.5})
    if "outer" in ang:
        lines[lines.index(f"    {{pos}} = {pos}")] = f"    {{pos}} = {arange}"
    sin, cos = ("np.cos", "np.sin") if bug == "sin_cos_swapped" else ("np.sin", "np.cos")
    even = pick(rng, {"0::2": 3, "::2": 2})
    separate_ang = rng.random() < 0.7
    angle = "{ang}" if separate_ang else "(" + ang + ")" if "*" in ang else ang
    if separate_ang:
        lines.append(f"    {{ang}} = {ang}")
    lines.append(f"    {{pe}}[:, {even}] = {sin}({angle})")
    if bug == "odd_d_model":
        cos_line = f"    {{pe}}[:, 1::2] = {cos}({angle})"
    else:
        cos_line = pick(rng, {
            f"    {{pe}}[:, 1::2] = {cos}({angle}[:, : d_model // 2])": 3,
            f"    {{pe}}[:, 1::2] = {cos}({angle})[:, : d_model // 2]": 3,
            f"    {{pe}}[:, 1::2] = {cos}({angle}[:, :{{pe}}[:, 1::2].shape[1]])": 1,
            f"    {{pe}}[:, 1::2] = {cos}({angle})[:, :d_model // 2]": 1,
            "half": 1.5,
        })
        if cos_line == "half":
            cos_line = (f"    n_cos = d_model // 2\n"
                        f"    {{pe}}[:, 1::2] = {cos}({angle}[:, :n_cos])")
    lines.append(cos_line)
    returned = "{pe}.T" if bug == "transposed" else "{pe}"
    lines.append(pick(rng, {f"    return {returned}, {{omega}}": 5,
                            f"    return ({returned}, {{omega}})": 1}))
    return lines


def _block(rng, bug):
    mask = pick(rng, {", mask": 4, ", mask=mask": 2})
    if bug == "mask_not_passed":
        mask = ""
    relu = pick(rng, {"np.maximum(0, {inner})": 8, "np.maximum({inner}, 0)": 2,
                      "np.maximum(0.0, {inner})": 1, "np.clip({inner}, 0, None)": 0.5,
                      "np.where({inner} > 0, {inner}, 0)": 0.5, "relu({inner})": 1})
    lines = []
    if relu.startswith("relu("):
        lines.append(pick(rng, ["    relu = lambda v: np.maximum(v, 0)",
                                "    relu = lambda z: np.maximum(0, z)"]))
    inner = "x @ W1" if bug == "no_b1" else pick(rng, {"x @ W1 + b1": 8, "np.dot(x, W1) + b1": 2,
                                                      "x.dot(W1) + b1": 0.5})
    second = pick(rng, {"{h} @ W2 + b2": 8, "np.dot({h}, W2) + b2": 2, "{h}.dot(W2) + b2": 0.5})
    if bug == "pre_ln":
        lines.append(f"    x = x + multihead(layer_norm(x), heads, W_O{mask})")
        lines.append("    {h} = " + relu.replace("{inner}", inner.replace("x", "layer_norm(x)", 1)))
        lines.append("    return x + " + second)
        return lines
    style = pick(rng, {"steps": 5, "short": 3, "nested": 1})
    name_x = pick(rng, {"x": 5, "{y}": 2})
    if style == "nested":
        hidden = relu.replace("{inner}", inner.replace("x", "{a}"))
        lines.append(f"    {{a}} = layer_norm(x + multihead(x, heads, W_O{mask}))")
        lines.append(f"    return layer_norm({{a}} + {second.replace('{h}', hidden)})")
        return lines
    if style == "steps":
        lines.append(f"    {{a}} = multihead(x, heads, W_O{mask})")
        lines.append(f"    {name_x} = layer_norm(x + {{a}})")
    else:
        lines.append(f"    {name_x} = layer_norm(x + multihead(x, heads, W_O{mask}))")
    inner = inner.replace("x", name_x)
    hidden = relu.replace("{inner}", f"({inner})" if "where" in relu else inner)
    lines.append(f"    {{h}} = {hidden}")
    second_in = second
    if rng.random() < 0.5:
        lines.append(f"    {{f}} = {second_in}")
        if rng.random() < 0.5:
            lines.append(f"    return layer_norm({name_x} + {{f}})")
        else:
            lines.append(f"    {{y}} = layer_norm({name_x} + {{f}})" if name_x != "{y}" else
                         f"    {{y}} = layer_norm({{y}} + {{f}})")
            lines.append("    return {y}")
    else:
        lines.append(f"    return layer_norm({name_x} + {second_in})")
    return lines


MAKERS = {"attention": _attention, "multihead": _multihead,
          "positional_encoding": _positional, "transformer_block": _block}
# The mistakes the grammar can make, each the catalog's name for it.
BUGS = {"attention": ["no_sqrt_dk", "divides_by_dk", "softmax_over_queries", "mask_after_softmax",
                      "sqrt_of_num_queries", "keys_for_values", "weights_transposed",
                      "unshifted_softmax"],
        "multihead": ["mask_not_passed", "sums_heads", "no_w_o", "w_k_for_values"],
        "positional_encoding": ["odd_d_model", "sin_cos_swapped", "positions_from_one",
                                "base_1000", "exponent_i_over_d", "transposed"],
        "transformer_block": ["pre_ln", "mask_not_passed", "no_b1"]}

COMMENTS = [
    ["# paso 1: puntuaciones", "# aplico la máscara", "# softmax por filas", "# media ponderada"],
    ["# calculamos QK^T / sqrt(dk)", "# posiciones prohibidas -> -inf", "# normalizo",
     "# salida"],
    ["# scores", "# mask", "# softmax", "# output"],
    ["# producto escalar escalado", "# si hay máscara", "# pesos que suman 1",
     "# combinación de valores"],
    ["# compute the scores", "# masking", "# normalize", "# weighted sum"],
    ["# TODO revisar", "# esto funciona", "# ojo con las dimensiones", "# ver enunciado"],
    ["# 1)", "# 2)", "# 3)", "# 4)"],
]


def _names(rng):
    return {key: pick(rng, pool) for key, pool in NAMES.items()}


def _stub_head(heads, function, docstring):
    head = heads[function]
    return list(head if docstring else head[:1])


def grammar_cell(rng, function, heads, bug=None):
    """One student's answer cell for ``function``, from the grammar."""
    body = MAKERS[function](rng, bug)
    names = _names(rng)
    text = "\n".join(body)
    for key, value in names.items():
        text = text.replace("{" + key + "}", value)
    lines = text.split("\n")
    comments = pick(rng, COMMENTS + [[]] * 5)
    out = _stub_head(heads, function, rng.random() < 0.75)
    for index, line in enumerate(lines):
        if comments and rng.random() < 0.35 and not line.startswith("        "):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + comments[index % len(comments)])
        out.append(line)
        if rng.random() < 0.1 and index < len(lines) - 1:
            out.append("")
    return "\n".join(out) + "\n"


# --- the repository's independently written implementations ------------------------------------

def _pools():
    """``{function: [cells, ...]}``: every implementation written independently for the kit's
    other tests (the probe's styles and mistakes, the correct and public-style variants)."""
    import inspect

    import correct_variants
    import probe_notebooks
    import real_world_variants

    pools = {function: [] for function in GRADED}
    for function, cells, *later in probe_notebooks.STYLES.values():
        if cells is not None:  # None: a style that changes another cell, not the answer
            pools[function].append(tuple(cells) + tuple(later[0] if later else ()))
    for bug in probe_notebooks.BUGS.values():
        pools[bug.function].append(tuple(bug.cells))
    for function, variants in correct_variants.VARIANTS.items():
        for variant in variants:
            source = textwrap.dedent(inspect.getsource(variant))
            source = re.sub(r"^def \w+\(", f"def {function}(", source, count=1)
            helpers = [textwrap.dedent(inspect.getsource(getattr(correct_variants, name)))
                       for name in re.findall(r"\b(_\w+)\(", source)
                       if callable(getattr(correct_variants, name, None))]
            pools[function].append(tuple(helpers + [source]))
    for variant in real_world_variants.VARIANTS:
        pools[variant.function].append(tuple(variant.cells))
    return pools


# --- written answers ---------------------------------------------------------------------------
#
# Each question has ideas; each idea is a sentence with slots, «{a|b|c}», one option drawn per
# slot. A student writes one to four ideas, in an order of their own, with their own habits.

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
        "{La salida|El resultado} de cada token es una media ponderada de {los valores|los "
        "vectores V}.",
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
        "{Si se suma el embedding|Al sumar la palabra}, {el truco|la construcción} {deja de "
        "funcionar|ya no es exacto} {porque|ya que} {el producto|la puntuación} {depende "
        "también|ya depende} de {las palabras|los embeddings}.",
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

# What a student adds of their own, to any answer.
ASIDES = [
    "{No estoy seguro|No lo tengo del todo claro|Tengo dudas} {de esta parte|de lo último|de si "
    "está bien}.",
    "{Esto lo vimos|Lo explicó el profesor|Lo comentamos} en {clase|la clase de teoría|las "
    "prácticas}.",
    "{Me costó|Tardé} {bastante|un rato|mucho} en {entenderlo|verlo|darme cuenta}.",
    "{Lo he comprobado|Lo comprobé} {en el cuaderno|ejecutando las celdas|a mano con un ejemplo "
    "pequeño}.",
    "{Es|Me parece} {la idea clave|lo más importante|lo fundamental} {del tema|de esta parte|del "
    "Transformer}.",
    "{Como dice|Según} {el enunciado|el cuaderno|el paso {3|5|7|8}}, {esto es lo esperado|se "
    "cumple}.",
    "{En resumen|Resumiendo|O sea}, {es lo que dice la fórmula|se ve en la fórmula|sale de "
    "la definición}.",
]
OPENERS = ["Además, ", "Por otro lado, ", "También ", "Creo que ", "Básicamente, ",
           "Es decir, ", "Yo diría que ", "Primero, ", "Luego, ", "Por último, ", "Y ",
           "En mi opinión, ", "Hay que tener en cuenta que "]
# A student's own words for some of the common ones: each student uses some of these, always,
# so that two students rarely write the very same sentence.
IDIOLECT = {
    "porque": ["ya que", "puesto que", "pues"], "los pesos": ["los coeficientes",
                                                             "los pesos de atención"],
    "la softmax": ["la función softmax", "el softmax"], "token": ["palabra", "elemento"],
    "tokens": ["palabras", "elementos"], "salida": ["output", "respuesta"],
    "resultado": ["output", "resultado final"], "las claves": ["las keys", "los vectores K"],
    "consulta": ["query", "pregunta"], "valores": ["values", "vectores de valor"],
    "matriz": ["array", "tabla"], "la máscara": ["la mask", "la máscara causal"],
    "entrada": ["input", "secuencia de entrada"], "modelo": ["sistema", "modelo entrenado"],
    "comprobé": ["miré", "revisé"], "muestran": ["reflejan", "dicen"],
    "así que": ["por lo que", "entonces"], "no cambia": ["se mantiene", "no se altera"],
    "demuestra": ["prueba", "garantiza"], "idénticos": ["iguales", "exactamente iguales"],
    "también": ["además", "igualmente"], "directamente": ["de forma directa", "sin intermediarios"],
    "solo": ["únicamente", "sólo"], "el laboratorio": ["el lab", "lab.py"],
    "la atención": ["el mecanismo de atención", "la attention"], "pequeñas": ["chicas",
                                                                              "reducidas"],
    "grandes": ["enormes", "altos"], "bloques": ["capas", "bloques apilados"],
    "concatena": ["junta", "une"], "en paralelo": ["a la vez", "simultáneamente"],
    "compara": ["contrasta", "enfrenta"], "media ponderada": ["promedio ponderado",
                                                              "suma ponderada"],
    "cambiar": ["variar", "ser distinto"], "prueba": ["test", "comprobación"],
    "puntuaciones": ["scores", "logits"], "muy": ["bastante", "súper"],
}

COMMON_WORDS = re.compile(r"\b(" + "|".join(sorted(map(re.escape, IDIOLECT), key=len,
                                                     reverse=True)) + r")\b")

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
    "sin": "prescindiendo de", "donde": "en donde", "que": "que", "la": "la",
}


def _fill(rng, template):
    # Innermost slots first, so that a slot may hold another.
    while "{" in template:
        template = re.sub(r"\{([^{}]*)\}", lambda m: rng.choice(m.group(1).split("|")), template)
    return template


VERB = re.compile(r"\b(es|son|da|sale|queda|vale|debe|deben|tiene|tienen|puede|cambia|"
                  r"suma|mide|depende|funciona|compara)\b")
FILLERS = ["realmente", "simplemente", "en este caso", "de hecho", "claramente", "más o menos",
           "en general", "en teoría", "al final", "justamente", "en principio", "siempre"]


@dataclass
class Habits:
    """How one student writes, the same in every answer."""

    words: dict  # their own word for some of the common ones, always
    vary: float  # chance that another common word is said another way, each time
    filler: float  # chance that a sentence gets a filler word somewhere
    opener: float  # chance that a sentence starts with a connector
    aside: float  # chance that an answer gets a sentence of their own
    accents: bool  # false: types without tildes
    typos: float  # chance per long word of a slip
    lower: bool  # starts sentences in lower case
    low: int
    high: int

    @classmethod
    def draw(cls, rng):
        words = {k: rng.choice(v) for k, v in IDIOLECT.items() if rng.random() < 0.3}
        return cls(words, rng.choice([0.1, 0.2, 0.3]), rng.choice([0.1, 0.25, 0.4]),
                   rng.choice([0, 0.1, 0.25, 0.4]), rng.choice([0, 0.2, 0.4, 0.6]),
                   rng.random() > 0.15, rng.choice([0, 0, 0.02, 0.05]), rng.random() < 0.1,
                   rng.choice([1, 1, 2]), rng.choice([2, 3, 4, 4]))


def _strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn").replace("n\u0303", "ñ")


def _slip(word, rng):
    i = rng.randrange(1, len(word) - 2)
    return (word[:i] + word[i + 1] + word[i] + word[i + 2:] if rng.random() < 0.6
            else word[:i] + word[i + 1:])


def write(rng, ideas, habits: Habits, low=None, high=None):
    """One answer: some of ``ideas``, in the student's own way."""
    low = habits.low if low is None else low
    high = habits.high if high is None else high
    chosen = rng.sample(ideas, min(len(ideas), rng.randint(low, high)))
    sentences = [_fill(rng, idea) for idea in chosen]
    if rng.random() < habits.aside:
        sentences.insert(rng.randrange(len(sentences) + 1), _fill(rng, rng.choice(ASIDES)))
    written = []
    for sentence in sentences:
        sentence = COMMON_WORDS.sub(lambda m: habits.words.get(m.group(0)) or (
            rng.choice(IDIOLECT[m.group(0)]) if rng.random() < habits.vary else m.group(0)),
            sentence)
        verbs = [m.end() for m in VERB.finditer(sentence)]
        if verbs and rng.random() < habits.filler:
            at = rng.choice(verbs)
            sentence = f"{sentence[:at]} {rng.choice(FILLERS)}{sentence[at:]}"
        if written and rng.random() < habits.opener:
            sentence = rng.choice(OPENERS) + sentence[0].lower() + sentence[1:]
        if habits.lower:
            sentence = sentence[0].lower() + sentence[1:]
        written.append(sentence)
    text = " ".join(written)
    if not habits.accents:
        text = _strip_accents(text)
    if habits.typos:
        text = re.sub(r"\b\w{7,}\b",
                      lambda m: _slip(m.group(0), rng) if rng.random() < habits.typos
                      else m.group(0), text)
    return text


def paraphrase(text, rng):
    """Every word the synonym table knows, swapped, and two sentences exchanged now and then."""
    def swap(match):
        word = match.group(0)
        new = SYNONYMS.get(word.lower())
        if new is None:
            return word
        return new[0].upper() + new[1:] if word[0].isupper() else new
    swapped = re.sub(r"\b\w+\b", swap, text)
    sentences = re.split(r"(?<=[.!?])\s+", swapped)
    if len(sentences) > 2 and rng.random() < 0.5:
        i = rng.randrange(len(sentences) - 1)
        sentences[i], sentences[i + 1] = sentences[i + 1], sentences[i]
    return " ".join(sentences)


# --- practice exercises (ungraded, "other code") ------------------------------------------------

def _practice(rng):
    """A practice exercise some students do: ``mascara_relleno`` or ``productos_escalares``."""
    if rng.random() < 0.5:
        body = pick(rng, {
            "    j = np.arange(n)\n    causal = j[None, :] <= j[:, None]\n"
            "    reales = j[None, :] < np.asarray(longitudes)[:, None]\n"
            "    return causal[None, :, :] & reales[:, None, :]": 3,
            "    causal = np.tril(np.ones((n, n), dtype=bool))\n"
            "    masks = []\n    for L in longitudes:\n        m = causal.copy()\n"
            "        m[:, L:] = False\n        masks.append(m)\n    return np.array(masks)": 2,
            "    out = np.zeros((len(longitudes), n, n), dtype=bool)\n"
            "    for b, L in enumerate(longitudes):\n        for i in range(n):\n"
            "            for j in range(min(i + 1, L)):\n                out[b, i, j] = True\n"
            "    return out": 1,
        })
        return "def mascara_relleno(longitudes, n):\n" + body + "\n"
    body = pick(rng, {
        "    sin_cache = sum(t * t for t in range(1, n + 1))\n"
        "    con_cache = sum(range(1, n + 1))\n    return sin_cache, con_cache": 3,
        "    return n * (n + 1) * (2 * n + 1) // 6, n * (n + 1) // 2": 2,
        "    a, b = 0, 0\n    for t in range(1, n + 1):\n        a += t ** 2\n        b += t\n"
        "    return a, b": 2,
    })
    return "def productos_escalares(n):\n" + body + "\n"


def _helper(rng):
    """A cell of the student's own beside the graded ones: a helper or a quick test."""
    n, d = rng.choice([2, 3, 4, 5, 6]), rng.choice([4, 8, 16])
    return pick(rng, [
        "def relu(z):\n    return np.maximum(0, z)\n",
        f"def comprueba(f, *args):\n    r = f(*args)\n    print(type(r), getattr(r, 'shape', None))\n",
        f"# pruebas mías\nQ_t = np.eye({n})\nprint(attention(Q_t, Q_t, Q_t)[1].sum(axis={rng.choice([1, -1])}))\n",
        f"def mi_norma(x, eps=1e-{rng.choice([5, 6])}):\n    mu = x.mean(-1, keepdims=True)\n"
        "    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)\n",
        f"def filas_suman_uno(p):\n    return np.allclose(p.sum(axis={rng.choice([1, -1])}), 1)\n",
        f"X_prueba = np.random.randn({n}, {d})\nprint(positional_encoding({n}, {d})[0].shape)\n",
        f"print(multihead(X, heads, W_O).shape)  # debería ser ({rng.choice(['n', '9'])}, 8)\n",
    ])


# --- disguises, on the source text ------------------------------------------------------------

RENAMES = ["aux", "tmp", "res", "val", "mat", "tabla", "cosa", "datos", "vec", "acc", "parcial",
           "interm", "paso", "bloque", "suma", "prod", "lst", "arr", "m1", "m2", "r", "q", "k2",
           "zz", "xx", "yy", "nuevo", "otro", "mio", "final", "base", "parte", "trozo", "capa"]


def _bound_names(tree, keep):
    """Names the code binds itself: assigned, loop and comprehension targets, local functions
    and their parameters (a graded function's own parameters stay: its signature is given)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in GRADED:
            found.add(node.name)
        elif isinstance(node, ast.Lambda):
            found.update(a.arg for a in node.args.args)
    return found - keep - GIVEN


def _rewrite_names(source, mapping):
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found, previous = [], None
    for index, token in enumerate(tokens):
        following = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if (token.type == tokenize.NAME and token.string in mapping and previous != "."
                and not (following == "=" and _in_call(tokens, index))):
            found.append(token)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    lines = source.splitlines(keepends=True)
    for token in reversed(found):  # from the end, so that earlier positions still hold
        (row, start), (_, end) = token.start, token.end
        line = lines[row - 1]
        lines[row - 1] = line[:start] + mapping[token.string] + line[end:]
    return "".join(lines)


def _in_call(tokens, index):
    depth = 0
    for token in reversed(tokens[:index]):
        if token.string in ")]}":
            depth += 1
        elif token.string in "([{":
            if depth == 0:
                return token.string == "("
            depth -= 1
    return False


def rename(cells, rng):
    """Every name the student's code binds, consistently replaced by another."""
    trees = [ast.parse(cell) for cell in cells]
    params = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in GRADED:
                params.update(a.arg for a in node.args.args + node.args.kwonlyargs)
    bound = set().union(*(_bound_names(tree, params) for tree in trees))
    used = {n.id for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Name)}
    fresh = [n for n in RENAMES if n not in used]
    rng.shuffle(fresh)
    mapping = {}
    for name in sorted(bound):
        mapping[name] = fresh.pop() if fresh else name + "_"
    return [_rewrite_names(cell, mapping) for cell in cells]


NEW_COMMENTS = ["# primero las puntuaciones", "# ahora la máscara", "# normalizamos",
                "# resultado", "# esto es lo importante", "# por si acaso", "# cálculo principal",
                "# juntamos todo", "# ver apuntes", "# así queda más claro"]


def recomment(cells, rng):
    """Comments removed and others written, blank lines moved, the docstring dropped or a new
    one written."""
    changed = []
    for cell in cells:
        tokens = list(tokenize.generate_tokens(io.StringIO(cell).readline))
        comments = {t.start[0]: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
        kept = []
        for number, line in enumerate(cell.split("\n"), 1):
            if number in comments:
                line = line[:comments[number]].rstrip()
            if line.strip():
                kept.append(line)
        tree = ast.parse("\n".join(kept))
        docstrings = {(n.body[0].lineno, n.body[0].end_lineno) for n in ast.walk(tree)
                      if isinstance(n, ast.FunctionDef) and n.name in GRADED and n.body
                      and isinstance(n.body[0], ast.Expr)
                      and isinstance(n.body[0].value, ast.Constant)}
        rebuilt = []
        for number, line in enumerate(kept, 1):
            if any(a <= number <= b for a, b in docstrings):
                continue
            stripped = line.lstrip()
            indent = line[: len(line) - len(stripped)]
            if indent and not stripped.startswith((")", "]", "}")) and rng.random() < 0.35:
                rebuilt.append(indent + rng.choice(NEW_COMMENTS))
            rebuilt.append(line)
            if (line.startswith("def ") and line.rstrip().endswith(":") and not docstrings
                    and rng.random() < 0.5):
                rebuilt.append('    """Mi versión."""')
            if rng.random() < 0.15:
                rebuilt.append("")
        text = "\n".join(rebuilt).rstrip() + "\n"
        try:
            ast.parse(text)
        except SyntaxError:  # a comment where a line continues: without the new comments
            text = "\n".join(line for number, line in enumerate(kept, 1)
                             if not any(a <= number <= b for a, b in docstrings)) + "\n"
        changed.append(text)
    return changed


def _reads_writes(node):
    reads, writes = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (writes if isinstance(sub.ctx, ast.Store) else reads).add(sub.id)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                and isinstance(sub.func.value, ast.Name):
            writes.add(sub.func.value.id)  # x.append(...), x.fill(...): may change x
        elif isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, ast.Store):
            base = sub.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                writes.add(base.id)
    return reads, writes


def _independent(a, b):
    ra, wa = _reads_writes(a)
    rb, wb = _reads_writes(b)
    control = (ast.Return, ast.If, ast.For, ast.While, ast.With, ast.Try, ast.Raise)
    return (not isinstance(a, control) and not isinstance(b, control)
            and not (wa & (rb | wb)) and not (wb & ra))


def reorder(cells, rng):
    """Adjacent statements of a graded function that do not depend on one another, in another
    order (the first such run of two or more)."""
    changed = list(cells)
    for index, cell in enumerate(cells):
        tree = ast.parse(cell)
        lines = cell.split("\n")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.FunctionDef) and node.name in GRADED):
                continue
            body = [n for n in node.body if not (isinstance(n, ast.Expr)
                                                 and isinstance(n.value, ast.Constant))]
            for start in range(len(body) - 1):
                run = [body[start]]
                for following in body[start + 1:]:
                    if all(_independent(s, following) for s in run):
                        run.append(following)
                    else:
                        break
                if len(run) < 2:
                    continue
                order = list(run)
                while order == run:
                    rng.shuffle(order)
                first, last = run[0].lineno - 1, run[-1].end_lineno
                segments = ["\n".join(lines[s.lineno - 1:s.end_lineno]) for s in order]
                # Comments between the statements go with the run, in front.
                between = [l for l in lines[first:last] if l.strip().startswith("#")]
                lines[first:last] = between + segments
                changed[index] = "\n".join(lines)
                return changed
    return changed


def to_comprehension(cells, rng):
    """``out = []`` and a loop that appends to it, as one list comprehension, written the way
    a student rewrites it: the loop's simple assignments pasted into the appended expression
    (this rewrite is the test's own, on the text; the detector undoes it on the syntax tree)."""
    changed = list(cells)
    for index, cell in enumerate(cells):
        tree = ast.parse(cell)
        lines = cell.split("\n")
        segment = lambda node: ast.get_source_segment(cell, node)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            for first, loop in zip(body, body[1:]):
                if not (isinstance(first, ast.Assign) and segment(first.value) == "[]"
                        and isinstance(loop, ast.For) and not loop.orelse):
                    continue
                name = segment(first.targets[0])
                *steps, last = loop.body
                appended = re.fullmatch(rf"{re.escape(name)}\.append\((.*)\)",
                                        segment(last) or "", re.S)
                simple = all(isinstance(step, ast.Assign) and len(step.targets) == 1
                             and segment(step.targets[0]).replace(",", "").replace(" ", "")
                             .isidentifier() for step in steps)
                if not (appended and simple):
                    continue
                element = appended.group(1)
                for step in reversed(steps):  # the latest assignment is pasted in first
                    targets = [t.strip() for t in segment(step.targets[0]).split(",")]
                    values = [segment(step.value)] if len(targets) == 1 else \
                        [segment(v) for v in getattr(step.value, "elts", [])]
                    if len(values) != len(targets):
                        break
                    for target, value in zip(targets, values):
                        element = re.sub(rf"\b{re.escape(target)}\b", f"({value})", element)
                else:
                    indent = lines[first.lineno - 1][: first.col_offset]
                    lines[first.lineno - 1:loop.end_lineno] = [
                        f"{indent}{name} = [{element} for {segment(loop.target)} in "
                        f"{segment(loop.iter)}]"]
                    changed[index] = "\n".join(lines)
                    return changed
    return changed


def disguisable(student, plant, disguise):
    """Whether ``disguise`` changes some function ``plant`` takes from ``student``."""
    return any(DISGUISES[disguise](list(student.code[f]), random.Random(0))
               != list(student.code[f]) for f in plant.functions)


DISGUISES = {"rename": rename, "comments": recomment, "reorder": reorder,
             "comprehension": to_comprehension}


# --- students and copies ----------------------------------------------------------------------

@dataclass
class Student:
    code: dict  # function -> [cell source, ...]: the answer cell, then any cells after it
    helpers: list  # other cells of their own
    answers: dict  # q1..q9 -> text ("" when left empty)
    challenge: dict  # field -> text
    origin: dict = field(default_factory=dict)  # function -> "grammar" or the pool's entry


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


TWINS = 0.7  # difflib's ratio from which two of the repository's implementations are one family


class Drawer:
    """Draws independent students; each of the repository's implementations goes to one
    student at most."""

    def __init__(self, rng, heads, pool_share=0.3):
        self.rng, self.heads, self.pool_share = rng, heads, pool_share
        self.pools = {f: list(entries) for f, entries in _pools().items()}
        for entries in self.pools.values():
            rng.shuffle(entries)

    def code(self, function, bug):
        if self.pools[function] and self.rng.random() < self.pool_share:
            cells = self.pools[function].pop()
            # The repository's mistakes are often one of its styles with one thing changed:
            # a family of near twins, of which a class of independent students has one.
            text = "\n".join(cells)
            self.pools[function] = [other for other in self.pools[function]
                                    if difflib.SequenceMatcher(None, text, "\n".join(other))
                                    .ratio() < TWINS]
            return list(cells), "pool"
        return [grammar_cell(self.rng, function, self.heads, bug)], "grammar"

    def student(self):
        rng = self.rng
        code, origin = {}, {}
        wrong = set(rng.sample(GRADED, rng.randint(1, 2))) if rng.random() < 0.4 else set()
        for function in GRADED:
            bug = rng.choice(BUGS[function]) if function in wrong else None
            code[function], origin[function] = self.code(function, bug)
        helpers = []
        if rng.random() < 0.3:
            helpers.append(_helper(rng))
        if rng.random() < 0.35:
            helpers.append(_practice(rng))
        habits = Habits.draw(rng)
        answers = {q: (write(rng, ideas, habits) if rng.random() < 0.9 else "")
                   for q, ideas in IDEAS.items()}
        challenge = {key: write(rng, ideas, habits, 1, 2) for key, ideas in CHALLENGE.items()}
        return Student(code, helpers, answers, challenge, origin)


def disguised_copy(source: Student, own: Student, plant: Plant, rng):
    code = {}
    for function in GRADED:
        if function not in plant.functions:
            code[function] = own.code[function]
            continue
        taken = list(source.code[function])
        for disguise in plant.disguises:
            taken = DISGUISES[disguise](taken, rng)
        code[function] = taken
    answers = {q: (paraphrase(source.answers[q], rng) if q in plant.written else own.answers[q])
               for q in own.answers}
    challenge = ({k: paraphrase(v, rng) for k, v in source.challenge.items()}
                 if plant.challenge else own.challenge)
    helpers = source.helpers if plant.functions == GRADED else own.helpers
    return Student(code, helpers, answers, challenge)


# --- notebooks ---------------------------------------------------------------------------------


def stub_heads(student_nb):
    """``{function: [def line, docstring lines...]}`` of the build's stubs, as students get
    them: everything before the stub's ``raise``."""
    heads = {}
    for cell in student_nb.cells:
        if cell.cell_type != "code":
            continue
        for function in GRADED:
            if cell.source.startswith(f"def {function}("):
                tree = ast.parse(cell.source).body[0]
                heads[function] = cell.source.splitlines()[:tree.body[-1].lineno - 1]
    return heads


def _code_cell(source):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source}


def notebook(template: str, student: Student):
    """The student's notebook, as bytes: the build's notebook (``template``, its JSON) with
    their cells in place of the stubs."""
    nb = json.loads(template)
    cells = nb["cells"]
    text = lambda cell: cell["source"] if isinstance(cell["source"], str) \
        else "".join(cell["source"])
    for function in GRADED:
        index = next(i for i, cell in enumerate(cells) if cell["cell_type"] == "code"
                     and text(cell).startswith(f"def {function}("))
        cells[index:index + 1] = [_code_cell(source) for source in student.code[function]]
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        if text(cell).lstrip().startswith("# Sustituye cada None"):
            cell["source"] = "student_extension = {\n" + "".join(
                f"    {key!r}: {value!r},\n" for key, value in student.challenge.items()) + \
                "}\nresultado = {**resultado_lab, \"student_extension\": student_extension}\n"
        elif text(cell).startswith("import numpy as np") and "math" not in text(cell):
            cell["source"] = "import math\n" + text(cell)
    written = [cell for cell in cells if cell["cell_type"] == "markdown"
               and "otter_answer_cell" in cell.get("metadata", {}).get("tags", [])]
    for cell, answer in zip(written, student.answers.values()):
        cell["source"] = answer or text(cell)
    for helper in student.helpers:
        name = re.match(r"def (\w+)\(", helper)
        stub = next((i for i, cell in enumerate(cells) if name and cell["cell_type"] == "code"
                     and text(cell).startswith(f"def {name.group(1)}(")), None)
        if stub is not None:  # a practice exercise, done in its own cell
            cells[stub]["source"] = helper
        else:
            index = next(i for i, cell in enumerate(cells) if cell["cell_type"] == "code"
                         and text(cell).startswith("grader.check("))
            cells.insert(index + 1, _code_cell(helper))
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"
    return json.dumps(nb, ensure_ascii=False).encode("utf-8")


@dataclass
class Class:
    files: dict  # file name -> notebook bytes
    planted: dict  # copy's file -> (source's file, Plant)
    students: dict  # file name -> Student


def build(student_nb, n_independent=60, seed=50, planted=PLANTED, pool_share=0.3):
    rng = random.Random(seed)
    heads = stub_heads(student_nb)
    drawer = Drawer(rng, heads, pool_share)
    students = {f"alumno_{i:03d}.ipynb": drawer.student() for i in range(n_independent)}
    # A copy disguised a way takes work that the disguise changes (a loop to turn into a
    # comprehension, statements that can change places), as its copier would.
    sources = []
    for plant in planted:
        pool = [n for n in sorted(students) if n not in sources
                and all(disguisable(students[n], plant, d) for d in plant.disguises)]
        sources.append(rng.choice(pool))
    order = list(range(n_independent, n_independent + len(planted)))
    rng.shuffle(order)  # the copies' file names say nothing of what they are
    copies = {}
    for number, plant, source in zip(order, planted, sources):
        own = drawer.student()
        copies[f"alumno_{number:03d}.ipynb"] = (source, plant, own)
    planted_pairs = {}
    for name, (source, plant, own) in sorted(copies.items()):
        students[name] = disguised_copy(students[source], own, plant, rng)
        planted_pairs[name] = (source, plant)
    template = nbformat.writes(student_nb)
    files = {name: notebook(template, student) for name, student in sorted(students.items())}
    return Class(files, planted_pairs, students)


# --- kept as make grade keeps them ------------------------------------------------------------

FIELDS = {"supuesto": "assumption", "medicion": "measurement", "conclusion": "conclusion",
          "limitacion": "limitation", "riesgo": "risk"}


def received(autograder_zip):
    """What every student received, as the zip carries it."""
    import zipfile

    from kit_autograder.bundle import PLUGIN
    from kit_autograder.similarity import parts

    with zipfile.ZipFile(autograder_zip) as zf:
        config = json.loads(zf.read("otter_config.json"))
    return parts.Shared(next(e[PLUGIN] for e in config["plugins"] if PLUGIN in e))


def keep(klass, out, autograder_zip):
    """The class's parts in ``out/similarity/``, kept as ``make grade`` keeps them (its
    notebooks written to ``out/submissions/``): the pass without grading."""
    from pathlib import Path

    from kit_autograder.similarity import parts

    shared = received(autograder_zip)
    for name, data in klass.files.items():
        path = Path(out) / "submissions" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        texts = {FIELDS[k]: v for k, v in klass.students[name].challenge.items()}
        parts.keep(out, Path(name).stem, name, path, GRADED, shared, texts)
