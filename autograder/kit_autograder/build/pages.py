"""A lesson's interactive page as one self-contained file: its stylesheets and scripts inlined.

One HTML file can be published on the course site, attached to an email or opened from disk
(file://), with no server, CDN or network. A lesson's page lives in
``assignments/<lesson>/explorer/index.html`` beside its assets; ``make assign`` ships it to
students as ``explorer.html`` and ``make explorer`` writes it alone:

    python -m kit_autograder.build.pages assignments/<lesson>/explorer/index.html OUT_DIR
"""

import re
import sys
from pathlib import Path

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
SCRIPT = re.compile(r'<script src="([^"]+)"></script>')
# Anything the browser would fetch from elsewhere defeats the point of a one-file page.
REMOTE = re.compile(r'(?:src|href)="(?:https?:)?//', re.IGNORECASE)


class PageError(ValueError):
    """The page cannot be made self-contained; the message says why."""


def _asset(folder: Path, name: str, closing_tag: str) -> str:
    """A local asset's text, refusing one that would close its own inline tag."""
    text = (folder / name).read_text(encoding="utf-8")
    if closing_tag in text.lower():
        raise PageError(f"{name} contains {closing_tag!r}, which would end the inlined block early")
    return text


def inline(index: Path) -> str:
    """``index`` with each local <link rel=stylesheet> and <script src> replaced by its contents."""
    index = Path(index)
    folder, html = index.parent, index.read_text(encoding="utf-8")
    html = STYLESHEET.sub(lambda m: f"<style>\n{_asset(folder, m[1], '</style')}</style>", html)
    html = SCRIPT.sub(lambda m: f"<script>\n{_asset(folder, m[1], '</script')}</script>", html)
    if REMOTE.search(html) or "<link" in html or "<script src" in html:
        raise PageError(f"{index} still refers to an external file after inlining")
    return html


def main(argv):
    if len(argv) != 3:
        print("usage: python -m kit_autograder.build.pages INDEX.html OUT_DIR", file=sys.stderr)
        return 2
    index, out_dir = Path(argv[1]), Path(argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    page = inline(index)
    target = out_dir / "index.html"
    target.write_text(page, encoding="utf-8")
    print(f"page: {target} ({len(page.encode('utf-8')) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
