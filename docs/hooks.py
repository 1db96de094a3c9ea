"""MkDocs hook: the engine's docstrings cross-reference in Sphinx roles
(:func:`x`), which mkdocstrings leaves as text; on the site they read as
the name alone, in code (``~`` keeps its last part, as in Sphinx)."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):<code>(~?)([^<]*)</code>")


def _name(match: re.Match[str]) -> str:
    short, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if short else name}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    return ROLE.sub(_name, html)
