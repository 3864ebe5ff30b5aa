"""Expected iteration-limit warnings, counted instead of emitted.

Some settings stop a solver at its iteration limit by design: the faithful DME's 100 L-BFGS
iterations, the large C of a grid, Fusion_Cq^all's level-1 SVMs. scikit-learn then warns
(``ConvergenceWarning``) on every fit, which a user cannot act on. :class:`CountConvergence`
records those warnings in a block, counts them (``n``) and re-emits every other warning when
the block ends.
"""

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning


class CountConvergence:
    """``with CountConvergence() as counted: ...`` then ``counted.n`` ConvergenceWarnings."""

    def __init__(self) -> None:
        self.n = 0
        self._catch = warnings.catch_warnings(record=True)

    def __enter__(self) -> CountConvergence:
        self._caught = self._catch.__enter__()
        warnings.simplefilter("always", ConvergenceWarning)
        return self

    def __exit__(self, *exc) -> None:
        self._catch.__exit__(*exc)
        for w in self._caught:
            if issubclass(w.category, ConvergenceWarning):
                self.n += 1
            else:  # outside the block's filters: as the caller would have seen it
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
