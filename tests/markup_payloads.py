"""Markup a student might plant in what the kit shows them, and a real browser to see it in.

A payload carries the three things issue 19 names: an ``<img onerror>`` and a ``<script>``
that each count themselves in ``window.kitPwned`` when they run, and a forged heading
(«# NOTA FINAL 10/10») on a line of its own. The kit's Markdown is rendered as a permissive
renderer would: markdown-it-py (the renderer of Jupyter's ecosystem, installed with Otter),
CommonMark with raw HTML *enabled* and GFM's tables; the page is then loaded in Chromium,
where an element, a script or a heading from the payload would show.
"""

import contextlib
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FORGED_HEADING = "NOTA FINAL 10/10"
FORGED_IN_A_NAME = "NOTA FINAL 10 de 10"  # a file's name cannot hold a slash
ONERROR = '<img src="x" onerror="window.kitPwned=(window.kitPwned||0)+1">'
SCRIPT = "<script>window.kitPwned=(window.kitPwned||0)+1</script>"
# Every element a payload could bring (the class report has its own SVG and style: only
# those that carry the payload's code count).
FOREIGN = "img, script, iframe, object, embed, svg, video, audio, form, input, style, link"
MARK = "kitPwned"


def payload(tag="", slash=True):
    """A text with every trick, ``tag`` first so that a test can tell texts apart. Without
    ``slash`` (a file name cannot hold one): no closing tag, so no ``<script>``."""
    heading = FORGED_HEADING if slash else FORGED_IN_A_NAME
    parts = [tag, ONERROR, f"\n# {heading}\n", "**x** ``` | &amp;"]
    if slash:
        parts += ["[enlace](http://example.com)", SCRIPT, "\n```\n</code></pre>" + ONERROR]
    return " ".join(parts)


def markdown_renderer():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def to_html(markdown_texts):
    """One page holding each Markdown text rendered, in order."""
    md = markdown_renderer()
    return "<!doctype html><meta charset=utf-8><body>" + "".join(
        f"<section>{md.render(text)}</section>" for text in markdown_texts) + "</body>"


@contextlib.contextmanager
def chromium():
    from explorer_helpers import chromium as browser

    with browser() as opened:
        yield opened


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module (skipped, saying why, where Debian's is missing)."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium no encontrado: instala el paquete Debian chromium")
    with chromium() as opened:
        yield opened


def seen(browser, page_html):
    """What Chromium makes of ``page_html``: whether a payload ran, the foreign elements it
    holds, and the text of every heading."""
    page = browser.new_page()
    try:
        page.set_content(page_html, wait_until="load")
        page.wait_for_timeout(200)  # an onerror fires after the failed load, a moment later
        return {"ran": page.evaluate("window.kitPwned || 0"),
                "foreign": page.eval_on_selector_all(
                    FOREIGN, f"els => els.map(e => e.outerHTML).filter(h => h.includes('{MARK}'))"),
                "headings": page.eval_on_selector_all(
                    "h1, h2, h3, h4, h5, h6", "els => els.map(e => e.textContent)"),
                "links": page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")}
    finally:
        page.close()


def inert(found):
    """What a page the kit wrote must look like: nothing ran, no element of the payload's, no
    forged heading (the kit's own headings may quote the text: a file name), no link."""
    return (found["ran"] == 0 and found["foreign"] == []
            and not any(heading.strip() in (FORGED_HEADING, FORGED_IN_A_NAME)
                        for heading in found["headings"])
            and not any("example.com" in link for link in found["links"]))
