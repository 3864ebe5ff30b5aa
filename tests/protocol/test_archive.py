"""The unit archive: a run's finished units as JSON lines that the engine reads back as a
second, read-only cache (a paper run resumed in a later session, on another machine)."""

import json
import logging

import numpy as np
import pandas as pd
import pytest

from multiview_lab.protocol import CacheIncompleteError, ViewsTask, cache_status, run_experiment
from multiview_lab.protocol.archive import (
    Archive,
    ArchiveError,
    archive_cache,
    decode,
    encode,
    main,
    same,
)
from multiview_lab.protocol.unit import TIMING_COLUMNS, UnitResult
from tests.protocol.conftest import METHODS


def _tree_grid(once_per):
    return {
        "tree": {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
            "tune": {
                "grid": {"params": [{"max_depth": d} for d in (1, 2, 4, 8)]},
                "folds": 3,
                "once_per": once_per,
            },
        },
        "logreg": METHODS["logreg"],
    }


def _round_trip(value):
    return decode(json.loads(json.dumps(encode(value), allow_nan=False)))


def test_every_kind_of_value_reads_back_identical():
    frame = pd.DataFrame(
        {
            "method": ["a", "b", "c"],
            "k": np.array([1, 2, 3], dtype=np.int64),
            "acc": [0.1, np.nan, 1 / 3],
            "flag": [True, False, True],
            "obj": pd.Series([None, "x", 2.5], dtype=object),
            "small": np.array([1, 2, 3], dtype=np.int32),
        }
    )
    rows = [
        {
            "dataset": "SYN",
            "seed": 123456789,
            "accuracy": np.float64(0.1) + np.float64(0.2),  # not a short decimal
            "k": np.int64(7),
            "lam": np.float32(0.3),
            "nan": float("nan"),
            "inf": np.float64(-np.inf),
            "ok": np.bool_(True),
            "none": None,
            "chosen": [1, 2.5, "x"],
            "pair": (1, 2),
            "nested": {"max_depth": 3, "c": [0.1, 1e-300]},
        }
    ]
    unit = UnitResult(rows=rows, extras={"curves": frame, "empty": frame.iloc[:0]})
    back = _round_trip(unit)
    assert same(unit, back)
    assert type(back.rows[0]["k"]) is np.int64 and type(back.rows[0]["lam"]) is np.float32
    assert back.rows[0]["accuracy"] == 0.30000000000000004
    pd.testing.assert_frame_equal(back.extras["curves"], frame)
    assert list(back.extras["empty"].dtypes) == list(frame.dtypes)
    tune = {"params": {"params": {"max_depth": np.int64(4)}}, "scores": {"cv_accuracy": 0.8},
            "cpu_time_s": 1.5}  # fmt: skip
    assert same(tune, _round_trip(tune))
    point = {"point": {"params": {"max_depth": np.int64(4)}}, "score": 0.8, "cpu_time_s": 0.5,
             "computed_for": "tree"}  # fmt: skip
    back = _round_trip(point)
    assert same(point, back) and type(back["point"]["params"]["max_depth"]) is np.int64


def test_arrays_read_back_identical_in_rows_and_frames():
    """MVFS keeps each selector's feature ranking (an int64 array per row of a frame): found by
    the archive refusing the mvfs paper run's selector units."""
    rankings = pd.DataFrame(
        {
            "method": ["ADMM-MVFS", "RFS"],
            "ranking": pd.Series([np.arange(649)[::-1].copy(), np.arange(649)], dtype=object),
            "lam": [10.0, 10.0],
        }
    )
    arrays = {
        "f32": np.array([[0.1, np.nan], [np.inf, -0.0]], dtype=np.float32),
        "f64": np.array([0.1 + 0.2, 1e-300, -np.inf]),
        "u8": np.array([0, 255], dtype=np.uint8),
        "flags": np.array([True, False]),
        "empty": np.zeros((0, 3)),
        "objects": np.array(["a", None, [1, 2]], dtype=object),
    }
    unit = UnitResult(rows=[{"ranking": np.arange(5)}], extras={"rankings": rankings, **arrays})
    back = _round_trip(unit)
    assert same(unit, back)
    got = back.extras["rankings"]["ranking"]
    assert got.dtype == object and got.iloc[0].dtype == np.int64
    np.testing.assert_array_equal(got.iloc[0], np.arange(649)[::-1])
    for name, array in arrays.items():
        assert back.extras[name].dtype == array.dtype and back.extras[name].shape == array.shape
    assert back.extras["f32"].tobytes() == arrays["f32"].tobytes()  # NaN, inf and -0.0 kept
    assert back.extras["objects"][2] == [1, 2]
    # what the check must tell apart
    a = np.arange(3)
    assert not same(a, a.astype(np.int32)) and not same(a, a[:2]) and not same(a, a[::-1])
    assert not same(a.reshape(1, 3), a) and same(np.array([np.nan]), np.array([np.nan]))


def test_a_format_1_file_is_read_and_upgraded_when_entries_are_added(data, split_table, tmp_path):
    """Files written before arrays were archivable (format 1) are read as they are; adding
    entries (which may hold arrays) marks the file format 2, which code reading only format 1
    refuses with an error instead of misreading."""
    cache, target = tmp_path / "cache", tmp_path / "archive" / "a.jsonl"
    _run(data, split_table, cache_dir=str(cache))
    archive_cache(cache, target, commit="c1")
    lines = target.read_text().splitlines()
    header = json.loads(lines[0])
    kept = lines[1:3]  # an old file: two entries under a format-1 header
    target.write_text("\n".join([json.dumps({**header, "archive": 1}), *kept]) + "\n")
    assert len(Archive(target.parent)) == 2
    assert archive_cache(cache, target, commit="c1")["added"] == 2 * len(split_table) - 2
    lines = target.read_text().splitlines()
    assert json.loads(lines[0]) == {**header, "archive": 2} and lines[1:3] == kept
    with pytest.raises(ArchiveError, match=r"u\.rows.*complex128 array"):
        encode(UnitResult(rows=[{"z": np.array([1j])}]), where="u")


def test_same_tells_apart_what_an_archive_must_not_change():
    """The check behind every archived entry fails on each change a lossy format would make."""
    assert not same({"a": np.float64(1.0)}, {"a": 1.0})  # a numpy scalar turned Python
    assert not same({"a": np.int64(1)}, {"a": 1})  # would re-key a unit fixed to it
    assert not same({"a": (1, 2)}, {"a": [1, 2]})
    assert not same({"a": 0.1 + 0.2}, {"a": 0.3})
    assert not same({"a": float("nan")}, {"a": 0.0})
    assert same({"a": float("nan")}, {"a": float("nan")})
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # column order of the results
    f = pd.DataFrame({"k": [1, 2]})
    assert not same(f, f.astype("float64")) and not same(f, f.iloc[:1])


def test_what_cannot_be_archived_exactly_is_an_error_naming_it():
    with pytest.raises(ArchiveError, match=r"u1\.rows.*set"):
        encode(UnitResult(rows=[{"x": {1, 2}}]), where="u1")
    with pytest.raises(ArchiveError, match="non-string keys"):
        encode(UnitResult(rows=[{"x": {1: 2}}]))
    with pytest.raises(ArchiveError, match="not a unit result"):
        encode([1, 2])


def _run(data, split_table, methods=METHODS, **execution):
    return run_experiment(
        ViewsTask(), data, split_table, methods, execution={"n_jobs": 1, **execution}
    )


def test_a_run_resumes_from_the_archive_alone(data, split_table, tmp_path, caplog):
    """Another machine, no unit cache: every archived unit is read, not computed; only the
    units whose models are kept run again (the archive keeps no model); the table is
    identical, timings included for the archived units."""
    cache, target = tmp_path / "cache", tmp_path / "archive" / "run.jsonl"
    first = _run(data, split_table, cache_dir=str(cache))
    counts = archive_cache(cache, target, commit="abc123", note="test run")
    assert counts == {"added": 2 * len(split_table), "already": 0, "unreadable": 0}
    header = json.loads(target.read_text().splitlines()[0])
    assert header["archive"] == 2 and header["commit"] == "abc123"

    with caplog.at_level(logging.INFO, logger="multiview_lab.protocol.engine"):
        again = _run(data, split_table, archive_dir=str(target.parent))
    kept = len(first.models)
    assert kept == 2 and again.n_cached == 2 * len(split_table) - kept
    assert f"{2 * len(split_table) - kept} of them from the archive" in caplog.text
    assert sorted(again.models) == sorted(first.models)  # recomputed, so still logged
    timing = list(TIMING_COLUMNS)
    pd.testing.assert_frame_equal(
        first.results.drop(columns=timing), again.results.drop(columns=timing)
    )
    recomputed = again.results.index.isin([0, 1])  # the first unit of each method
    pd.testing.assert_frame_equal(
        first.results.loc[~recomputed, timing], again.results.loc[~recomputed, timing]
    )
    assert again.cpu_seconds > 0
    # without kept models the archive alone serves the whole run, cache_only included
    full = run_experiment(
        ViewsTask(), data, split_table, METHODS, keep_models={"first": False},
        execution={"n_jobs": 1, "cache_dir": str(tmp_path / "c2")},
    )  # fmt: skip
    archive_cache(tmp_path / "c2", target, commit="abc123")
    served = run_experiment(
        ViewsTask(), data, split_table, METHODS, keep_models={"first": False},
        execution={"n_jobs": 1, "archive_dir": str(target.parent), "cache_only": True},
    )  # fmt: skip
    assert served.n_cached == len(full.results)
    pd.testing.assert_frame_equal(
        full.results.drop(columns=timing), served.results.drop(columns=timing)
    )


def test_kept_models_are_not_refitted_when_asked(data, split_table, tmp_path, caplog):
    """refit_kept_models: false reads a kept unit's result from the archive (under the same
    key as a run that refits it) and returns no model for it: the archive alone serves the
    whole run, cache_only included, with the table of the run that computed it."""
    cache, target = tmp_path / "cache", tmp_path / "archive" / "run.jsonl"
    first = _run(data, split_table, cache_dir=str(cache))
    archive_cache(cache, target, commit="abc123")
    with caplog.at_level(logging.INFO, logger="multiview_lab.protocol.engine"):
        again = _run(
            data, split_table, archive_dir=str(target.parent), cache_only=True,
            refit_kept_models=False,
        )  # fmt: skip
    assert again.n_cached == len(first.results) and again.models == {}
    assert (
        f"{len(first.results)} of them from the archive; 2 kept models not refitted, "
        "execution.refit_kept_models: false)" in caplog.text
    )
    pd.testing.assert_frame_equal(first.results, again.results)  # timings too: none ran
    status = cache_status(
        ViewsTask(), data, split_table, METHODS,
        execution={"archive_dir": str(target.parent), "refit_kept_models": False},
    )  # fmt: skip
    assert (status["status"] == "cached").all()
    # the default refits them, and cache_only then refuses the run
    with pytest.raises(CacheIncompleteError, match="refit_kept_models=false reads such units"):
        _run(data, split_table, archive_dir=str(target.parent), cache_only=True)
    with pytest.raises(ValueError, match="refit_kept_models must be true or false"):
        _run(data, split_table, refit_kept_models="no")


def test_shared_inner_cvs_are_archived_and_their_units_keep_their_keys(data, split_table, tmp_path):
    """A shared CV's choice (here nested dicts of numpy integers) reads back with its types,
    so the units fixed to it get the same keys and are found in the archive."""
    methods = _tree_grid(["dataset", "repeat"])
    cache, target = tmp_path / "cache", tmp_path / "archive" / "cv.jsonl"
    first = _run(data, split_table, methods, cache_dir=str(cache))
    archive_cache(cache, target)
    execution = {"n_jobs": 1, "archive_dir": str(target.parent)}
    status = cache_status(ViewsTask(), data, split_table, methods, execution=execution)
    assert (status[status["stage"] == "shared CV"]["status"] == "cached").all()
    units = status[status["stage"] == "unit"]
    assert (units["status"] == "cached").sum() == len(units) - 2  # the kept ones run again
    again = _run(
        data, split_table, methods, **{k: v for k, v in execution.items() if k != "n_jobs"}
    )
    cols = ["method", "repeat", "fold", "accuracy", "cv_accuracy", "tuned_on"]
    pd.testing.assert_frame_equal(first.results[cols], again.results[cols])


def test_a_compressed_archive_reads_as_the_plain_one_and_is_reproducible(
    data, split_table, tmp_path
):
    """``.jsonl.gz`` files (what the repository keeps) hold the same lines as ``.jsonl``, and
    the same lines always give the same bytes (no time stamp in the gzip header), so
    rewriting an unchanged archive changes nothing in git."""
    import gzip

    cache = tmp_path / "cache"
    run_experiment(
        ViewsTask(), data, split_table, METHODS, keep_models={"first": False},
        execution={"n_jobs": 1, "cache_dir": str(cache)},
    )  # fmt: skip
    plain, packed = tmp_path / "plain" / "a.jsonl", tmp_path / "packed" / "a.jsonl.gz"
    archive_cache(cache, plain, commit="c1")
    archive_cache(cache, packed, commit="c1")
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert packed.stat().st_size < plain.stat().st_size / 3
    assert sorted(Archive(packed.parent).keys()) == sorted(Archive(plain.parent).keys())
    again = tmp_path / "again" / "a.jsonl.gz"
    archive_cache(cache, again, commit="c1")
    assert again.read_bytes() == packed.read_bytes()
    assert archive_cache(cache, packed, commit="c1")["added"] == 0  # nothing new to add
    served = run_experiment(
        ViewsTask(), data, split_table, METHODS, keep_models={"first": False},
        execution={"n_jobs": 1, "archive_dir": str(packed.parent), "cache_only": True},
    )  # fmt: skip
    assert served.n_cached == 2 * len(split_table)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(ArchiveError, match=r"x\.jsonl\.gz: unreadable"):
        Archive(tmp_path / "bad")
    with pytest.raises(ArchiveError, match=r"ends in \.jsonl\.gz"):
        archive_cache(cache, tmp_path / "a.json", commit="c1")


def test_archiving_adds_only_new_entries_and_never_half_a_file(data, split_table, tmp_path):
    cache, target = tmp_path / "cache", tmp_path / "archive" / "a.jsonl"
    _run(data, split_table, cache_dir=str(cache))
    archive_cache(cache, target, commit="c1")
    size = target.stat().st_size
    assert archive_cache(cache, target, commit="c1")["added"] == 0
    assert target.stat().st_size == size
    # an entry that cannot be archived exactly: nothing is written, the file is unchanged
    import joblib

    joblib.dump(UnitResult(rows=[{"bad": {1, 2}}]), cache / "ffff.joblib")
    with pytest.raises(ArchiveError, match="ffff"):
        archive_cache(cache, target, commit="c1")
    assert target.stat().st_size == size and not list(target.parent.glob("*.tmp"))
    # a damaged cache entry is left out, as the engine leaves it
    (cache / "ffff.joblib").write_bytes(b"not joblib")
    assert archive_cache(cache, target, commit="c1")["unreadable"] == 1
    # a second file in the folder: keys already in the folder are not added again
    assert archive_cache(cache, target.with_name("b.jsonl"))["added"] == 0
    # a file holds one commit's units
    with pytest.raises(ArchiveError, match="not other: archive them to a new file"):
        archive_cache(cache, target, commit="other")
    assert len(Archive(target.parent)) == 2 * len(split_table)


def test_bad_archives_are_errors_naming_the_problem(data, split_table, tmp_path):
    with pytest.raises(ArchiveError, match="not a folder"):
        _run(data, split_table, archive_dir=str(tmp_path / "missing"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.jsonl").write_text('{"archive": 1}\n{"key": "k", "entry": {\n')
    with pytest.raises(ArchiveError, match=r"x\.jsonl, line 2: not JSON"):
        Archive(tmp_path / "bad")
    (tmp_path / "bad" / "x.jsonl").write_text('{"archive": 99}\n')
    with pytest.raises(ArchiveError, match="format 99"):
        Archive(tmp_path / "bad")
    with pytest.raises(ValueError, match="cache_only needs"):
        _run(data, split_table, cache_only=True)
    assert main([str(tmp_path / "nocache"), str(tmp_path / "a.jsonl")]) == 2


def test_the_archive_code_is_in_no_units_key():
    """Editing the archive format must not re-key the units it holds."""
    from multiview_lab.protocol.cache import code_closure

    closure = code_closure("multiview_lab.protocol.unit", "multiview_lab.protocol.tuning")
    assert "multiview_lab.protocol.archive" not in closure


def test_the_header_commit_is_refused_when_the_code_has_uncommitted_changes(
    data, split_table, tmp_path
):
    """The header names the code that computed the units: a checkout whose src/ differs from
    its commit cannot vouch for that, so archiving without an explicit commit is refused."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "m.py").write_text("x = 1\n")
    (repo / "notes.txt").write_text("a\n")

    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
            check=True, capture_output=True,
        )  # fmt: skip

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "code")
    cache, target = repo / "data" / "cache", tmp_path / "archive" / "a.jsonl"
    _run(data, split_table, cache_dir=str(cache))
    (repo / "notes.txt").write_text("b\n")  # outside src/: not the units' code
    archive_cache(cache, target)
    head = json.loads(target.read_text().splitlines()[0])["commit"]
    assert len(head) == 40
    (repo / "src" / "m.py").write_text("x = 2\n")
    with pytest.raises(ArchiveError, match=r"uncommitted changes to the code \(src/m\.py\)"):
        archive_cache(cache, target.with_name("b.jsonl"))
    assert not target.with_name("b.jsonl").exists()
    assert archive_cache(cache, target.with_name("b.jsonl"), commit=head)["added"] == 0
    # the abbreviated hash (as in the files' names) is the same commit: the file takes it
    assert archive_cache(cache, target, commit=head[:7])["added"] == 0
    with pytest.raises(ArchiveError, match="archive them to a new file"):
        archive_cache(cache, target, commit="0" * 40)
