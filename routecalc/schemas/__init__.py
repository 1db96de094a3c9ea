"""The JSON Schemas shipped with the package, as files beside this module.

They are generated from the models of :mod:`routecalc.schema` (``python -m
routecalc.schema`` writes them; a test checks they are current). Reading
them here needs no pydantic, so ``routecalc schema`` starts fast.
"""

from __future__ import annotations

from pathlib import Path

#: The schemas by name: a position (every game) and the optimiser's answer.
NAMES = ("position", "answer")


def schema_path(name: str) -> Path:
    """The file holding schema ``name`` (``position`` or ``answer``)."""
    if name not in NAMES:
        raise ValueError(f"no schema {name!r} (known: {', '.join(NAMES)})")
    return Path(__file__).resolve().parent / f"{name}.schema.json"


def schema_text(name: str) -> str:
    """The JSON text of schema ``name``."""
    return schema_path(name).read_text()
