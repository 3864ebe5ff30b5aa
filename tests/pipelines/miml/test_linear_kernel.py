"""The linear kernel of the Reuters study (paper Eq. (3), Sect. 4.1: "the Gaussian kernel (2)
and linear kernel (3) are used on the scene and Reuters data sets respectively" for MIML-GP and
MIMLSVM)."""

import numpy as np
import pytest

from multiview_lab.miml import MIMLSVM, MIMLGPClassifier, hausdorff_distances
from multiview_lab.miml._bags import bag_sum_kernel, check_bags
from tests.pipelines.miml.conftest import make_bags


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(4)
    Y = (rng.random((24, 2)) < 0.5).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    Y[0] = [0, 1]  # every label has a negative bag too
    Y[1] = [1, 0]
    return make_bags(rng, Y, d=3), Y


def test_linear_bag_sum_kernel_is_the_gram_of_the_bag_sums(toy):
    bags, _ = toy
    X, off = check_bags(bags)
    S = np.vstack([b.sum(axis=0) for b in bags])  # E^T X
    np.testing.assert_allclose(bag_sum_kernel(X, off, X, off, "linear", 1.0), S @ S.T)
    # with d = 3 < n its rank is at most 3 (the low-rank rule then keeps m <= 3)
    assert np.linalg.matrix_rank(S @ S.T) == 3


@pytest.mark.filterwarnings("ignore:MIMLGPClassifier reached max_em")
def test_mimlgp_linear_kernel_uses_the_bag_sum_gram_and_no_width(toy):
    bags, Y = toy
    params = {"kernel": "linear", "low_rank": "none", "max_em": 3, "random_state": 0}
    gp = MIMLGPClassifier(**params).fit(bags, Y)
    S = np.vstack([b.sum(axis=0) for b in bags])
    np.testing.assert_allclose(gp._Ksum, S @ S.T)
    assert gp.delta_ == 1.0
    other = MIMLGPClassifier(**params, delta=0.3).fit(bags, Y)  # delta is unused
    np.testing.assert_array_equal(other.Fsum_, gp.Fsum_)
    np.testing.assert_array_equal(other.predict_proba(bags), gp.predict_proba(bags))
    rbf = MIMLGPClassifier(**{**params, "kernel": "rbf"}, delta=1.0).fit(bags, Y)
    assert not np.allclose(rbf.Fsum_, gp.Fsum_)
    # low rank: the eigenvalue rule finds the rank d = 3 of S S^T
    low = MIMLGPClassifier(kernel="linear", trace_frac=0.999999, max_em=3, full_rank_above=None)
    assert low.fit(bags, Y).m_ == 3


def test_mimlsvm_linear_kernel_is_a_linear_function_of_the_medoid_distances(toy):
    bags, Y = toy
    svm = MIMLSVM(kernel="linear", ratio=0.25, C_grid=(0.1, 1.0), random_state=0).fit(bags, Y)
    assert all(s.kernel == "linear" for s in svm.svms_)
    Z = hausdorff_distances(bags, svm.medoids_)
    expected = np.column_stack([Z @ s.coef_.ravel() + s.intercept_[0] for s in svm.svms_])
    np.testing.assert_allclose(svm.decision_function(bags), expected, atol=1e-10)
    rbf = MIMLSVM(ratio=0.25, C_grid=(0.1, 1.0), random_state=0).fit(bags, Y)
    assert all(s.kernel == "rbf" for s in rbf.svms_)
    with pytest.raises(ValueError, match="kernel='poly'"):
        MIMLSVM(kernel="poly").fit(bags, Y)
