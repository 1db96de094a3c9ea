"""Shared test settings: where the bundled data lives."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The corpus of real positions with reference figures (``fixtures/corpus``).
CORPUS = ROOT / "fixtures" / "corpus"
