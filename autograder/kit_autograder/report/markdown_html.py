"""Markdown as HTML in which no text becomes markup: a student's ``<script>`` or ``<img
onerror>`` stays text. markdown-it-py (which Otter already brings) with raw HTML off renders
the review page's answers and the feedback pages that go back to an LMS; its own link check
drops ``javascript:`` and ``data:`` links."""

import html

PAGE_STYLE = ("body{font:16px/1.5 system-ui,sans-serif;color:#1d2430;max-width:900px;"
              "margin:0 auto;padding:16px}table{border-collapse:collapse}"
              "th,td{border:1px solid #cfd6e0;padding:2px 8px}"
              "pre{background:#eef2f7;padding:8px;overflow-x:auto}"
              "blockquote{border-left:4px solid #2f5f97;margin:0;padding:0 12px}")


def renderer():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def page(markdown_text, title):
    """A whole Spanish HTML page for ``markdown_text`` (a student's feedback)."""
    body = renderer().render(markdown_text)
    return (f'<!DOCTYPE html>\n<html lang="es">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n"
            f"<body>\n<main>\n{body}</main>\n</body>\n</html>\n")
