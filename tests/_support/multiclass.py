"""Shared multiclass trial generator."""

import numpy as np


def make_trials(n, N, rng, sep=1.5, scale=1.0):
    """Log-likelihoods (n, N) of N classes, each class present, and their labels.

    The true class's log-likelihood is raised by ``sep`` over standard normal noise of scale 2,
    and the whole matrix is multiplied by ``scale`` (> 1: over-confident).
    """
    y = rng.integers(0, N, n)
    y[:N] = np.arange(N)  # every class present
    llh = rng.normal(size=(n, N)) * 2.0
    llh[np.arange(n), y] += sep
    return scale * llh, y
