"""Execution backends (ADMM-MVFS spec T8) on a real 2-worker LocalCluster with processes."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from multiview_lab.mvfs import ADMMMultiviewFeatureSelector

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow

KW = {"lam_frac": 0.1, "max_iter": 50, "tol": 0.0, "eps_abs": 0.0, "eps_rel": 0.0}


def make_view(seed, n=120, d=10, n_classes=3):
    """Synthetic view (also run on the workers, so the driver never holds it)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) * n_classes // n
    X = rng.standard_normal((n, d))
    X[:, :2] += 2.0 * rng.standard_normal((n_classes, 2))[y]
    return X


Y = np.arange(120) * 3 // 120


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def local_fit():
    Xs = [make_view(s, d=d) for s, d in zip((1, 2, 3), (10, 14, 7), strict=True)]
    return Xs, ADMMMultiviewFeatureSelector(**KW).fit(Xs, Y)


def assert_same(a, b, atol=1e-12):
    for Wa, Wb in zip(a.W_, b.W_, strict=True):
        np.testing.assert_allclose(Wb, Wa, rtol=0, atol=atol)
    np.testing.assert_allclose(b.history_["objective"], a.history_["objective"], rtol=1e-12)


def test_t8_backends_agree(client, local_fit):
    Xs, ref = local_fit
    threads = ADMMMultiviewFeatureSelector(**KW, backend="joblib", n_jobs=2).fit(Xs, Y)
    dask = ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client).fit(Xs, Y)
    assert_same(ref, threads)
    assert_same(ref, dask)
    assert dask.n_iter_ == ref.n_iter_ == 50
    assert np.all(dask.history_["bytes_sent"] > 0)
    assert client.status == "running"  # a given client is not closed


def test_views_generated_on_workers(client, local_fit):
    _, ref = local_fit
    futures = [
        client.submit(make_view, s, d=d, pure=False)
        for s, d in zip((1, 2, 3), (10, 14, 7), strict=True)
    ]
    sel = ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client).fit(futures, Y)
    assert_same(ref, sel)
    assert sel.n_features_per_view_.tolist() == [10, 14, 7]


def test_bytes_per_iteration_independent_of_view_width(client):
    out = []
    for d in (6, 60):
        Xs = [make_view(s, d=d) for s in (4, 5)]
        sel = ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client).fit(Xs, Y)
        h = sel.history_
        out.append((h["bytes_sent"], h["bytes_received"], h["bytes_peer"]))
    for a, b in zip(out[0], out[1], strict=True):
        np.testing.assert_array_equal(a, b)
    n, C = 120, 3
    sent, received, peer = (x[1] for x in out[0])
    assert n * C * 8 <= sent <= n * C * 8 + 1000  # M̄, to the class blocks
    assert 2 * n * C * 8 <= received <= 2 * n * C * 8 + 1000  # X_v W_v of the 2 views
    assert 0 < peer <= 2 * n * (2 * C + 2) * 8  # class blocks [D, P̄, f, codes] to view workers


def test_scheduler_address_clone_and_pickle(client, local_fit):
    Xs, ref = local_fit
    sel = ADMMMultiviewFeatureSelector(
        **KW, backend="dask", scheduler_address=client.scheduler.address
    ).fit(Xs, Y)
    assert_same(ref, sel)
    with_client = ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client)
    assert clone(with_client).client is client
    fitted = with_client.fit(Xs, Y)
    restored = pickle.loads(pickle.dumps(fitted))
    assert restored.client is None
    np.testing.assert_array_equal(restored.ranking_, fitted.ranking_)


def test_remote_bad_input(client):
    bad = make_view(6)
    bad[5, 3] = np.nan
    futures = [client.scatter(make_view(7)), client.scatter(bad)]
    with pytest.raises(ValueError, match="View 1 contains NaN"):
        ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client).fit(futures, Y)
    with pytest.raises(ValueError, match="view 0 has 119"):
        ADMMMultiviewFeatureSelector(**KW, backend="dask", client=client).fit(
            [client.scatter(make_view(7)[:-1])], Y
        )
