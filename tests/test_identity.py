"""Identity end to end: systems, classes and the target label keep their meaning from the files
to the model to its output, or the mismatch is a clear error (never a silently wrong number).
"""

import json
import pathlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline

import focal
import focal.io.binary
import focal.io.multiclass
from focal import LogisticFusion, MulticlassFusion, PAVCalibrator
from focal.cli import main
from focal.io import (
    align_multiclass,
    read_albayzin_scores,
    read_multiclass_key,
    read_multiclass_scores,
    write_multiclass_scores,
)
from focal.metrics import albayzin_measures
from focal.models.schema import input_schema
from focal.workflows import apply_model, train_fusion, train_multiclass_fusion

ROOT = pathlib.Path(__file__).resolve().parent.parent / "data_samples"
LID = ROOT / "language_recognition"
SPK = ROOT / "speaker_detection"
PERM = [3, 0, 6, 1, 5, 2, 4]  # "segment Galician Basque OOS Catalan Spanish English Portuguese"


def generic_copies(folder, split, k, perm=None):
    """System k's Albayzin open-set file of ``split`` in the generic format, its columns (and
    header) in the order ``perm``.
    """
    a = read_albayzin_scores(LID / f"{split}_sys{k}_open.txt")
    order = list(range(len(a.classes))) if perm is None else perm
    if perm is not None:
        folder = folder / "permuted"
        folder.mkdir(exist_ok=True)
    path = folder / f"{split}_sys{k}.txt"
    write_multiclass_scores(path, a.segments, a.llh[:, order], [a.classes[i] for i in order])
    return path


def c_mce(path):
    """C_mce (open set) of a written file against the eval key, classes matched by name."""
    llh, y, _, _ = align_multiclass(
        read_multiclass_key(LID / "eval.key"), read_multiclass_scores(path)
    )
    return albayzin_measures(llh, y, open_set=True).c_mce


# ---------------------------------------------------------------------- the three reproductions


@pytest.mark.parametrize(
    "mode, systems", [("calibration", [1]), ("full", [1, 2]), ("scalar", [1, 2, 3])]
)
def test_a_permuted_header_is_applied_to_the_right_columns(tmp_path, mode, systems):
    dev = [generic_copies(tmp_path, "dev", k) for k in systems]
    model = train_multiclass_fusion(dev, LID / "dev.key", mode=mode).model
    focal.save(model, tmp_path / "m.json")
    model = focal.load(tmp_path / "m.json")
    straight = [generic_copies(tmp_path, "eval", k) for k in systems]
    permuted = [generic_copies(tmp_path, "eval", k, PERM) for k in systems]
    apply_model(model, straight, tmp_path / "a.txt")
    apply_model(model, permuted, tmp_path / "b.txt")
    assert abs(c_mce(tmp_path / "a.txt") - c_mce(tmp_path / "b.txt")) <= 1e-12
    # each file may list the classes in its own order
    mixed = [permuted[0]] + straight[1:]
    apply_model(model, mixed, tmp_path / "c.txt")
    assert abs(c_mce(tmp_path / "a.txt") - c_mce(tmp_path / "c.txt")) <= 1e-12


def test_class_names_as_labels_train_against_the_right_columns():
    """Fitted with language names, MulticlassFusion pairs them with the columns by name (the
    files' order), as with indices; without the order it refuses instead of sorting.
    """
    systems = [read_albayzin_scores(LID / f"dev_sys{k}_open.txt") for k in (1, 2, 3)]
    X, y, _, classes = align_multiclass(read_multiclass_key(LID / "dev.key"), *systems)
    names = np.array(classes)[y]
    with pytest.raises(ValueError, match="pass class_names"):
        MulticlassFusion().fit(X, names)
    by_name = MulticlassFusion(class_names=list(classes)).fit(X, names)
    by_index = MulticlassFusion().fit(X, y)
    np.testing.assert_array_equal(by_name.transform(X), by_index.transform(X))
    accuracy = (by_name.predict(X) == names).mean()
    assert accuracy == (by_index.predict(X) == y).mean() > 0.6


def test_string_target_labels_need_pos_label_and_then_give_the_01_weights():
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.3
    X = rng.normal(size=(400, 2)) + 1.5 * y[:, None]
    labels = np.where(y, "genuine", "impostor")  # the target sorts first
    with pytest.raises(ValueError, match="'genuine', 'impostor'"):
        LogisticFusion().fit(X, labels)
    np.testing.assert_array_equal(
        LogisticFusion(pos_label="genuine").fit(X, labels).coef_,
        LogisticFusion().fit(X, y.astype(int)).coef_,
    )


# ------------------------------------------------------------------------- adversarial files


def test_a_generic_file_without_header_is_refused(tmp_path):
    path = tmp_path / "noheader.txt"
    path.write_text("seg1 -1.0 0.5 2.0\nseg2 0.1 0.2 0.3\n")
    with pytest.raises(
        ValueError,
        match=r"noheader.txt:1: the class name\(s\) -1.0, 0.5, 2.0 "
        r"are numbers",
    ):
        read_multiclass_scores(path)
    model = MulticlassFusion(mode="calibration").fit(np.eye(3).repeat(5, 0) * 3, np.arange(15) // 5)
    with pytest.raises(ValueError, match="noheader.txt:1"):
        apply_model(model, [path], tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


def test_class_names_differing_only_in_case_are_refused(tmp_path):
    path = tmp_path / "case.txt"
    path.write_text("segment en EN fr\ns1 0 1 2\n")
    with pytest.raises(ValueError, match=r"case.txt:1: class 'EN' and 'en' differ only in case"):
        read_multiclass_scores(path)


def test_apply_refuses_files_of_mixed_task_or_condition(tmp_path):
    model = train_multiclass_fusion(
        [LID / "dev_sys1_open.txt", LID / "dev_sys2_open.txt"], LID / "dev.key"
    ).model
    first, second = tmp_path / "eval_sys1_open.txt", tmp_path / "eval_sys2_open.txt"
    first.write_bytes((LID / "eval_sys1_open.txt").read_bytes())
    second.write_bytes((LID / "eval_sys2_closed.txt").read_bytes())  # named like the others
    with pytest.raises(
        ValueError,
        match=r"eval_sys2_open.txt: Plenty Closed differs from .*"
        r"eval_sys1_open.txt's Plenty Open",
    ):
        apply_model(model, [first, second], tmp_path / "out.txt")
    a = read_albayzin_scores(LID / "eval_sys2_open.txt")
    write_multiclass_scores(second, a.segments, a.llh, a.classes)
    with pytest.raises(ValueError, match="generic format differs"):
        apply_model(model, [first, second], tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


# ---------------------------------------------------------------- the schema, checked on apply


def test_apply_checks_the_systems_by_name(tmp_path):
    dev = [SPK / f"dev_sys{k}.scores" for k in (1, 2, 3)]
    model = train_fusion(dev, SPK / "dev.key").model
    assert input_schema(model).systems == ("sys1", "sys2", "sys3")
    evals = [SPK / f"eval_sys{k}.scores" for k in (1, 2, 3)]
    n = apply_model(model, evals, tmp_path / "ok.scores", align=True)
    assert n > 0
    with pytest.raises(
        ValueError,
        match="order sys2, sys1, sys3; the model takes them in the order sys1, sys2, sys3",
    ):
        apply_model(model, [evals[1], evals[0], evals[2]], tmp_path / "o.scores", align=True)
    renamed = tmp_path / "eval_sys9.scores"
    renamed.write_bytes(evals[2].read_bytes())
    with pytest.raises(
        ValueError,
        match=r"'sys9' .*eval_sys9.scores.* not in the model; the "
        r"model's system\(s\) 'sys3' missing",
    ):
        apply_model(model, [evals[0], evals[1], renamed], tmp_path / "o.scores", align=True)
    with pytest.raises(ValueError, match=r"takes 3 system\(s\) \(sys1, sys2, sys3\), 2 score"):
        apply_model(model, evals[:2], tmp_path / "o.scores")


def test_apply_checks_the_classes_by_name(tmp_path):
    model = train_multiclass_fusion(
        [generic_copies(tmp_path, "dev", 1)], LID / "dev.key", mode="calibration"
    ).model
    a = read_albayzin_scores(LID / "eval_sys1_open.txt")
    names = list(a.classes)
    for label, cols, match in [
        ("missing", names[:-1], r"'OOS' missing"),
        ("extra", names + ["Klingon"], r"'Klingon' not among them"),
        (
            "renamed",
            names[:-1] + ["Other"],
            r"'Other' not among them; 'OOS' "
            r"missing",
        ),
    ]:
        path = tmp_path / f"{label}.txt"
        llh = np.c_[a.llh, a.llh[:, :1]][:, : len(cols)]
        write_multiclass_scores(path, a.segments, llh, cols)
        with pytest.raises(
            ValueError, match=f"{label}.txt: classes .* differ from the model's Basque, .*{match}"
        ):
            apply_model(model, [path], tmp_path / "o.txt")


def count_parses(monkeypatch):
    """Count, per path, how often a reader starts reading a file (iter_blocks)."""
    counts = {}
    for module in (focal.io.binary, focal.io.multiclass):
        original = module.iter_blocks

        def counting(path, *args, _original=original, **kwargs):
            counts[str(path)] = counts.get(str(path), 0) + 1
            return _original(path, *args, **kwargs)

        monkeypatch.setattr(module, "iter_blocks", counting)
    return counts


@pytest.mark.parametrize("align", [False, True])
def test_apply_parses_each_input_file_once(tmp_path, monkeypatch, align):
    lid = [LID / f"eval_sys{k}_open.txt" for k in (1, 2, 3)]
    model = train_multiclass_fusion(
        [LID / f"dev_sys{k}_open.txt" for k in (1, 2, 3)], LID / "dev.key"
    ).model
    spk = [SPK / f"eval_sys{k}.scores" for k in (1, 2, 3)]
    fusion = train_fusion([SPK / f"dev_sys{k}.scores" for k in (1, 2, 3)], SPK / "dev.key").model
    focal.save(model, tmp_path / "lid.json")
    focal.save(fusion, tmp_path / "spk.json")
    counts = count_parses(monkeypatch)
    extra = ["--align"] if align else []
    assert (
        main(
            [
                "apply",
                str(tmp_path / "lid.json"),
                *map(str, lid),
                "-o",
                str(tmp_path / "lid.out"),
                *extra,
            ]
        )
        == 0
    )
    assert counts == {str(p): 1 for p in lid}
    counts.clear()
    if not align:  # the speaker files list the trials in different orders: write them in one
        X, models, tests = focal.io.align_scores(*map(focal.io.read_scores, spk))
        spk = [tmp_path / f"eval_sys{k + 1}.scores" for k in range(3)]
        for k, path in enumerate(spk):
            focal.io.write_scores(path, models, tests, X[:, k])
        counts.clear()
    assert (
        main(
            [
                "apply",
                str(tmp_path / "spk.json"),
                *map(str, spk),
                "-o",
                str(tmp_path / "spk.out"),
                *extra,
            ]
        )
        == 0
    )
    assert counts == {str(p): 1 for p in spk}


def test_non_finite_outputs_are_refused_with_the_line(tmp_path):
    X = np.r_[np.linspace(-2, 1, 50), np.linspace(-1, 2, 50)]
    y = np.r_[np.zeros(50), np.ones(50)]
    unbounded = PAVCalibrator(pseudo_count=0).fit(X, y)
    path = tmp_path / "s.scores"
    path.write_text("m t1 0.0\nm t2 5.0\nm t3 0.5\n")
    out = tmp_path / "o.scores"
    # an unbounded PAV gives +inf by design: written as such, unless refused by the caller
    apply_model(unbounded, [path], out)
    assert out.read_text().splitlines()[1] == "m t2 inf"
    with pytest.raises(
        ValueError,
        match=r"s.scores:2: transform returned inf for trial "
        r"\(m, t2\)",
    ):
        apply_model(unbounded, [path], tmp_path / "o2.scores", allow_infinite=False)
    assert not (tmp_path / "o2.scores").exists()
    # a multiclass output that overflows
    model = MulticlassFusion(mode="calibration").fit(np.eye(3).repeat(5, 0) * 3, np.arange(15) // 5)
    big = tmp_path / "big.txt"
    big.write_text("segment c0 c1 c2\ns1 0 1 2\ns2 1e308 -1e308 0\n")
    with pytest.raises(ValueError, match=r"big.txt:3: transform returned"):
        apply_model(model, [big], tmp_path / "o3.txt")


# --------------------------------------------------------------------------- the model file


def test_the_model_file_records_the_schema_and_apply_uses_it(tmp_path):
    dev = [LID / f"dev_sys{k}_closed.txt" for k in (1, 2)]
    fit = train_multiclass_fusion(dev, LID / "dev.key")
    focal.save(fit.model, tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["version"] == 2
    assert doc["input"] == {
        "kind": "multiclass",
        "n_systems": 2,
        "systems": ["sys1", "sys2"],
        "classes": ["Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish", "OOS"],
        "format": "albayzin",
        "task": "Plenty",
        "condition": "Closed",
    }
    model = focal.load(tmp_path / "m.json")
    assert list(model.classes_) == doc["input"]["classes"]
    assert model.feature_names_in_[7] == "sys2:Basque"
    # the training prior of closed-set files: Albayzin's (eq. 2), out-of-set ignored
    assert model.prior_[-1] == 0 and np.allclose(model.prior_[:-1], 1 / 6)
    written = tmp_path / "out.txt"
    apply_model(model, [LID / f"eval_sys{k}_closed.txt" for k in (1, 2)], written, condition="Open")
    assert read_albayzin_scores(written).condition == "Open"


def test_cli_pos_label_reads_any_key_labels(tmp_path, capsys):
    words = tmp_path / "dev.key"
    text = (SPK / "dev.key").read_text()
    words.write_text(text.replace("nontarget", "impostor").replace(" target", " genuine"))
    dev = [str(SPK / f"dev_sys{k}.scores") for k in (1, 2)]
    assert (
        main(["train", "--scores", *dev, "--key", str(words), "-o", str(tmp_path / "a.json")]) == 1
    )
    assert "unknown label 'genuine'" in capsys.readouterr().err
    assert (
        main(
            [
                "train",
                "--scores",
                *dev,
                "--key",
                str(words),
                "--pos-label",
                "genuine",
                "-o",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "--scores",
                *dev,
                "--key",
                str(SPK / "dev.key"),
                "-o",
                str(tmp_path / "b.json"),
            ]
        )
        == 0
    )
    a, b = focal.load(tmp_path / "a.json"), focal.load(tmp_path / "b.json")
    np.testing.assert_array_equal(a.coef_, b.coef_)
    bad = tmp_path / "bad.key"
    bad.write_text(text.replace("nontarget", "impostor", 1).replace(" target", " genuine"))
    assert main(["evaluate", dev[0], "--key", str(bad), "--pos-label", "genuine"]) == 1
    err = capsys.readouterr().err
    assert "bad.key:" in err and "neither the target label 'genuine'" in err


def test_system_names_come_from_what_tells_the_files_apart():
    from focal.models.schema import system_names

    assert system_names(["d/dev_sys1.scores", "d/dev_sys2.scores"]) == ("sys1", "sys2")
    assert system_names(["e/eval_sys1_open.txt", "f/eval_sys2_open.txt"]) == ("sys1", "sys2")
    assert system_names(["x/dev.sys1.scores", "x/dev.sys2.scores"]) == ("sys1", "sys2")
    assert system_names(["dev/a/scores.txt", "dev/b/scores.txt"]) == ("a", "b")
    assert system_names(["sys1.s", "sys1_v2.s"]) == ("sys1", "sys1_v2")
    assert system_names(["only_one.scores"]) == ("only_one",)


def test_the_writer_refuses_headers_the_reader_would_refuse(tmp_path):
    with pytest.raises(ValueError, match="class name\\(s\\) 1, 2 are numbers"):
        write_multiclass_scores(tmp_path / "x.txt", np.array(["s"]), np.zeros((1, 2)), ["1", "2"])
    with pytest.raises(ValueError, match="'EN' and 'en' differ only in case"):
        write_multiclass_scores(tmp_path / "x.txt", np.array(["s"]), np.zeros((1, 2)), ["en", "EN"])


def test_a_model_fitted_again_drops_its_stale_schema(tmp_path):
    fit = train_fusion([SPK / f"dev_sys{k}.scores" for k in (1, 2, 3)], SPK / "dev.key")
    model = fit.model
    assert input_schema(model).format == "bosaris"
    X = np.random.default_rng(0).normal(size=(40, 2))
    model.fit(X, np.arange(40) % 2)
    schema = input_schema(model)
    assert schema.n_systems == 2 and schema.systems is None and schema.format is None
    focal.save(model, tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["input"]["n_systems"] == 2


@pytest.fixture(scope="module")
def lid_model_and_reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lid")
    dev = [generic_copies(folder, "dev", k) for k in (1, 2)]
    model = train_multiclass_fusion(dev, LID / "dev.key", mode="full").model
    apply_model(model, [generic_copies(folder, "eval", k) for k in (1, 2)], folder / "ref.txt")
    return model, read_multiclass_scores(folder / "ref.txt")


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.permutations(range(7)), st.permutations(range(7)))
def test_any_header_order_of_any_file_gives_the_same_output(
    tmp_path, lid_model_and_reference, first, second
):
    model, reference = lid_model_and_reference
    folder = tmp_path / f"{''.join(map(str, first))}_{''.join(map(str, second))}"
    folder.mkdir(exist_ok=True)
    paths = []
    for k, perm in ((1, list(first)), (2, list(second))):
        a = read_albayzin_scores(LID / f"eval_sys{k}_open.txt")
        paths.append(folder / f"eval_sys{k}.txt")
        write_multiclass_scores(paths[-1], a.segments, a.llh[:, perm], [a.classes[i] for i in perm])
    apply_model(model, paths, folder / "out.txt")
    out = read_multiclass_scores(folder / "out.txt")
    assert out.classes == reference.classes
    np.testing.assert_array_equal(out.llh, reference.llh)  # the same columns, bit for bit


def test_a_model_without_class_names_takes_the_first_files_order(tmp_path):
    """Fitted on arrays (classes 0..N-1), the model pairs columns with the first file's header;
    the other files' columns are matched to it by name, and a file of other classes is refused.
    """
    systems = [read_albayzin_scores(LID / f"dev_sys{k}_open.txt") for k in (1, 2)]
    X, y, _, _ = align_multiclass(read_multiclass_key(LID / "dev.key"), *systems)
    model = MulticlassFusion().fit(X, y)
    straight = [generic_copies(tmp_path, "eval", k) for k in (1, 2)]
    second = generic_copies(tmp_path, "eval", 2, PERM)
    apply_model(model, straight, tmp_path / "a.txt")
    apply_model(model, [straight[0], second], tmp_path / "b.txt")
    np.testing.assert_array_equal(
        read_multiclass_scores(tmp_path / "a.txt").llh,
        read_multiclass_scores(tmp_path / "b.txt").llh,
    )
    a = read_albayzin_scores(LID / "eval_sys2_open.txt")
    other = tmp_path / "other" / "eval_sys2.txt"
    other.parent.mkdir()
    write_multiclass_scores(other, a.segments, a.llh, list(a.classes[:-1]) + ["Other"])
    with pytest.raises(
        ValueError,
        match=r"other/eval_sys2.txt: classes .* differ from .*"
        r"eval_sys1.txt's Basque.*'Other' not among them",
    ):
        apply_model(model, [straight[0], other], tmp_path / "c.txt")


# -------------------------------------------- data frames in every door (issue 29, item 2)


def _frames_and_models():
    """(name, model fitted on a frame, the frame) of a binary fusion, a fusion followed by
    PAV, a multiclass fusion and a Gaussian back-end.
    """
    import pandas as pd

    from focal import GaussianBackend

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    frame = pd.DataFrame({"sys1": rng.normal(size=300) + y, "sys2": rng.normal(size=300) + 2 * y})
    yc = rng.integers(0, 3, 300)
    llh = rng.normal(size=(300, 6)) + np.tile(np.eye(3)[yc], 2)
    columns = [f"{s}:{c}" for s in ("a", "b") for c in ("en", "fr", "de")]
    multi = pd.DataFrame(llh, columns=columns)
    vectors = pd.DataFrame(llh[:, :4], columns=["v1", "v2", "v3", "v4"])
    return [
        ("fusion", LogisticFusion().fit(frame, y), frame),
        ("fusion+pav", make_pipeline(LogisticFusion(), PAVCalibrator()).fit(frame, y), frame),
        ("multiclass", MulticlassFusion().fit(multi, yc), multi),
        ("backend", GaussianBackend().fit(vectors, yc), vectors),
    ]


@pytest.mark.parametrize("case", range(4))
def test_frames_are_checked_by_name_alike_in_every_door(tmp_path, case):
    """focal.runtime.load(model).decision_function(df[["sys2", "sys1"]]) returned wrong LLRs
    while focal.load refused the frame. Both now run one check: the same frame in another
    column order is refused by the estimator, focal.load and the runtime in the same words,
    naming both orders; other names are refused; the right frame and a plain array give the
    fitted model's outputs.
    """
    import focal.runtime

    name, model, frame = _frames_and_models()[case]
    path = tmp_path / f"{name}.json"
    focal.save(model, path)
    doors = [model, focal.load(path), focal.runtime.load(path)]
    want = np.asarray(model.transform(frame.to_numpy()))
    swapped = frame[list(frame.columns[::-1])]
    renamed = frame.rename(columns={frame.columns[0]: "other"})
    messages = []
    for door in doors:
        with pytest.raises(ValueError, match="must be in the same order") as info:
            door.transform(swapped)
        messages.append(str(info.value))
        with pytest.raises(ValueError, match="unseen at fit time:\n- other"):
            door.transform(renamed)
        np.testing.assert_array_equal(np.asarray(door.transform(frame)), want)
        np.testing.assert_array_equal(np.asarray(door.transform(frame.to_numpy())), want)
    assert len(set(messages)) == 1
    assert f"X has the columns {list(swapped.columns)!r}" in messages[0]
    assert f"takes {list(frame.columns)!r}" in messages[0]


def test_the_runtime_decision_function_of_the_issue_is_refused(tmp_path):
    import focal.runtime

    _, model, frame = _frames_and_models()[0]
    focal.save(model, tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"takes \['sys1', 'sys2'\]"):
        focal.runtime.load(tmp_path / "m.json").decision_function(frame[["sys2", "sys1"]])


def test_a_model_trained_from_files_takes_arrays_without_a_warning(tmp_path):
    """focal.load of a model trained from files warned "X does not have valid feature names"
    on every NumPy call: an array is taken by position, as the runtime takes it.
    """
    import warnings

    fit = train_fusion([SPK / f"dev_sys{k}.scores" for k in (1, 2)], SPK / "dev.key", pav=True)
    focal.save(fit.model, tmp_path / "m.json")
    model = focal.load(tmp_path / "m.json")
    assert list(model[0].feature_names_in_) == ["sys1", "sys2"]
    X = np.random.default_rng(0).normal(size=(5, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("transform", "predict", "predict_proba", "decision_function"):
            getattr(model if method != "decision_function" else model[-1], method)(
                X if method != "decision_function" else model[0].transform(X)
            )
