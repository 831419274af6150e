"""Streaming: chunked reading of several systems and apply_to_files equal the whole-file path."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal.io import (
    align_multiclass_scores,
    align_scores,
    iter_score_chunks,
    read_albayzin_scores,
    read_multiclass_scores,
    read_scores,
    write_albayzin_scores,
    write_multiclass_scores,
    write_scores,
)
from focal.workflows import apply_to_files


def make_systems(folder, n=500, k=3, seed=0, comment_every=None):
    rng = np.random.default_rng(seed)
    models = np.array([f"spk{i % 23:03d}" for i in range(n)])
    tests = np.array([f"utt{i:05d}_{'x' * (i % 5)}" for i in range(n)])
    X = rng.normal(size=(n, k)) * np.array([3.0, 0.05, 10.0])[:k]
    paths = []
    for j in range(k):
        path = folder / f"sys{j}.scores"
        write_scores(path, models, tests, X[:, j])
        if comment_every:
            lines = path.read_text().splitlines()
            for i in range(len(lines), 0, -comment_every):
                lines.insert(i, "# a comment" if j % 2 else "")
            path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths, models, tests, X


def fuse(X):
    """An affine fusion computed element-wise: BLAS matrix products may round differently for
    different chunk shapes, element-wise arithmetic does not.
    """
    w = np.array([1.5, -20.0, 0.25])
    out = np.full(X.shape[0], 0.125)
    for j in range(X.shape[1]):
        out = out + w[j] * X[:, j]
    return out


@given(
    chunk_size=st.integers(1, 700),
    block_bytes=st.sampled_from([97, 333, 4096, 1 << 22]),
    comment_every=st.sampled_from([None, 7, 100]),
)
@settings(max_examples=12)
def test_streaming_equals_whole_file_path(tmp_path_factory, chunk_size, block_bytes, comment_every):
    folder = tmp_path_factory.mktemp("stream")
    paths, models, tests, X = make_systems(folder, comment_every=comment_every)
    chunks = list(iter_score_chunks(paths, chunk_size=chunk_size, block_bytes=block_bytes))
    assert all(len(c) == chunk_size for c in chunks[:-1])
    np.testing.assert_array_equal(np.concatenate([c.X for c in chunks]), X)
    assert np.char.decode(np.concatenate([c.ids[0] for c in chunks])).tolist() == models.tolist()
    assert np.char.decode(np.concatenate([c.ids[1] for c in chunks])).tolist() == tests.tolist()
    # apply writes exactly what the non-streaming path writes
    n = apply_to_files(fuse, paths, folder / "out", chunk_size=chunk_size, block_bytes=block_bytes)
    assert n == 500
    Xw, mw, tw = align_scores(*(read_scores(p) for p in paths))
    write_scores(folder / "ref", mw, tw, fuse(Xw))
    assert (folder / "out").read_bytes() == (folder / "ref").read_bytes()


def test_line_numbers_of_chunks_point_at_the_first_file(tmp_path):
    paths, _, _, _ = make_systems(tmp_path, n=50, comment_every=10)
    chunk = next(iter_score_chunks(paths, chunk_size=50))
    lines = paths[0].read_text().splitlines()
    for i in (0, 9, 10, 49):
        assert lines[chunk.lines[i] - 1].split()[1] == chunk.ids[1][i].decode()


def test_mismatched_trial_order_is_a_clear_error(tmp_path):
    paths, models, tests, X = make_systems(tmp_path, n=300)
    order = np.arange(300)
    order[[200, 201]] = [201, 200]
    write_scores(paths[2], models[order], tests[order], X[order, 2])
    with pytest.raises(ValueError) as info:
        list(iter_score_chunks(paths, chunk_size=64))
    message = str(info.value)
    assert (
        f"{paths[2]}:201: trial (spk017, utt00201_x) is not the trial (spk016, utt00200_) "
        f"of {paths[0]}:201" in message
    )
    assert "on_mismatch='align'" in message
    # the documented fallback aligns on the ids
    apply_to_files(fuse, paths, tmp_path / "out", on_mismatch="align")
    out = read_scores(tmp_path / "out")
    np.testing.assert_array_equal(out.scores, fuse(X))


def test_files_of_different_lengths(tmp_path):
    paths, models, tests, X = make_systems(tmp_path, n=100)
    write_scores(paths[1], models[:90], tests[:90], X[:90, 1])
    with pytest.raises(
        ValueError, match=r"sys1.scores: ends after 90 trials, .*sys0.scores has more"
    ):
        list(iter_score_chunks(paths, chunk_size=32))
    with pytest.raises(ValueError, match=r"sys0.scores: has more trials than .*sys1.scores \(90\)"):
        list(iter_score_chunks([paths[1], paths[0]], chunk_size=32))
    with pytest.raises(ValueError, match=r"trial\(s\) of the first score file"):
        apply_to_files(fuse, paths, tmp_path / "out", on_mismatch="align")
    apply_to_files(fuse, paths, tmp_path / "out", on_mismatch="align", missing="drop")
    assert len(read_scores(tmp_path / "out")) == 90


def test_reader_errors_surface_with_file_and_line(tmp_path):
    paths, _, _, _ = make_systems(tmp_path, n=100)
    lines = paths[1].read_text().splitlines()
    lines[76] = lines[76].rsplit(" ", 1)[0] + " oops"
    paths[1].write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"sys1.scores:77: score 'oops' is not a number"):
        apply_to_files(fuse, paths, tmp_path / "out", chunk_size=10)
    assert not (tmp_path / "out").exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith(".focal-")] == []


@pytest.mark.parametrize(
    "transform,message",
    [
        (
            lambda X: X,
            r"transform returned shape \(64, 3\) for a chunk of shape \(64, 3\); expected \(64,\)",
        ),
        (lambda X: np.where(X[:, 0] > 2, np.nan, 0.0), r"transform returned NaN for trial \(spk"),
        (None, "transform must be callable"),
    ],
)
def test_bad_transforms(tmp_path, transform, message):
    paths, _, _, _ = make_systems(tmp_path, n=100)
    with pytest.raises(ValueError, match=message):
        apply_to_files(transform, paths, tmp_path / "out", chunk_size=64)
    assert not (tmp_path / "out").exists()


def test_output_has_the_permissions_of_a_new_file(tmp_path):
    paths, _, _, _ = make_systems(tmp_path, n=10)
    (tmp_path / "plain").write_text("x")
    apply_to_files(fuse, paths, tmp_path / "out")
    assert (tmp_path / "out").stat().st_mode == (tmp_path / "plain").stat().st_mode
    os.chmod(tmp_path / "out", 0o640)
    apply_to_files(fuse, paths, tmp_path / "out")  # overwriting keeps the file's mode
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o640


def test_transform_may_return_a_column(tmp_path):
    paths, _, _, X = make_systems(tmp_path, n=10)
    apply_to_files(lambda X: fuse(X)[:, None], paths, tmp_path / "out")
    np.testing.assert_array_equal(read_scores(tmp_path / "out").scores, fuse(X))


def test_bad_arguments(tmp_path):
    paths, _, _, _ = make_systems(tmp_path, n=10)
    with pytest.raises(ValueError, match="kind must be"):
        list(iter_score_chunks(paths, kind="ternary"))
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        list(iter_score_chunks(paths, chunk_size=0))
    with pytest.raises(ValueError, match="no score files"):
        list(iter_score_chunks([]))
    with pytest.raises(ValueError, match="would overwrite an input"):
        apply_to_files(fuse, paths, paths[0])
    with pytest.raises(ValueError, match="on_mismatch must be"):
        apply_to_files(fuse, paths, tmp_path / "o", on_mismatch="guess")
    with pytest.raises(ValueError, match="cannot open"):
        apply_to_files(fuse, [tmp_path / "absent"], tmp_path / "o")
    with pytest.raises(ValueError, match="no-such-folder/o: cannot write"):
        apply_to_files(fuse, paths, tmp_path / "no-such-folder" / "o")
    (tmp_path / "empty").write_text("# nothing\n")
    with pytest.raises(ValueError, match="empty: no trials found"):
        apply_to_files(fuse, [tmp_path / "empty"], tmp_path / "o")


def test_multiclass_streaming(tmp_path):
    rng = np.random.default_rng(5)
    segs = np.array([f"seg{i:04d}" for i in range(333)])
    llh = [rng.normal(size=(333, 7)) for _ in range(2)]
    for j in range(2):
        write_albayzin_scores(tmp_path / f"a{j}", segs, llh[j], "Plenty", "Open")
    chunks = list(
        iter_score_chunks(
            [tmp_path / "a0", tmp_path / "a1"], kind="albayzin", chunk_size=50, block_bytes=1000
        )
    )
    np.testing.assert_array_equal(np.concatenate([c.X for c in chunks]), np.hstack(llh))

    def calibrate(X):
        return 0.5 * X[:, :7] + 0.25 * X[:, 7:] - 1.0

    apply_to_files(
        calibrate,
        [tmp_path / "a0", tmp_path / "a1"],
        tmp_path / "out",
        kind="albayzin",
        chunk_size=40,
        condition="Closed",
    )
    out = read_albayzin_scores(tmp_path / "out")
    assert (out.task, out.condition) == ("Plenty", "Closed")
    np.testing.assert_array_equal(out.llh, calibrate(np.hstack(llh)))
    # generic format, second system in another segment order: the 'align' fallback
    write_multiclass_scores(tmp_path / "g0", segs, llh[0][:, :3], ["en", "fr", "de"])
    order = rng.permutation(333)
    write_multiclass_scores(tmp_path / "g1", segs[order], llh[1][order, :3], ["en", "fr", "de"])
    with pytest.raises(ValueError, match="g1:2: trial"):
        apply_to_files(
            lambda X: X[:, :3],
            [tmp_path / "g0", tmp_path / "g1"],
            tmp_path / "o",
            kind="multiclass",
        )
    apply_to_files(
        lambda X: X[:, :3] - X[:, 3:],
        [tmp_path / "g0", tmp_path / "g1"],
        tmp_path / "o",
        kind="multiclass",
        on_mismatch="align",
    )
    out = read_multiclass_scores(tmp_path / "o")
    assert out.classes == ("en", "fr", "de")
    np.testing.assert_array_equal(out.llh, llh[0][:, :3] - llh[1][:, :3])
    X, _, _ = align_multiclass_scores(
        read_multiclass_scores(tmp_path / "g0"), read_multiclass_scores(tmp_path / "g1")
    )
    np.testing.assert_array_equal(X, np.hstack([llh[0][:, :3], llh[1][:, :3]]))
    with pytest.raises(ValueError, match="transform returned shape"):
        apply_to_files(lambda X: X[:, :3], [tmp_path / "a0"], tmp_path / "o", kind="albayzin")


def test_multiclass_streams_must_share_classes(tmp_path):
    segs = np.array(["a", "b"])
    write_multiclass_scores(tmp_path / "g0", segs, np.zeros((2, 2)), ["x", "y"])
    write_multiclass_scores(tmp_path / "g1", segs, np.zeros((2, 2)), ["x", "z"])
    with pytest.raises(ValueError, match="g1: classes x, z differ"):
        list(iter_score_chunks([tmp_path / "g0", tmp_path / "g1"], kind="multiclass"))
    assert read_albayzin_scores  # imported for the albayzin cases above


@pytest.mark.parametrize("threads", [0, 1])
@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_aligned_files_are_read_in_the_one_pool_of_threads(tmp_path, monkeypatch, kind, threads):
    # threads=0 means no worker thread, and threads=1 one pool of one worker, also when the
    # files are read whole and aligned (the readers and the join share the stream's pool)
    import focal._text.pool

    if kind == "binary":
        paths = make_systems(tmp_path, n=50, k=2)[0]
    else:
        segments = np.array([f"seg{i}" for i in range(50)])
        llh = np.zeros((50, 2))
        paths = [tmp_path / "a", tmp_path / "b"]
        write_multiclass_scores(paths[0], segments, llh, ["x", "y"])
        write_multiclass_scores(paths[1], segments[::-1], llh, ["x", "y"])
    pools = []
    real = focal._text.pool.ThreadPoolExecutor

    def counted(*args, **kwargs):
        pools.append(kwargs["max_workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(focal._text.pool, "ThreadPoolExecutor", counted)
    apply_to_files(
        (lambda X: X[:, :1]) if kind == "binary" else (lambda X: X[:, :2]),
        paths,
        tmp_path / "out",
        kind=kind,
        on_mismatch="align",
        threads=threads,
    )
    assert pools == ([] if threads == 0 else [1])
