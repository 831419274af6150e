"""A file's records kept as the text they were read from: sliced, joined, compared and turned
into id arrays exactly as the fixed-width id arrays are, with and without pyarrow.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal._text import arrow as _arrow
from focal.io import iter_score_chunks, read_scores, write_scores
from focal.io._records import Records
from focal.io.engine import pieces
from focal.io.formats import score_layout
from focal.io.stream import _concat
from focal.workflows import apply_to_files


@pytest.fixture(params=["pyarrow", "numpy"])
def engine(request, monkeypatch):
    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 0)
        monkeypatch.setattr(_arrow, "_MIN_TOKENS", 1)
    else:
        monkeypatch.setattr(_arrow, "_DISABLED", True)
    return request.param


def _records_of(folder, text, block_bytes=1 << 20, name="a.scores"):
    """The Records of each block of a score file of this text."""
    path = folder / name
    path.write_bytes(text.encode())
    return [p[0] for p in pieces(path, score_layout(None), text_ids=True, block_bytes=block_bytes)]


def test_records_give_the_ids_the_reader_gives(tmp_path):
    text = "".join(f"m{i % 7} t{i:04d}{'é' * (i % 3)} {i * 0.5}\n" for i in range(300))
    blocks = _records_of(tmp_path, text, block_bytes=500)
    assert len(blocks) > 5 and all(isinstance(r, Records) for r in blocks)
    scores = read_scores(tmp_path / "a.scores")
    models, tests = Records.concat(blocks).ids()
    np.testing.assert_array_equal(models, scores.models)
    np.testing.assert_array_equal(tests, scores.tests)


@pytest.mark.parametrize(
    "line",
    [
        "m1\tt1 0.5",  # a tab between the ids
        "m1  t1 0.5",  # two spaces
        "m1 t1\t0.5",  # a tab after the test id
        "m1,t1,0.5",
    ],
)
def test_other_separators_hold_the_same_trials(tmp_path, engine, line):
    """Text that differs only in its separators: the same trials (compared as id arrays)."""
    text = "".join(f"m0 t{i} 0.25\n" for i in range(600))
    (a,) = _records_of(tmp_path, text + "m1 t1 0.5\n")
    (b,) = _records_of(tmp_path, text + line + "\n", name="b.scores")
    (c,) = _records_of(tmp_path, text + "m1 t2 0.5\n", name="c.scores")
    assert a.same_trials(b) and b.same_trials(a)
    assert not b.same_trials(c)


def test_too_long_ids_are_refused_with_their_line(tmp_path, monkeypatch):
    import focal._text.blocks as blocks

    monkeypatch.setattr(blocks, "MAX_ID_LENGTH", 5)
    write_scores(tmp_path / "a", ["m0", "model123"], ["t0", "t1"], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"a:2: id longer than 5 characters"):
        list(iter_score_chunks([tmp_path / "a", tmp_path / "a"]))


@given(
    cuts_a=st.lists(st.integers(1, 59), max_size=5),
    cuts_b=st.lists(st.integers(1, 59), max_size=5),
    differ=st.one_of(st.none(), st.integers(0, 59)),
)
@settings(max_examples=40, deadline=None)
def test_slices_joins_and_comparisons_agree_with_id_arrays(
    tmp_path_factory, cuts_a, cuts_b, differ
):
    """Two pieces over the same 60 records, cut into parts at different places (as two files'
    blocks are), compare equal exactly when their id arrays do.
    """
    lines = [f"spk{i % 9} seg{i:03d} {i}.5\n" for i in range(60)]
    other = list(lines)
    if differ is not None:  # same length, one byte changed; or the space moved
        other[differ] = (
            f"spk{differ % 9} seh{differ:03d} 1\n"
            if differ % 2
            else (f"spk{differ % 9}s eg{differ:03d} 1\n")
        )
    (a,) = _records_of(tmp_path_factory.mktemp("a"), "".join(lines))
    (b,) = _records_of(tmp_path_factory.mktemp("b"), "".join(other))

    def parts(records, cuts):
        edges = [0, *sorted(set(cuts)), 60]
        return _concat([records[i:j] for i, j in zip(edges[:-1], edges[1:]) if i < j])

    pa_, pb = parts(a, cuts_a), parts(b, cuts_b)
    assert isinstance(pa_, Records) and len(pa_) == 60
    expected = all(np.array_equal(x, y) for x, y in zip(a.ids(), b.ids()))
    for flag in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_arrow, "_DISABLED", flag)
            mp.setattr(_arrow, "_IMPORT_AFTER", 0)
            mp.setattr(_arrow, "_MIN_TOKENS", 1)
            assert pa_.same_trials(pb) == expected
    np.testing.assert_array_equal(pa_.ids()[1], a.ids()[1])
    np.testing.assert_array_equal(pa_[7:45].ids()[0], a.ids()[0][7:45])


def test_streams_of_differently_separated_files_agree(tmp_path, engine):
    """The first file with single spaces (ids as text), the second with tabs in some blocks
    (id arrays): the same trials, so no error, and the output is what the ids say.
    """
    n = 2000
    models = np.array([f"spk{i % 31:02d}" for i in range(n)])
    tests = np.array([f"seg{i:05d}" for i in range(n)])
    x = np.linspace(-3, 3, n)
    write_scores(tmp_path / "a", models, tests, x)
    lines = (tmp_path / "a").read_text().splitlines()
    tabbed = [line.replace(" ", "\t") if (i // 100) % 2 else line for i, line in enumerate(lines)]
    (tmp_path / "b").write_text("\n".join(tabbed) + "\n")
    chunks = list(
        iter_score_chunks([tmp_path / "a", tmp_path / "b"], chunk_size=333, block_bytes=1000)
    )
    assert np.concatenate([c.ids[1] for c in chunks]).tolist() == [t.encode() for t in tests]
    apply_to_files(
        lambda X: X.sum(axis=1),
        [tmp_path / "a", tmp_path / "b"],
        tmp_path / "out",
        chunk_size=333,
        block_bytes=1000,
    )
    write_scores(tmp_path / "ref", models, tests, 2 * x)
    assert (tmp_path / "out").read_bytes() == (tmp_path / "ref").read_bytes()


def test_a_changed_id_is_found_with_its_line(tmp_path, engine):
    n = 3000
    models = np.array([f"spk{i % 31:02d}" for i in range(n)])
    tests = np.array([f"seg{i:05d}" for i in range(n)])
    write_scores(tmp_path / "a", models, tests, np.zeros(n))
    changed = tests.copy()
    changed[2345] = "seg99999"  # same length: only the bytes tell
    write_scores(tmp_path / "b", models, changed, np.ones(n))
    with pytest.raises(
        ValueError,
        match=r"b:2346: trial \(spk20, seg99999\) is not the trial "
        r"\(spk20, seg02345\) of .*a:2346",
    ):
        list(iter_score_chunks([tmp_path / "a", tmp_path / "b"], chunk_size=1000, block_bytes=4096))
