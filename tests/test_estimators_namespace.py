"""The flat estimator namespace: every public estimator, scikit-learn conventions, no Kedro."""

import subprocess
import sys

import pytest
from sklearn.base import clone

import multiview_lab.estimators as est


@pytest.mark.parametrize("name", est.__all__)
def test_estimator_is_sklearn_style(name):
    cls = getattr(est, name)
    model = cls()
    params = model.get_params()
    assert clone(model).get_params().keys() == params.keys()
    assert all(not k.endswith("_") for k in params)
    assert hasattr(cls, "fit")


def test_estimators_import_neither_kedro_nor_mlflow():
    code = (
        "import sys, multiview_lab.estimators; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('kedro', 'mlflow')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
