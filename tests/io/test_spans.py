"""Trial ids kept as the text they were read from: sliced, joined, compared and turned into id
arrays exactly as the fixed-width id arrays are, with and without pyarrow.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal._text import arrow as _arrow
from focal._text.blocks import iter_blocks
from focal._text.fields import split_fields
from focal.io import iter_score_chunks, write_scores
from focal.io._spans import TrialSpans, concat_ids, equal_ids, ids_tuple, trial_spans
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


def _spans_of(folder, text, block_bytes=1 << 20):
    """(TrialSpans, fields) of each block of a 'model test score' text."""
    path = folder / "spans.scores"
    path.write_bytes(text.encode())
    out = []
    for block in iter_blocks(path, block_bytes):
        fields = split_fields(block, 3, "'model test score'")
        out.append((trial_spans(fields, 0, 1), fields))
    return out


def test_spans_give_the_ids_the_fields_give(tmp_path):
    text = "".join(f"m{i % 7} t{i:04d}{'é' * (i % 3)} {i * 0.5}\n" for i in range(300))
    for spans, fields in _spans_of(tmp_path, text, block_bytes=500):
        models, tests = spans.ids()
        np.testing.assert_array_equal(models, fields.ids(0))
        np.testing.assert_array_equal(tests, fields.ids(1))


@pytest.mark.parametrize(
    "line",
    [
        "m1\tt1 0.5",  # a tab between the ids
        "m1  t1 0.5",  # two spaces
        "m1 t1\t0.5",  # a tab after the test id: the writer copies 'model test ' as read
        "m1,t1,0.5",
    ],
)
def test_other_separators_keep_the_id_arrays(tmp_path, line):
    ((spans, fields),) = _spans_of(tmp_path, f"m0 t0 0.25\n{line}\n")
    assert spans is None
    assert fields.ids(1).tolist() == [b"t0", b"t1"]


def test_spans_refuse_too_long_ids(tmp_path, monkeypatch):
    import focal._text.blocks as blocks

    monkeypatch.setattr(blocks, "MAX_ID_LENGTH", 5)
    ((spans, _),) = _spans_of(tmp_path, "m0 t0 1\nmodel123 t1 2\n")
    assert spans is None  # the caller's Fields.ids refuses the long id with its line


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
    ((a, _),) = _spans_of(tmp_path_factory.mktemp("a"), "".join(lines))
    ((b, _),) = _spans_of(tmp_path_factory.mktemp("b"), "".join(other))

    def parts(spans, cuts):
        edges = [0, *sorted(set(cuts)), 60]
        return concat_ids([spans[i:j] for i, j in zip(edges[:-1], edges[1:]) if i < j])

    pa_, pb = parts(a, cuts_a), parts(b, cuts_b)
    assert isinstance(pa_, TrialSpans) and len(pa_) == 60
    expected = all(np.array_equal(x, y) for x, y in zip(a.ids(), b.ids()))
    for flag in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_arrow, "_DISABLED", flag)
            mp.setattr(_arrow, "_IMPORT_AFTER", 0)
            mp.setattr(_arrow, "_MIN_TOKENS", 1)
            assert equal_ids(pa_, pb) == expected
            assert equal_ids(pa_, ids_tuple(pb)) == expected  # mixed: arrays compared
    np.testing.assert_array_equal(pa_.ids()[1], a.ids()[1])
    np.testing.assert_array_equal(pa_[7:45].ids()[0], a.ids()[0][7:45])


def test_mixed_pieces_join_as_id_arrays(tmp_path):
    ((a, _),) = _spans_of(tmp_path, "m1 t1 1\nm2 t2 2\n")
    joined = concat_ids([a, (np.array([b"m3"]), np.array([b"t3long"]))])
    assert isinstance(joined, tuple)
    assert joined[1].tolist() == [b"t1", b"t2", b"t3long"]


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
