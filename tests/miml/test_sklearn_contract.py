"""The MIML estimators under scikit-learn's contract: the check suite (a plain 2-D X read as
bags of one instance each), and model selection on a list of bags from the real scene and
COREL data (cross_val_score, GridSearchCV, Pipeline)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import hamming_loss as sk_hamming_loss
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from multiview_lab.data.corel import load_corel_task
from multiview_lab.data.miml_scene import load_miml_scene
from multiview_lab.miml import (
    MIMLRBF,
    MIMLSVM,
    BagStandardScaler,
    MIMLGPClassifier,
    MIMLkNN,
    one_minus_average_precision,
    standardize_bags,
)
from multiview_lab.miml._sklearn_checks import instances
from multiview_lab.testing import expected_failed_checks

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"
pytestmark = [
    pytest.mark.filterwarnings("ignore:MIMLGPClassifier reached max_em"),
    # check_supervised_y_no_nan's inf targets: scikit-learn's type_of_target casts them to int
    # (a RuntimeWarning of its own) before the estimators raise the ValueError the check wants
    pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning"),
]


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check_suite(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def scene():
    """90 seeded scene bags (9 instances x 15 features, 5 labels)."""
    bags, Y, _ = load_miml_scene(RAW / "miml_scene" / "miml_scene.npz")
    idx = np.random.default_rng(0).choice(len(bags), 90, replace=False)
    return [bags[i] for i in idx], Y[idx]


@pytest.fixture(scope="module")
def corel():
    """The COREL "African" one-vs-rest task: its 100 positive and 100 negative bags."""
    bags, y = load_corel_task(RAW / "corel_mi", "African")
    idx = np.concatenate([np.arange(100), np.arange(100, 2000)[::19][:100]])
    return [bags[i] for i in idx], y[idx]


def _fast(cls):
    return {
        MIMLGPClassifier: MIMLGPClassifier(delta="median", max_em=5, n_mc=100, random_state=0),
        MIMLSVM: MIMLSVM(C_grid=(1.0, 10.0), gamma_grid=(1.0,), random_state=0),
        MIMLRBF: MIMLRBF(random_state=0),
        MIMLkNN: MIMLkNN(n_references=3, n_citers=5),
    }[cls]


ALL = [MIMLGPClassifier, MIMLSVM, MIMLRBF, MIMLkNN]
ONE_MINUS_AP = make_scorer(
    one_minus_average_precision, response_method="decision_function", greater_is_better=False
)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_cross_val_score_on_a_list_of_bags_is_the_manual_fold_loop(cls, scene):
    bags, Y = scene
    est = _fast(cls)
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(est, bags, Y, cv=cv, scoring=ONE_MINUS_AP)
    manual = []
    for tr, te in cv.split(bags):
        fitted = clone(est).fit([bags[i] for i in tr], Y[tr])
        manual.append(
            one_minus_average_precision(Y[te], fitted.decision_function([bags[i] for i in te]))
        )
    np.testing.assert_allclose(-scores, manual)
    assert np.all((-scores > 0) & (-scores < 0.8))  # better than random ranking on 5 labels
    # scikit-learn's own multi-label scorers
    hl = cross_val_score(est, bags, Y, cv=cv, scoring=make_scorer(sk_hamming_loss))
    ap = cross_val_score(est, bags, Y, cv=cv, scoring="average_precision")
    assert np.all((0 <= hl) & (hl < 0.5)) and np.all(ap > 0.3)
    assert cross_val_score(est, bags, Y, cv=cv).shape == (3,)  # default: subset accuracy


def test_grid_search_over_a_real_parameter(scene):
    bags, Y = scene
    search = GridSearchCV(
        MIMLkNN(n_citers=5), {"n_references": [1, 3, 7]}, cv=KFold(3), scoring=ONE_MINUS_AP
    ).fit(bags, Y)
    assert search.best_params_["n_references"] in (1, 3, 7)
    assert search.best_estimator_.n_references == search.best_params_["n_references"]
    means = search.cv_results_["mean_test_score"]
    assert np.argmax(means) == search.best_index_ and np.ptp(means) > 0
    assert search.predict(bags[:4]).shape == (4, 5)


def test_pipeline_standardises_inside_each_fold_as_the_protocol(scene):
    bags, Y = scene
    pipe = make_pipeline(
        BagStandardScaler(), MIMLSVM(C_grid=(1.0,), gamma_grid=(1.0,), random_state=0)
    )
    cv = KFold(3, shuffle=True, random_state=1)
    scores = cross_val_score(pipe, bags, Y, cv=cv, scoring=ONE_MINUS_AP)
    manual = []
    for tr, te in cv.split(bags):
        train, test = standardize_bags([bags[i] for i in tr], [bags[i] for i in te])
        model = MIMLSVM(C_grid=(1.0,), gamma_grid=(1.0,), random_state=0).fit(train, Y[tr])
        manual.append(one_minus_average_precision(Y[te], model.decision_function(test)))
    np.testing.assert_allclose(-scores, manual)


def test_pipeline_with_standard_scaler_on_the_2d_form(corel):
    """A 2-D X (here each COREL bag's mean instance) is bags of one instance: scikit-learn's
    StandardScaler can head the pipeline; a 1-D y is a binary single-label fit."""
    bags, y = corel
    X = np.array([b.mean(axis=0) for b in bags])
    pipe = make_pipeline(StandardScaler(), MIMLkNN(n_references=5, n_citers=5))
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    acc = cross_val_score(pipe, X, y, cv=cv)
    manual = []
    for tr, te in cv.split(X, y):
        scaler = StandardScaler().fit(X[tr])
        knn = MIMLkNN(n_references=5, n_citers=5).fit(scaler.transform(X[tr]), y[tr])
        manual.append(np.mean(knn.predict(scaler.transform(X[te])) == y[te]))
    np.testing.assert_allclose(acc, manual)
    assert acc.mean() > 0.55  # balanced classes: chance is 0.5
    pred = pipe.fit(X, y).predict(X)
    assert pred.shape == (len(y),) and set(np.unique(pred)) <= {0, 1}


def test_single_label_cross_validation_of_miml_gp_on_corel(corel):
    bags, y = corel
    gp = MIMLGPClassifier(delta="median", max_em=5, n_mc=100, random_state=0)
    auc = cross_val_score(gp, bags, y, cv=StratifiedKFold(2, shuffle=True, random_state=0),
                          scoring="roc_auc")  # fmt: skip
    assert np.all(auc > 0.7)
    labels = np.where(y == 1, "African", "other")
    fitted = clone(gp).fit(bags, labels)
    assert set(fitted.predict(bags[:20])) <= {"African", "other"}
    assert fitted.predict_proba(bags[:3]).shape == (3, 2)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_2d_form_is_bags_of_one_instance(cls, scene):
    bags, Y = scene
    X = np.array([b[0] for b in bags])  # the first instance of every bag
    one = [x[None, :] for x in X]
    a, b = clone(_fast(cls)).fit(X, Y), clone(_fast(cls)).fit(one, Y)
    np.testing.assert_array_equal(a.predict(X[:30]), b.predict(one[:30]))
    np.testing.assert_array_equal(a.decision_function(X[:30]), b.decision_function(one[:30]))
    np.testing.assert_array_equal(a.predict(one[:30]), a.predict(X[:30]))
    assert a.n_features_in_ == b.n_features_in_ == 15


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_tags_and_fitted_attributes(cls, scene):
    est = _fast(cls)
    tags = est.__sklearn_tags__()
    assert tags.estimator_type == "classifier" and tags.target_tags.multi_output
    assert tags.classifier_tags.multi_label and not tags.input_tags.sparse
    bags, Y = scene
    est.fit(bags, Y)
    assert est.n_features_in_ == 15 and est.classes_.tolist() == [0, 1, 2, 3, 4]
