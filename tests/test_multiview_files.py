"""The multiview file loaders: every format, dense and sparse views, and every error naming the
file and the problem."""

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from multiview_lab.io.multiview_files import (
    MultiviewFileError,
    MultiviewFiles,
    load_mat,
    load_multiview,
    load_npz,
    load_table,
    load_text,
    save_views_npz,
)
from tests.conftest import PROJECT_ROOT

RAW = PROJECT_ROOT / "data" / "01_raw"


@pytest.fixture
def views():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(12, 3))
    sparse = sp.random(12, 5, density=0.3, format="csr", random_state=1)
    y = np.array([0, 1, 2] * 4)
    return dense, sparse, y


def _same(a, b):
    a = a.toarray() if sp.issparse(a) else a
    b = b.toarray() if sp.issparse(b) else b
    np.testing.assert_allclose(a, b)


def test_shipped_3sources_keeps_its_sparse_views():
    data = load_mat(RAW / "3sources/3-sources.mat", views_key="X", labels_key="Y")
    assert [V.shape for V in data["views"]] == [(169, 3560), (169, 3631), (169, 3068)]
    assert all(sp.issparse(V) and V.format == "csr" for V in data["views"])
    assert np.bincount(data["y"])[1:].tolist() == [56, 21, 11, 18, 51, 12]
    assert data["view_names"] == ["view0", "view1", "view2"]


def test_mat_dense_and_sparse_views_and_transposed_view(tmp_path, views):
    dense, sparse, y = views
    cells = np.empty((1, 3), dtype=object)
    cells[0, 0], cells[0, 1], cells[0, 2] = dense, sparse.tocsc(), dense.T  # last: d x n
    scipy.io.savemat(tmp_path / "d.mat", {"data": cells, "gt": y[:, None]})
    data = load_mat(tmp_path / "d.mat", views_key="data", labels_key="gt",
                    view_names=["a", "b", "c"])  # fmt: skip
    assert not sp.issparse(data["views"][0]) and sp.issparse(data["views"][1])
    _same(data["views"][0], dense)
    _same(data["views"][1], sparse)
    _same(data["views"][2], dense)  # transposed back (transpose: auto)
    assert data["y"].tolist() == y.tolist() and data["view_names"] == ["a", "b", "c"]
    with pytest.raises(MultiviewFileError, match="different numbers of rows"):
        load_mat(tmp_path / "d.mat", views_key="data", labels_key="gt", transpose=False)


def test_mat_errors_name_the_file_and_the_problem(tmp_path, views):
    dense, _, y = views
    cells = np.empty((1, 2), dtype=object)
    cells[0, 0], cells[0, 1] = dense, dense[:10]
    scipy.io.savemat(tmp_path / "bad.mat", {"X": cells, "Y": y})
    path = str(tmp_path / "bad.mat")
    with pytest.raises(MultiviewFileError, match=r"bad\.mat: no variable 'labels'.*\['X', 'Y'\]"):
        load_mat(path, labels_key="labels")
    with pytest.raises(MultiviewFileError, match=r"bad\.mat: views and labels have different"):
        load_mat(path)
    scipy.io.savemat(tmp_path / "plain.mat", {"X": dense, "Y": y})
    with pytest.raises(MultiviewFileError, match="not a cell array"):
        load_mat(tmp_path / "plain.mat")
    with pytest.raises(MultiviewFileError, match="file not found"):
        load_mat(tmp_path / "none.mat")


def test_npz_round_trip_dense_and_sparse(tmp_path, views):
    dense, sparse, y = views
    path = save_views_npz(tmp_path / "v.npz", [dense, sparse], y, view_names=["d", "s"])
    data = load_npz(path)
    assert data["view_names"] == ["d", "s"]
    assert not sp.issparse(data["views"][0]) and sp.issparse(data["views"][1])
    _same(data["views"][0], dense)
    _same(data["views"][1], sparse)
    reordered = load_npz(path, views=["s", "d"])
    _same(reordered["views"][0], sparse)
    with pytest.raises(MultiviewFileError, match=r"v\.npz: no view 'x'.*\['d', 's'\]"):
        load_npz(path, views=["x"])
    with pytest.raises(MultiviewFileError, match="no labels key 'labels'"):
        load_npz(path, labels_key="labels")
    np.savez(tmp_path / "short.npz", a=dense, y=y[:5])
    with pytest.raises(MultiviewFileError, match="5 labels"):
        load_npz(tmp_path / "short.npz")


def _table(dense, y):
    frame = pd.DataFrame(dense, columns=["a_1", "a_2", "b_1"])
    frame["label"] = y
    return frame


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_table_views_by_columns_and_patterns(tmp_path, views, suffix):
    dense, _, y = views
    path = tmp_path / f"t{suffix}"
    frame = _table(dense, y)
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    data = load_table(path, views={"A": "a_*", "B": ["b_1"]}, label_column="label")
    _same(data["views"][0], dense[:, :2])
    _same(data["views"][1], dense[:, 2:])
    assert data["y"].tolist() == y.tolist()
    sparse = load_table(path, views={"A": "a_*"}, label_column="label", sparse=True)
    assert sp.issparse(sparse["views"][0])
    with pytest.raises(MultiviewFileError, match=r"view 'B': no column\(s\) \['c'\]"):
        load_table(path, views={"B": ["c"]}, label_column="label")
    with pytest.raises(MultiviewFileError, match="no label column 'y'"):
        load_table(path, views={"A": "a_*"}, label_column="y")


def test_table_missing_labels_and_text_columns(tmp_path, views):
    dense, _, y = views
    frame = _table(dense, y).astype({"label": float})
    frame.loc[[2, 7], "label"] = np.nan
    frame["word"] = "x"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(MultiviewFileError, match=r"t\.csv: labels .* missing for 2 .*\[2, 7\]"):
        load_table(tmp_path / "t.csv", views={"A": "a_*"}, label_column="label")
    with pytest.raises(MultiviewFileError, match=r"\['word'\] are not numeric"):
        load_table(tmp_path / "t.csv", views={"W": ["word"]}, label_column="label")


def test_text_files_per_view_read_mfeat():
    data = load_text(RAW / "mfeat", views={"fou": "mfeat-fou.gz", "mor": "mfeat-mor.gz"},
                     labels="labels.txt.gz")  # fmt: skip
    assert [V.shape for V in data["views"]] == [(2000, 76), (2000, 6)]
    assert np.bincount(data["y"]).tolist() == [200] * 10


def test_text_errors(tmp_path, views):
    dense, _, y = views
    np.savetxt(tmp_path / "v.txt", dense)
    np.savetxt(tmp_path / "short.txt", dense[:4])
    np.savetxt(tmp_path / "y.txt", y, fmt="%d")
    with pytest.raises(MultiviewFileError, match=r"w\.txt: view 'w': file not found"):
        load_text(tmp_path, views={"w": "w.txt"}, labels="y.txt")
    with pytest.raises(MultiviewFileError, match=r"rows per view \{'v': 12, 's': 4\}"):
        load_text(tmp_path, views={"v": "v.txt", "s": "short.txt"}, labels="y.txt")


def test_load_multiview_infers_the_format_and_checks_keys(tmp_path, views):
    dense, sparse, y = views
    save_views_npz(tmp_path / "v.npz", [dense, sparse], y)
    files = MultiviewFiles(tmp_path)
    assert len(files.load({"path": "v.npz"})["views"]) == 2  # relative to the root, npz
    with pytest.raises(MultiviewFileError, match=r"unknown key\(s\) \['view_key'\].*'npz'"):
        load_multiview({"path": "v.npz", "view_key": "x"}, root=tmp_path)
    with pytest.raises(MultiviewFileError, match="unknown format 'hdf5'"):
        load_multiview({"path": "v.npz", "format": "hdf5"}, root=tmp_path)
    with pytest.raises(MultiviewFileError, match="cannot tell the format"):
        load_multiview({"path": "v.bin"}, root=tmp_path)
    with pytest.raises(MultiviewFileError, match="needs at least a 'path'"):
        load_multiview({"format": "npz"})


def test_subsample_keeps_each_class_share_in_file_order_and_sparse(tmp_path, views):
    dense, sparse, y = views
    save_views_npz(tmp_path / "v.npz", [dense, sparse], y)
    full = load_multiview({"path": "v.npz"}, root=tmp_path)
    part = load_multiview({"path": "v.npz", "subsample": {"n": 6, "seed": 3}}, root=tmp_path)
    assert np.bincount(part["y"]).tolist() == [2, 2, 2]  # 12 rows, 3 classes of 4 -> 2 each
    # the kept rows are rows of the file, in the file's order: find each in the full view
    rows = [int(np.flatnonzero((dense == r).all(axis=1))[0]) for r in part["views"][0]]
    assert rows == sorted(rows) and len(set(rows)) == 6
    _same(part["views"][1], full["views"][1][rows])
    assert sp.issparse(part["views"][1])
    np.testing.assert_array_equal(part["y"], y[rows])
    again = load_multiview({"path": "v.npz", "subsample": {"n": 6, "seed": 3}}, root=tmp_path)
    np.testing.assert_array_equal(again["views"][0], part["views"][0])  # seeded
    other = load_multiview({"path": "v.npz", "subsample": {"n": 6, "seed": 4}}, root=tmp_path)
    assert not np.array_equal(other["views"][0], part["views"][0])
    assert "subsample of 6 rows" in part["source"]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (2, r"from the number of classes \(3\) to below the number of rows \(12\); got 2"),
        (12, r"got 12"),
        (6.5, r"got 6.5"),
        ({"rows": 6}, r"a row count or \{n, seed\}"),
    ],
)
def test_subsample_errors_name_the_problem(tmp_path, views, spec, match):
    dense, sparse, y = views
    save_views_npz(tmp_path / "v.npz", [dense, sparse], y)
    with pytest.raises(MultiviewFileError, match=match):
        load_multiview({"path": "v.npz", "subsample": spec}, root=tmp_path)
