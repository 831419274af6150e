"""Hostile model files: focal.load refuses them fast, in bounded memory, with a ValueError naming
the file; keyed signatures (HMAC-SHA256) prove who saved a model.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys

import numpy as np
import pytest

import focal
from focal import GaussianBackend, LinearCalibrator, LogisticFusion, PAVCalibrator
from tests._support.limits import expect_error, run_limited


def _data(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    X = rng.normal(size=(n, d)) + 2.0 * y[:, None]
    return X, y.astype(int)


X, Y = _data()
FUSION = LogisticFusion().fit(X, Y)


def _saved(tmp_path, est, name="m.json", **kw):
    path = tmp_path / name
    focal.save(est, path, **kw)
    return path


def _load(path, key=None):
    return type(focal.load(path, key=key)).__name__


def _resave(path, edit):
    """Edit the JSON document of a saved model and give it correct checksums (as an attacker
    can): only focal's semantic checks stand in the way.
    """
    doc = json.loads(path.read_text())
    doc.pop("integrity", None)
    edit(doc)
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    path.write_text(json.dumps(doc, indent=1))
    return path


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_at_once(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    expect_error(
        run_limited(_load, device, cpu_seconds=3, memory_mb=200, wall_seconds=10),
        rf"^{device}: NUL byte",
    )


def test_deep_nesting_is_a_value_error(tmp_path):
    for depth in (987, 5000, 200_000):
        path = tmp_path / f"deep{depth}.json"
        path.write_text('{"a":' * depth + "1" + "}" * depth)
        expect_error(run_limited(_load, str(path)), rf"^{path}: .*nested")
        path.write_text('{"a":' + "[" * depth + "]" * depth + "}")
        expect_error(run_limited(_load, str(path)), rf"^{path}: .*nested")


def test_a_huge_file_with_a_wrong_checksum_is_refused_before_parsing(tmp_path):
    """Millions of coefficients and a wrong checksum: refused at the speed of SHA-256."""
    n = 2_000_000
    coef = ", ".join(["0.123456789012345"] * n)
    text = _saved(tmp_path, FUSION).read_text()
    doc = json.loads(text)
    old = json.dumps(doc["model"]["fitted"]["coef_"])
    huge = text.replace(old.replace(", ", ", "), f"[{coef}]", 1)
    assert len(huge) > 30_000_000 and huge != text
    path = tmp_path / "huge.json"
    path.write_text(huge)
    expect_error(
        run_limited(_load, str(path), cpu_seconds=5, memory_mb=400),
        rf"^{path}: integrity.sha256: the checksum of the file's bytes does not match",
    )


def test_duplicate_keys_are_found_in_linear_time(tmp_path):
    """Issue 30: 80,000 keys took 168 s to refuse (a quadratic search for the repeated one);
    200,000 keys, the repeated one last, are refused within a few seconds of CPU.
    """
    n = 200_000
    members = ", ".join(f'"k{i}": {i}' for i in range(n))
    path = tmp_path / "keys.json"
    path.write_text(f'{{"format": "focal-model", {members}, "k{n - 1}": 0}}')
    expect_error(
        run_limited(_load, str(path), cpu_seconds=4, memory_mb=400),
        rf"^{path}: .*duplicate key 'k{n - 1}'",
    )


def test_the_size_cap_is_checked_before_reading(tmp_path):
    path = _saved(tmp_path, FUSION)
    size = path.stat().st_size
    assert type(focal.load(path, max_bytes=size)) is LogisticFusion
    with pytest.raises(ValueError, match=rf"{size:,} bytes, larger than the {size - 1:,}"):
        focal.load(path, max_bytes=size - 1)
    with open(path, "rb") as handle, pytest.raises(ValueError, match="larger than the 10 bytes"):
        focal.load(handle, max_bytes=10)
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        focal.load(path, max_bytes=0)


def test_a_flipped_bit_is_refused_on_the_raw_bytes(tmp_path):
    path = _saved(tmp_path, FUSION)
    data = bytearray(path.read_bytes())
    at = data.index(b'"coef_"') + 12
    data[at] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"integrity.sha256: the checksum of the file's bytes"):
        focal.load(path)


@pytest.mark.parametrize(
    "version, shown", [("1", '"1"'), (1.0, "1.0"), (None, "null"), ([1], "[1]")]
)
def test_a_version_that_is_not_an_integer_says_so(tmp_path, version, shown):
    path = _resave(_saved(tmp_path, FUSION), lambda d: d.update(version=version))
    with pytest.raises(
        ValueError,
        match=rf"version: the schema version must be an integer, "
        rf"got .*{re_escape(shown)}",
    ):
        focal.load(path)


def re_escape(text):
    import re

    return re.escape(text)


# ------------------------------------------------------------------------ usable numbers


def _set(path_in_fitted, value):
    def edit(doc):
        node = doc["model"]["fitted"]
        *parents, last = path_in_fitted
        for key in parents:
            node = node[key]
        node[last] = value

    return edit


def test_coefficients_that_overflow_on_ordinary_scores_are_refused(tmp_path):
    path = _resave(_saved(tmp_path, FUSION), _set(("coef_",), [1e308, 1e308]))
    with pytest.raises(
        ValueError,
        match=r"numerically unusable parameters: the model fails "
        r"on ordinary scores .*overflows",
    ):
        focal.load(path)


def test_a_gaussian_mean_of_1e200_is_refused(tmp_path):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=300)
    Xg = rng.normal(size=(300, 2)) + y[:, None]
    path = _saved(tmp_path, GaussianBackend().fit(Xg, y))

    def edit(doc):
        doc["model"]["fitted"]["model_"]["means"][0][0] = 1e200

    _resave(path, edit)
    with pytest.raises(ValueError, match=r"numerically unusable parameters: the model gives"):
        focal.load(path)


def test_unbounded_pav_keeps_its_infinite_llrs(tmp_path):
    s = np.linspace(-3, 3, 200)
    pav = PAVCalibrator(pseudo_count=0).fit(s, (s > 0).astype(int))
    assert np.isinf(pav.transform(np.array([-100.0, 100.0]))).all()
    loaded = focal.load(_saved(tmp_path, pav))
    assert np.isinf(loaded.transform(np.array([-100.0, 100.0]))).all()


def test_a_calibrator_with_a_huge_but_usable_slope_loads(tmp_path):
    """1e300 * 100 is finite: a strange model, but not an unusable one."""
    cal = LinearCalibrator().fit(X[:, 0], Y)
    path = _resave(_saved(tmp_path, cal), _set(("coef_",), [1e300]))
    assert focal.load(path).coef_[0] == 1e300
    _resave(path, _set(("coef_",), [1e307]))
    with pytest.raises(ValueError, match="numerically unusable"):
        focal.load(path)


def _load_without(path, module):
    sys.modules[module] = None  # import fails: the library is not installed
    return _load(path)


def test_set_output_with_a_missing_library_is_refused_at_load(tmp_path):
    pytest.importorskip("pandas")
    path = _saved(tmp_path, LogisticFusion().set_output(transform="pandas").fit(X, Y))
    assert _load(path) == "LogisticFusion"
    expect_error(run_limited(_load_without, path, "pandas"), rf"^{path}: .*pandas")


# ------------------------------------------------------------------------ keyed signatures


def test_a_signed_model_loads_with_its_key_only(tmp_path):
    key = os.urandom(32)
    path = _saved(tmp_path, FUSION, key=key)
    assert _load(path, key) == "LogisticFusion"
    assert _load(path) == "LogisticFusion"  # without a key: the checksum of the bytes
    with pytest.raises(ValueError, match="hmac_sha256: the signature does not match"):
        focal.load(path, key=key + b"x")
    unsigned = _saved(tmp_path, FUSION, "u.json")
    with pytest.raises(ValueError, match="no signature"):
        focal.load(unsigned, key=key)


def test_the_signature_is_hmac_sha256_of_the_bytes_before_its_line(tmp_path):
    key = "a secret"
    text = _saved(tmp_path, FUSION, key=key).read_bytes()
    body, last = text.rsplit(b",\n", 1)
    mac = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
    assert f'"hmac_sha256": "{mac}"'.encode() in last


def test_an_attacker_who_recomputes_the_checksums_cannot_forge_the_signature(tmp_path):
    key = b"k" * 32
    path = _saved(tmp_path, FUSION, key=key)
    body = path.read_bytes().rsplit(b",\n", 1)[0]
    doc = json.loads(body + b"\n}\n")
    doc["model"]["fitted"]["coef_"][0] *= 3
    path.write_bytes(_resave_bytes(doc, key=b"not the key"))
    assert _load(path) == "LogisticFusion"  # the checksums are right: only the key tells
    with pytest.raises(ValueError, match="signature does not match"):
        focal.load(path, key=key)


def _resave_bytes(doc, key):
    from focal.models.integrity import seal

    payload = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return seal(json.dumps(doc, indent=2).encode() + b"\n", key)


def test_a_reformatted_file_still_loads_without_a_key(tmp_path):
    path = _saved(tmp_path, FUSION)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc, indent=5))
    assert _load(path) == "LogisticFusion"
    with pytest.raises(ValueError, match="no signature"):
        focal.load(path, key=b"k")


def test_crlf_line_ends_are_not_damage(tmp_path):
    key = b"k" * 16
    path = _saved(tmp_path, FUSION, key=key)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert _load(path, key) == "LogisticFusion"
