"""BOSARIS HDF5 Scores / Key (h5py) and parquet tables (pyarrow) read as the text files of the
same trials; recognised by their magic bytes.
"""

import re
import tracemalloc

import numpy as np
import pytest

from focal.exceptions import FileFormatError
from focal.io import align_trials, read_key, read_scores
from focal.io.engine import in_memory, join

MODELS = np.array([b"m1", b"m2", b"m3"])
SEGMENTS = np.array([b"s1", b"s2", b"s22222222222", b"s4"])
SCORES = np.array([[0.5, -1.25, 2.0, 9.0], [3.5, 0.0, -7.0, 1e-3], [1.0, 1.5, -2.5, 4.0]])
TRIALS = np.array([[1, 1, 0, 1], [1, 0, 1, 0], [0, 1, 1, 1]], dtype=bool)  # masked-in cells
TARGET = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=bool)


def _text_files(tmp_path):
    rows, cols = np.nonzero(TRIALS)
    s = tmp_path / "scores.txt"
    s.write_text(
        "".join(
            f"{MODELS[r].decode()} {SEGMENTS[c].decode()} {float(SCORES[r, c])!r}\n"
            for r, c in zip(rows, cols)
        )
    )
    k = tmp_path / "key.txt"
    k.write_text(
        "".join(
            f"{MODELS[r].decode()} {SEGMENTS[c].decode()} "
            f"{'target' if TARGET[r, c] else 'nontarget'}\n"
            for r, c in zip(rows[::-1], cols[::-1])
        )
    )
    return s, k


def test_bosaris_hdf5_scores_and_key(tmp_path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "scores.h5", "w") as f:
        f["scores"] = SCORES
        f["score_mask"] = TRIALS.astype(np.uint8)
        f["ID/row_ids"] = MODELS
        f["ID/column_ids"] = SEGMENTS
    with h5py.File(tmp_path / "key.h5", "w") as f:  # Key.save_hdf5: +1 target, -1 non-target
        f["trial_mask"] = (TARGET.astype(np.int8) - (TRIALS & ~TARGET)).T  # transposed
        f["file_format"] = "2.0"
        f["ID/row_ids"] = MODELS
        f["ID/column_ids"] = SEGMENTS
    s_txt, k_txt = _text_files(tmp_path)
    expected = align_trials(read_key(k_txt), read_scores(s_txt))
    got = align_trials(read_key(k_txt), read_scores(tmp_path / "scores.h5"))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    by_h5_key = align_trials(read_key(tmp_path / "key.h5"), read_scores(s_txt))
    assert by_h5_key[1].tolist() == TARGET[TRIALS].tolist()  # row-major cells
    assert by_h5_key[0][:, 0].tolist() == SCORES[TRIALS].tolist()
    streamed = join(in_memory(read_key(k_txt)), [tmp_path / "scores.h5"])
    assert np.array_equal(streamed, expected[0])
    with pytest.raises(ValueError, match="no /scores: a BOSARIS Key or Ndx"):
        read_scores(tmp_path / "key.h5")


def test_parquet_scores_and_key(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows, cols = np.nonzero(TRIALS)
    pq.write_table(
        pa.table(
            {
                "enrol": MODELS[rows].astype(str),
                "segment": SEGMENTS[cols],
                "llr": SCORES[rows, cols],
            }
        ),
        tmp_path / "scores.pq",
    )
    pq.write_table(
        pa.table(
            {
                "modelid": MODELS[rows].astype(str),
                "segmentid": SEGMENTS[cols].astype(str),
                "targettype": np.where(TARGET[rows, cols], "target", "nontarget"),
            }
        ),
        tmp_path / "key.parquet",
    )
    s_txt, k_txt = _text_files(tmp_path)
    expected = align_trials(read_key(k_txt), read_scores(s_txt))
    got = align_trials(read_key(k_txt), read_scores(tmp_path / "scores.pq"))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    got = align_trials(read_key(tmp_path / "key.parquet", format="nist-sre"), read_scores(s_txt))
    assert got[1].tolist() == TARGET[TRIALS].tolist()
    with pytest.raises(ValueError, match="no score column"):
        read_scores(tmp_path / "key.parquet")


# ------------------------------------------------------------------ sidekit's HDF5 layout


def test_sidekit_hdf5_scores_and_key(tmp_path):
    """The files of sidekit's ``Scores.write`` / ``Key.write`` (bosaris/scores.py, key.py): ids
    in /modelset and /segset (fixed-length bytes), /scores float64 and /score_mask int8,
    /trial_mask int8 (+1 target, -1 non-target), each gzip-compressed with Fletcher-32,
    resizable.
    """
    h5py = pytest.importorskip("h5py")

    def put(f, name, data):
        maxshape = (None,) * np.ndim(data)
        f.create_dataset(name, data=data, maxshape=maxshape, compression="gzip", fletcher32=True)

    with h5py.File(tmp_path / "scores.h5", "w") as f:
        put(f, "modelset", MODELS.astype("S"))
        put(f, "segset", SEGMENTS.astype("S"))
        put(f, "score_mask", TRIALS.astype("int8"))
        put(f, "scores", SCORES)
    with h5py.File(tmp_path / "key.h5", "w") as f:
        put(f, "modelset", MODELS.astype("S"))
        put(f, "segset", SEGMENTS.astype("S"))
        put(f, "trial_mask", TARGET.astype("int8") - (TRIALS & ~TARGET).astype("int8"))
    s_txt, k_txt = _text_files(tmp_path)
    expected = align_trials(read_key(k_txt), read_scores(s_txt))
    got = align_trials(read_key(k_txt), read_scores(tmp_path / "scores.h5"))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    by_h5_key = align_trials(read_key(tmp_path / "key.h5"), read_scores(tmp_path / "scores.h5"))
    assert by_h5_key[1].tolist() == TARGET[TRIALS].tolist()  # row-major cells
    assert by_h5_key[0][:, 0].tolist() == SCORES[TRIALS].tolist()


# ------------------------------------------------- HDF5: only data stored in the named file


def _model(tmp_path):
    """A one-system calibration saved as a model file (its system name is not checked)."""
    from focal import LogisticFusion, save

    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.5
    x = rng.normal(size=200) + 2 * y
    path = tmp_path / "m1.json"
    save(LogisticFusion().fit(x[:, None], y), path)
    return path


def _hashes(*paths):
    import hashlib

    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def _refused_by_apply(capsys, tmp_path, h5, match):
    """``focal apply m1.json FILE -o out.txt``: exit 1, the message, no output, inputs intact."""
    from tests._support.cli import run_main

    model = _model(tmp_path)
    before = _hashes(model, h5)
    out = tmp_path / "out.txt"
    status, _, err = run_main(capsys, "apply", model, h5, "-o", out)
    assert status == 1 and re.search(match, err), err
    assert "Traceback" not in err
    assert not out.exists()
    assert _hashes(model, h5) == before
    return err


def _scores_file(h5py, path, **override):
    """A BOSARIS Scores file; ``override`` replaces datasets by name (a callable gets the
    open file and the name, and makes the object itself).
    """
    data = {
        "ID/row_ids": MODELS,
        "ID/column_ids": SEGMENTS,
        "scores": SCORES,
        "score_mask": TRIALS.astype(np.uint8),
    }
    with h5py.File(path, "w") as f:
        for name, value in data.items():
            make = override.get(name)
            if make is None:
                f[name] = value
            else:
                make(f, name)
    return path


def test_hdf5_external_storage_is_refused(tmp_path, capsys):
    """The issue's reproduction: ids stored in another file (a copy of a password file) came
    out verbatim in the output, 8 bytes per trial id.
    """
    h5py = pytest.importorskip("h5py")
    secret = tmp_path / "passwd"
    secret.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n" * 4)

    def external(f, name):
        f.create_dataset(name, shape=(3,), dtype="S8", external=[(str(secret), 0, 24)])

    h5 = _scores_file(h5py, tmp_path / "ext.h5", **{"ID/row_ids": external})
    err = _refused_by_apply(capsys, tmp_path, h5, r"/ID/row_ids keeps its data in external")
    assert "root:" not in err


def test_hdf5_external_link_is_refused(tmp_path, capsys):
    h5py = pytest.importorskip("h5py")
    other = _scores_file(h5py, tmp_path / "other.h5")

    def link(f, name):
        f[name] = h5py.ExternalLink(str(other), "/scores")

    h5 = _scores_file(h5py, tmp_path / "link.h5", scores=link)
    _refused_by_apply(capsys, tmp_path, h5, r"/scores is an external link \(to .*other\.h5")


def test_hdf5_external_link_of_a_group_is_refused_before_it_is_followed(tmp_path, capsys):
    h5py = pytest.importorskip("h5py")
    other = _scores_file(h5py, tmp_path / "other.h5")
    with h5py.File(tmp_path / "group.h5", "w") as f:
        f["ID"] = h5py.ExternalLink(str(other), "/ID")
        f["scores"] = SCORES
    _refused_by_apply(capsys, tmp_path, tmp_path / "group.h5", r"/ID is an external link")


def test_hdf5_virtual_dataset_is_refused(tmp_path, capsys):
    h5py = pytest.importorskip("h5py")
    other = _scores_file(h5py, tmp_path / "other.h5")

    def virtual(f, name):
        layout = h5py.VirtualLayout(shape=SCORES.shape, dtype=np.float64)
        layout[:] = h5py.VirtualSource(str(other), "scores", shape=SCORES.shape)
        f.create_virtual_dataset(name, layout)

    h5 = _scores_file(h5py, tmp_path / "vds.h5", scores=virtual)
    _refused_by_apply(capsys, tmp_path, h5, r"/scores is a virtual dataset")


def test_hdf5_soft_link_out_of_the_layout_is_refused(tmp_path, capsys):
    h5py = pytest.importorskip("h5py")

    def soft(f, name):
        f["elsewhere/data"] = SCORES
        f[name] = h5py.SoftLink("/elsewhere/data")

    h5 = _scores_file(h5py, tmp_path / "soft.h5", scores=soft)
    _refused_by_apply(capsys, tmp_path, h5, r"/scores is a soft link \(to /elsewhere/data\)")


def test_hdf5_other_filters_and_reference_values_are_refused(tmp_path):
    h5py = pytest.importorskip("h5py")

    def scaleoffset(f, name):
        f.create_dataset(name, data=SCORES, scaleoffset=3)

    h5 = _scores_file(h5py, tmp_path / "filter.h5", scores=scaleoffset)
    with pytest.raises(ValueError, match=r"/scores uses HDF5 filter 6 \(deflate, fletcher32"):
        read_scores(h5)

    def references(f, name):
        f["target"] = SCORES
        f.create_dataset(name, data=[f["target"].ref] * 3, dtype=h5py.ref_dtype)

    h5 = _scores_file(h5py, tmp_path / "refs.h5", **{"ID/row_ids": references})
    with pytest.raises(ValueError, match=r"/ID/row_ids holds object values, not strings"):
        read_scores(h5)


def _declared(tmp_path, h5py, n, written=False):
    """A small file whose /scores declares an n x n chunked, compressed matrix of which at
    most one chunk is written (the rest are fill values).
    """
    ids = np.array([f"id{i:08d}".encode() for i in range(n)])

    def huge(f, name):
        ds = f.create_dataset(
            name, shape=(n, n), dtype=np.float64, chunks=(64, 64), compression="gzip"
        )
        if written:
            ds[:64, :64] = 1.0

    def mask(f, name):
        f.create_dataset(name, shape=(n, n), dtype=np.uint8, chunks=(64, 64), compression="gzip")

    return _scores_file(
        h5py,
        tmp_path / f"declared{n}.h5",
        **{
            "ID/row_ids": lambda f, name: f.create_dataset(name, data=ids, compression="gzip"),
            "ID/column_ids": lambda f, name: f.create_dataset(name, data=ids, compression="gzip"),
            "scores": huge,
            "score_mask": mask,
        },
    )


def test_hdf5_declared_sizes_are_bounded_before_anything_is_allocated(tmp_path):
    """The issue's reproductions: a file of a few hundred KB declaring 40,000 x 40,000 scores
    ran out of memory; one declaring less than the bound but far more than its stored bytes
    can hold is refused too. Each read runs in a child under CPU and memory limits.
    """
    h5py = pytest.importorskip("h5py")
    from tests._support.limits import expect_error, run_limited

    big = _declared(tmp_path, h5py, 40_000)
    assert big.stat().st_size < 1_000_000
    outcome = run_limited(read_scores, big, cpu_seconds=20, memory_mb=400)
    expect_error(outcome, r"/scores declares 40000 x 40000 values \(11\.9 GiB\), more than")
    mid = _declared(tmp_path, h5py, 10_000, written=True)
    outcome = run_limited(read_scores, mid, cpu_seconds=20, memory_mb=400)
    expect_error(outcome, r"/scores declares 10000 x 10000 values .* but stores \d+ bytes")


# ----------------------------------------------------- ids of binary files are checked as text


FORGED = b"t0001\nforged t9999"


@pytest.mark.parametrize("bad", [FORGED, b"m 2", b"m,2", b"#m", b"m\x7f", b"", b"m\x00x"], ids=repr)
def test_hdf5_ids_are_checked_as_text_ids(tmp_path, capsys, bad):
    """An id that a text file could not hold as one field would write a forged record (or a
    line of four fields) into the text output: refused, naming the dataset and the index.
    """
    h5py = pytest.importorskip("h5py")

    def forged(f, name):
        f.create_dataset(name, data=np.array([b"m1", bad, b"m3"], dtype="S24"))

    h5 = _scores_file(h5py, tmp_path / "forged.h5", **{"ID/row_ids": forged})
    if bad == b"":  # fixed-length strings: an empty id reads as padding
        _refused_by_apply(capsys, tmp_path, h5, r"/ID/row_ids\[1\]: id '' is not a valid id")
    else:
        _refused_by_apply(capsys, tmp_path, h5, r"/ID/row_ids\[1\]: id .* is not a valid id")


@pytest.mark.parametrize(
    "ids, bad",
    [
        ([b"m1", b"\xc3", b"\xa9x"], 1),  # "\xc3\xa9" is UTF-8 only across the two ids
        ([b"m1", b"\xc3\xa9", b"\xa9x"], 2),
        ([b"\xe4\xb8\xad", b"m\xff", b"\xe4"], 1),
        ([b"\xe4\xb8\xad", b"m", b"x\xe4\xb8"], 2),
    ],
)
def test_hdf5_ids_are_utf8_each_on_its_own(tmp_path, ids, bad):
    """The ids' bytes are checked as one buffer: an id is refused even where its bytes and the
    next id's make UTF-8 together, and the message names the first id that is not UTF-8.
    """
    h5py = pytest.importorskip("h5py")

    def forged(f, name):
        f.create_dataset(name, data=np.array(ids, dtype="S8"))

    h5 = _scores_file(h5py, tmp_path / "bad.h5", **{"ID/row_ids": forged})
    with pytest.raises(FileFormatError, match=rf"/ID/row_ids\[{bad}\]: id is not UTF-8 text"):
        read_scores(h5)


def test_parquet_ids_are_checked_as_text_ids(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    models = ["m1", "m2", FORGED.decode(), "m4"]
    pq.write_table(
        pa.table({"model": models, "test": ["a", "b", "c", "d"], "score": [1.0, 2, 3, 4]}),
        tmp_path / "forged.parquet",
    )
    _refused_by_apply(
        capsys,
        tmp_path,
        tmp_path / "forged.parquet",
        r"forged\.parquet: row 3: model column 'model': id 't0001\\nforged t9999' is not a valid",
    )
    pq.write_table(
        pa.table({"model": ["m1", "m 2"], "test": ["a", "b"], "score": [1.0, 2]}),
        tmp_path / "space.parquet",
    )
    with pytest.raises(ValueError, match=r"row 2: model column 'model': id 'm 2' is not"):
        read_scores(tmp_path / "space.parquet")


def test_parquet_id_column_of_lists_is_a_clear_error(tmp_path, capsys):
    """The ArrowNotImplementedError of pyarrow came out as a traceback."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(
        pa.table({"model": [["m1"], ["m2"]], "test": ["a", "b"], "score": [1.0, 2.0]}),
        tmp_path / "lists.parquet",
    )
    _refused_by_apply(
        capsys,
        tmp_path,
        tmp_path / "lists.parquet",
        r"lists\.parquet: the model column 'model' holds list<element: string>: ids are strings",
    )


def _traced(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, its peak of traced memory (NumPy's included) in ``_traced.peak``."""
    tracemalloc.start()
    try:
        return fn(*args, **kwargs)
    finally:
        _traced.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def test_one_long_id_among_short_ones_is_read_and_joined(tmp_path):
    """Ids are held by their own length: a parquet and an HDF5 key with one id of 4,000 bytes
    among 70,000 short ones (267 MiB at the width of the longest) are read and joined in a few
    MiB. Only fixed-width arrays (:func:`focal.io.read_scores`) refuse them, naming the row.
    """
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    h5py = pytest.importorskip("h5py")
    from focal.io.engine import read_aligned

    n = 70_000
    segments = [f"seg{i}" for i in range(n)]
    segments[40_001] = "x" * 4000
    labels = np.arange(n) % 3 == 0
    pq.write_table(
        pa.table({"model": ["m"] * n, "test": segments, "label": labels}), tmp_path / "k.parquet"
    )
    with h5py.File(tmp_path / "k.h5", "w") as f:
        f["trial_mask"] = np.where(labels, 1, -1).astype(np.int8)[None, :]
        f["ID/row_ids"] = np.array([b"m"], dtype=h5py.string_dtype())
        f.create_dataset("ID/column_ids", data=segments, dtype=h5py.string_dtype())
    order = np.random.default_rng(3).permutation(n)
    scores = tmp_path / "scores.txt"
    scores.write_text("".join(f"m {segments[i]} {i}\n" for i in order))
    for key in ("k.parquet", "k.h5"):
        X, y, _, _, _ = _traced(read_aligned, [scores], tmp_path / key, ids=False)
        assert _traced.peak < 64 << 20, key  # the 267 MiB padded copy was never made
        assert np.array_equal(X[:, 0], np.arange(n)) and np.array_equal(y, labels)
    message = r"k\.parquet:40002: an id of 4000 bytes among much shorter ones"
    with pytest.raises(FileFormatError, match=message):
        read_key(tmp_path / "k.parquet")
    with pytest.raises(FileFormatError, match=r"k\.h5:40002: an id of 4000 bytes"):
        read_key(tmp_path / "k.h5")
