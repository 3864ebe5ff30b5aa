"""NpzDataset: nested multiview structures round-trip; failed saves leave nothing behind."""

import numpy as np
import pytest

from multiview_lab.io import NpzDataset


def test_round_trip_nested(tmp_path):
    data = {
        "MNIST1": {
            "X_train": [np.arange(6.0).reshape(2, 3), np.ones((2, 1))],
            "y_train": np.array([1, 2]),
        }
    }
    ds = NpzDataset(filepath=str(tmp_path / "v.npz"))
    assert not ds.exists()
    ds.save(data)
    back = ds.load()
    assert isinstance(back["MNIST1"]["X_train"], list)
    np.testing.assert_array_equal(back["MNIST1"]["X_train"][0], data["MNIST1"]["X_train"][0])
    np.testing.assert_array_equal(back["MNIST1"]["y_train"], [1, 2])


def test_failed_save_writes_nothing(tmp_path):
    ds = NpzDataset(filepath=str(tmp_path / "v.npz"))
    with pytest.raises(Exception, match="must not contain"):
        ds.save({"a/b": np.zeros(2)})
    assert list(tmp_path.iterdir()) == []
