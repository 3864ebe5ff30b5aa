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


def test_raw_dataset_reads_with_its_loader_and_refuses_saves(tmp_path):
    from kedro.io.core import DatasetError

    from multiview_lab.io import RawDataset

    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(3))
    ds = RawDataset(filepath=str(path), loader="numpy.load", load_args={"allow_pickle": False})
    assert ds.exists()
    np.testing.assert_array_equal(ds.load()["x"], [0, 1, 2])
    with pytest.raises(DatasetError, match="raw data"):
        ds.save(1)
    with pytest.raises(DatasetError, match="not found"):
        RawDataset(filepath=str(tmp_path / "none"), loader="numpy.load").load()
    with pytest.raises(DatasetError, match="Cannot import loader"):
        RawDataset(filepath=str(path), loader="numpy.nothing_here").load()
