"""Numba kernels of the fast solver; they see only numpy arrays.

- :mod:`.payment`: which visited stops pay (shared with the validator),
- :mod:`.enumeration`: every valid route of a train, by an explicit-stack DFS,
- :mod:`.combination`: the best track-disjoint choice of one route per train,
- :mod:`.cache`: the ``@kernel`` decorator (``njit(nogil=True)`` with the
  argument types a solve uses) and the disk cache they are loaded from.
"""
