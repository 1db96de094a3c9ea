"""Numba kernels of the fast solver; they see only numpy arrays.

- :mod:`.payment`: which visited stops pay (shared with the validator),
- :mod:`.enumerate`: every valid route of a train, by an explicit-stack DFS,
- :mod:`.combine`: the best track-disjoint choice of one route per train.

Every kernel is ``njit(cache=True, nogil=True)``: compiled once, cached on
disk next to the module (or in ``NUMBA_CACHE_DIR``).
"""
