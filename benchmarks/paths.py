"""Where the benchmarks' bundled data lives (importable from scripts and pytest alike)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The corpus of real positions with reference figures (``fixtures/corpus``).
CORPUS = ROOT / "fixtures" / "corpus"
