"""The hidden reference reproduces every number that the seeds print."""

import contextlib
import inspect
import io

import matplotlib
import numpy as np
import pytest

from reference import attention as reference
from kit_autograder.build.otter_master import PLACEHOLDER, load_master
from lesson055 import MASTER
from seed_lines import assert_matches_seed, assert_token_means_vanish

matplotlib.use("Agg")


# Seed 000's lesson is the eight steps: the kit's step 9 (a trained model, with its own
# generator for its test set and a weights file) and the challenge come after it.
SEED_LESSON_ENDS = ("## Paso 9", "## Reto verificable")


def master_demo_cells():
    """The lesson's demo code, in order: no tests, no graded stubs, no helper placeholders."""
    in_tests = False
    for cell in load_master(MASTER).cells:
        source = cell.source.strip()
        if cell.cell_type == "markdown" and source.startswith(SEED_LESSON_ENDS):
            return
        if cell.cell_type == "raw":
            in_tests = {"# BEGIN TESTS": True, "# END TESTS": False}.get(source, in_tests)
            continue
        # The init cell (graded-only) sets up grader.check; it is no demo of the lesson.
        if cell.cell_type != "code" or in_tests or "graded-only" in cell.metadata.get("tags", []):
            continue
        if PLACEHOLDER.match(source) or source.startswith("def "):
            continue
        yield source


def run_master_demos_with_reference():
    # Off-screen again: a test that ran a notebook in an IPython shell before may have left
    # matplotlib's inline backend, whose plt.show() prints each figure's repr.
    matplotlib.use("Agg")
    namespace = {name: getattr(reference, name) for name in reference.__all__}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for source in master_demo_cells():
            exec(compile(source, "<master>", "exec"), namespace)
    return printed.getvalue(), namespace


def test_reference_reproduces_every_number_seed_000_prints():
    printed, namespace = run_master_demos_with_reference()
    assert_matches_seed(printed)
    assert_token_means_vanish(namespace["y"])


def test_master_demo_cells_draw_from_one_rng_in_the_seed_order():
    # The seed creates exactly one generator; a second one would desynchronize the numbers.
    sources = "\n".join(master_demo_cells())
    assert sources.count("default_rng(") == 1


def test_reference_reproduces_seed_003_worked_example_without_rounding():
    Q = K = np.eye(2)
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    output, weights = reference.attention(Q, K, V)
    assert np.round(weights, 4).tolist() == [[0.6698, 0.3302], [0.3302, 0.6698]]
    # The seed printed 1.6604 / 2.3396 because it multiplied weights already rounded to 4 places.
    assert np.round(output, 4).tolist() == [[1.6605, 2.6605], [2.3395, 3.3395]]
    causal = np.tril(np.ones((2, 2), dtype=bool))
    masked_output, _ = reference.attention(Q, K, V, mask=causal)
    assert masked_output[0].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("d_model", [1, 5, 7, 8])
def test_reference_positional_encoding_follows_the_formula_for_odd_and_even_d(d_model):
    pe, omega = reference.positional_encoding(11, d_model)
    assert pe.shape == (11, d_model) and omega.shape == ((d_model + 1) // 2,)
    for pos in range(11):
        for dim in range(d_model):
            w = 1 / 10000 ** (2 * (dim // 2) / d_model)
            expected = np.sin(pos * w) if dim % 2 == 0 else np.cos(pos * w)
            assert pe[pos, dim] == pytest.approx(expected, abs=1e-12)


def test_reference_block_is_post_ln():
    rng = np.random.default_rng(1)
    heads, W_O = reference.init_multihead(8, 2, rng)
    x = rng.normal(size=(4, 8)) + 3
    W1, b1 = rng.normal(size=(8, 16)), rng.normal(size=16)
    W2, b2 = rng.normal(size=(16, 8)), rng.normal(size=8)
    y = reference.transformer_block(x, heads, W_O, W1, b1, W2, b2)
    # Post-LN ends with a LayerNorm, so every token leaves with mean 0 and variance ~1;
    # the pre-LN variant ends with a residual sum and would keep the offset of 3.
    assert np.abs(y.mean(axis=1)).max() < 1e-12
    assert np.allclose(y.var(axis=1), 1, atol=1e-3)


def test_reference_signatures_are_the_lessons():
    expected = {
        "softmax": "(z, axis=-1)",
        "attention": "(Q, K, V, mask=None)",
        "init_multihead": "(d_model, n_heads, rng)",
        "multihead": "(X, heads, W_O, mask=None)",
        "positional_encoding": "(n_positions, d_model)",
        "layer_norm": "(x, eps=1e-05)",
        "transformer_block": "(x, heads, W_O, W1, b1, W2, b2, mask=None)",
    }
    assert {name: str(inspect.signature(getattr(reference, name))) for name in expected} == expected


def test_the_lesson_demos_stop_where_the_seed_s_eight_steps_end():
    headings = [cell.source.strip() for cell in load_master(MASTER).cells
                if cell.cell_type == "markdown"]
    for end in SEED_LESSON_ENDS:  # both exist, so the demos cannot run on past them
        assert any(heading.startswith(end) for heading in headings), end
    sources = list(master_demo_cells())
    assert not any("lab.py" in source or "modelo_entrenado" in source for source in sources)
