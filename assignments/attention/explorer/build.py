"""Build the explorer: inline the stylesheet and scripts of index.html into one file.

One self-contained HTML file can be published on the course site, attached to an email or
opened from disk (file://), with no server, CDN or network. Usage:

    python assignments/attention/explorer/build.py [OUT_DIR]      # default: dist/explorer
"""

import re
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parent

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
SCRIPT = re.compile(r'<script src="([^"]+)"></script>')
# Anything the browser would fetch from elsewhere defeats the point of a one-file page.
REMOTE = re.compile(r'(?:src|href)="(?:https?:)?//', re.IGNORECASE)


def read_asset(name, closing_tag):
    """Return a local asset's text, refusing one that would close its own inline tag."""
    text = (SOURCE / name).read_text(encoding="utf-8")
    if closing_tag in text.lower():
        raise SystemExit(f"{name} contains {closing_tag!r}, which would end the inlined block early")
    return text


def inline(html):
    """Replace each local <link rel=stylesheet> and <script src> with its contents."""
    html = STYLESHEET.sub(lambda m: f"<style>\n{read_asset(m[1], '</style')}</style>", html)
    html = SCRIPT.sub(lambda m: f"<script>\n{read_asset(m[1], '</script')}</script>", html)
    if REMOTE.search(html) or "<link" in html or "<script src" in html:
        raise SystemExit("index.html still refers to an external file after inlining")
    return html


def main(argv):
    out_dir = Path(argv[1] if len(argv) > 1 else "dist/explorer")
    out_dir.mkdir(parents=True, exist_ok=True)
    page = inline((SOURCE / "index.html").read_text(encoding="utf-8"))
    target = out_dir / "index.html"
    target.write_text(page, encoding="utf-8")
    print(f"explorer: {target} ({len(page.encode('utf-8')) // 1024} KiB)")


if __name__ == "__main__":
    main(sys.argv)
