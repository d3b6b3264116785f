"""What the explorer's browser tests share: building the page, and reading it as a student would.

Numbers are read from the text the page shows (a point, four decimals, "−" for minus), never
from the page's own arithmetic, and compared with the hidden reference to four decimals.
"""

import contextlib
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "assignments" / "attention" / "explorer" / "index.html"
ARTIFACTS = ROOT / "tests" / "artifacts" / "explorer"
CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags, Chromium keeps dialing Google from a closed network.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
# A shown value is the exact one rounded to 4 decimals, so it is off by at most 0.00005.
SHOWN = 5.0001e-5


@contextlib.contextmanager
def chromium():
    """Debian's Chromium through Playwright, headless and kept off the network."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def build_page(out_dir):
    """Build the page as `make explorer` does, into out_dir; return the built file."""
    subprocess.run([sys.executable, "-m", "kit_autograder.build.pages", str(PAGE), str(out_dir)],
                   check=True, capture_output=True)
    return Path(out_dir) / "index.html"


def shown_number(text):
    """The number a displayed string stands for: "−0.5000" is -0.5, "−∞" is -inf."""
    return float(text.strip().replace("\u2212", "-").replace("\u221e", "inf"))


def read_matrix(page, selector):
    """A rendered matrix (its tbody cells) as a numpy array, from the text on screen."""
    cells = page.eval_on_selector_all(
        f"{selector} tbody td[data-row]",
        "cells => cells.map(c => [Number(c.dataset.row), Number(c.dataset.col), c.textContent])",
    )
    assert cells, f"no rendered cells in {selector}"
    rows = 1 + max(i for i, _, _ in cells)
    cols = 1 + max(j for _, j, _ in cells)
    out = np.full((rows, cols), np.nan)
    for i, j, text in cells:
        out[i, j] = shown_number(text)
    return out


def read_exact_row(page, selector):
    """A one-row matrix's full-precision values, for claims of exact equality."""
    return page.eval_on_selector_all(f"{selector} tbody td[data-row]", "cells => cells.map(c => c.dataset.value)")


def assert_shown(shown, expected, what=""):
    """The page shows `expected` to four decimals."""
    np.testing.assert_allclose(shown, expected, rtol=0, atol=SHOWN, err_msg=what)


def as_typed(x, comma):
    """A number the way a student types it, with a decimal comma if asked."""
    text = f"{x:g}"
    return text.replace(".", ",") if comma else text


def entropy_bits(p):
    p = np.asarray(p)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())
