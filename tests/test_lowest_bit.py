"""The combination kernel's lowest set bit: the compiled instruction and the
Python version used where numba's JIT is off give the same place."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from routecalc.kernels.combination import lowest_bit


@njit(cache=False)
def _compiled(words: np.ndarray) -> np.ndarray:
    out = np.empty(len(words), np.int64)
    for i in range(len(words)):
        out[i] = lowest_bit(words[i])
    return out


@settings(deadline=None)  # the first example compiles the kernel
@given(st.lists(st.integers(1, 2**64 - 1), min_size=1, max_size=50))
def test_the_compiled_and_python_lowest_bit_agree(values):
    words = np.array(values, np.uint64)
    expected = [(v & -v).bit_length() - 1 for v in values]
    assert [lowest_bit(w) for w in words] == expected
    assert _compiled(words).tolist() == expected


def test_the_lowest_bit_of_single_bits():
    words = np.array([1 << k for k in range(64)], np.uint64)
    assert _compiled(words).tolist() == list(range(64))
    assert [lowest_bit(w) for w in words] == list(range(64))
