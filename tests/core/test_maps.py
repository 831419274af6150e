"""The maps of fitted models give a trial the same bits wherever it stands (chunk, layout)."""

import numpy as np
import pytest

from focal.core.maps import affine_llr, apply_multiclass, small_product


@pytest.mark.parametrize("inner, outer", [(3, None), (2, 4), (7, 3)])
def test_small_product_is_the_product_row_by_row(inner, outer):
    rng = np.random.default_rng(inner)
    A = rng.normal(size=(1001, inner)) * 10.0 ** rng.integers(-3, 4, size=inner)
    B = rng.normal(size=(inner,) if outer is None else (inner, outer))
    got = small_product(A, B)
    np.testing.assert_allclose(got, A @ B, rtol=1e-12, atol=1e-12 * np.abs(A).max())
    # a row alone, chunks, the other memory layout, reversed rows: the same bits
    np.testing.assert_array_equal(small_product(A[5:6], B), got[5:6])
    np.testing.assert_array_equal(small_product(np.asfortranarray(A), B), got)
    np.testing.assert_array_equal(small_product(A[::-1], B), got[::-1])
    np.testing.assert_array_equal(
        np.concatenate([small_product(A[i : i + 13], B) for i in range(0, len(A), 13)]), got
    )


def test_affine_and_multiclass_maps_do_not_depend_on_chunking():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(999, 3))
    coef, b = rng.normal(size=3), 0.25
    whole = affine_llr(X, coef, b)
    parts = np.concatenate([affine_llr(X[i : i + 5], coef, b) for i in range(0, 999, 5)])
    np.testing.assert_array_equal(parts, whole)
    L = rng.normal(size=(999, 2, 4))
    W = rng.normal(size=(2, 4, 4))
    full = apply_multiclass(L, "full", W, np.zeros(4))
    np.testing.assert_array_equal(apply_multiclass(L[:3], "full", W, np.zeros(4)), full[:3])
    np.testing.assert_array_equal(
        apply_multiclass(np.asfortranarray(L), "full", W, np.zeros(4)), full
    )
