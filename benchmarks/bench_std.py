"""Spoken term detection: full SWS 2013 report on 500 queries, 20 hours of audio, 1M detections.

Target: alignment, ATWV, MTWV, C_nxe and C_nxe^min together under 20 s on one core,
with memory proportional to the detection list. The peer a user would run instead is NIST's
F4DE STDEval / KWSEval (Perl); it is not a Python package and is not timed here.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np
from _common import optional_import, peak_memory, skipped

from focal import bayes_threshold
from focal.std import (
    SWS2013,
    Detections,
    Reference,
    STDTask,
    affine_recalibration,
    align,
    atwv,
    cnxe,
    mtwv,
    read_detection_table,
    read_rttm,
    read_stdlist,
    term_detection_report,
)


def make_task(n_queries, n_files, file_seconds, n_detections, seed=0):
    """Synthetic search: ~20 occurrences per query, 0-3 detections near each, the rest false
    alarms spread over the audio; scores roughly calibrated LLRs, YES at the Bayes threshold.
    """
    rng = np.random.default_rng(seed)
    n_occ = int(rng.poisson(20, n_queries).sum())
    occ_q = rng.integers(0, n_queries, n_occ)
    occ_f = rng.integers(0, n_files, n_occ)
    occ_dur = rng.uniform(0.4, 1.5, n_occ)
    occ_t = rng.uniform(0, file_seconds - 2, n_occ)

    per_occ = rng.choice(4, n_occ, p=[0.15, 0.45, 0.25, 0.15])
    src = np.repeat(np.arange(n_occ), per_occ)
    n_near = src.size
    n_far = n_detections - n_near
    near_dur = occ_dur[src] * rng.uniform(0.7, 1.3, n_near)
    near_mid = occ_t[src] + occ_dur[src] / 2 + rng.normal(0, 0.4, n_near)
    q = np.concatenate([occ_q[src], rng.integers(0, n_queries, n_far)])
    f = np.concatenate([occ_f[src], rng.integers(0, n_files, n_far)])
    dur = np.concatenate([near_dur, rng.uniform(0.4, 1.5, n_far)])
    mid = np.concatenate([near_mid, rng.uniform(0, file_seconds, n_far)])
    score = np.concatenate([rng.normal(5.0, 2.5, n_near), rng.normal(-8.0, 2.5, n_far)])
    decision = score >= bayes_threshold(SWS2013.p_target, SWS2013.c_miss, SWS2013.c_fa)
    det = Detections(
        query=q,
        file=f,
        tbeg=np.round(np.maximum(mid - dur / 2, 0.0), 3),
        dur=np.round(dur, 3),
        score=np.round(score, 4),
        decision=decision,
    )
    ref = Reference(query=occ_q, file=occ_f, tbeg=occ_t, dur=occ_dur)
    return STDTask(det, ref, t_audio=float(n_files * file_seconds))


def write_system(det, xml_path, table_path):
    """The detections as an STDLIST and as a plain table (same decimal strings)."""
    order = np.argsort(det.query, kind="stable")
    rows = list(
        zip(
            *(
                getattr(det, name)[order].tolist()
                for name in ("query", "file", "tbeg", "dur", "score", "decision")
            )
        )
    )
    with open(xml_path, "w") as xml, open(table_path, "w") as table:
        xml.write('<?xml version="1.0" encoding="UTF-8"?>\n<stdlist system_id="bench">\n')
        current = None
        for q, f, t, d, s, y in rows:
            if q != current:
                if current is not None:
                    xml.write("</detected_termlist>\n")
                xml.write(f'<detected_termlist termid="q{q}">\n')
                current = q
            dec = "YES" if y else "NO"
            xml.write(
                f'<term file="f{f}" channel="1" tbeg="{t:.3f}" dur="{d:.3f}" score="{s:.4f}" '
                f'decision="{dec}"/>\n'
            )
            table.write(f"q{q} f{f} {t:.3f} {d:.3f} {s:.4f} {dec}\n")
        xml.write("</detected_termlist>\n</stdlist>\n")


def write_rttm(ref, path):
    """The reference occurrences as RTTM LEXEME lines."""
    with open(path, "w") as out:
        out.write(";; synthetic reference\n")
        for q, f, t, d in zip(
            ref.query.tolist(), ref.file.tolist(), ref.tbeg.tolist(), ref.dur.tolist()
        ):
            out.write(f"LEXEME f{f} 1 {t:.3f} {d:.3f} q{q} lex spk <NA>\n")


def _pandas_table(pandas, path):
    """What a user would write instead of read_detection_table: split and convert, no checks."""
    return pandas.read_csv(
        path,
        sep=r"\s+",
        header=None,
        comment="#",
        names=["query", "file", "tbeg", "dur", "score", "decision"],
        engine="c",
    )


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def run(quick: bool = False):
    n_queries, n_files, file_seconds, n_det = (
        (50, 20, 360.0, 100_000) if quick else (500, 200, 360.0, 1_000_000)
    )
    task = make_task(n_queries, n_files, file_seconds, n_det)
    det = task.detections
    print(
        f"{n_queries} queries, {task.t_audio / 3600:.1f} h of audio, {len(det):,} detections, "
        f"{len(task.reference):,} occurrences"
    )

    t_align, trials = _timed(align, task)
    t_atwv, act = _timed(atwv, trials)
    t_mtwv, best = _timed(mtwv, trials)
    t_cnxe, c = _timed(cnxe, trials)
    t_min, rec = _timed(affine_recalibration, trials)
    print("\n== stages (s)")
    for label, t in (
        ("alignment", t_align),
        ("ATWV", t_atwv),
        ("MTWV (sort + sweep)", t_mtwv),
        ("C_nxe", t_cnxe),
        ("C_nxe^min (Newton, reg=0)", t_min),
    ):
        print(f"  {label:<28}{t:8.3f}")

    t0 = time.perf_counter()
    report = term_detection_report(task)
    t_report = time.perf_counter() - t0
    print(f"\n== full report: {t_report:.2f} s (target < 20 s: {t_report / 20:.2f}x the budget)")
    print(report)
    print(
        f"  stage values: ATWV {act.twv:.4f}, MTWV {best.twv:.4f}, C_nxe {c:.4f}, "
        f"C_nxe^min {rec.min_cnxe:.4f}"
    )

    peak, _ = peak_memory(term_detection_report, task)
    in_bytes = sum(
        getattr(det, name).nbytes for name in ("query", "file", "tbeg", "dur", "score", "decision")
    )
    print(
        f"  peak memory {peak / 2**20:.0f} MiB = {peak / in_bytes:.2f}x the detection list "
        f"({in_bytes / 2**20:.0f} MiB; {peak / len(det):.0f} bytes per detection)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        xml_path, table_path = os.path.join(tmp, "sys.stdlist.xml"), os.path.join(tmp, "sys.txt")
        write_system(det, xml_path, table_path)
        rttm_path = os.path.join(tmp, "ref.rttm")
        write_rttm(task.reference, rttm_path)
        t_xml, from_xml = _timed(read_stdlist, xml_path)
        t_table, from_table = _timed(read_detection_table, table_path)
        t_rttm, from_rttm = _timed(read_rttm, rttm_path)
        pandas = optional_import("pandas")
        t_pandas = None if pandas is None else _timed(_pandas_table, pandas, table_path)[0]
        size = os.path.getsize(xml_path)
    assert np.array_equal(from_xml.score, from_table.score)
    assert np.array_equal(np.sort(from_xml.score), np.sort(det.score))
    print("\n== reading the detections (at the edge; not part of the 20 s target)")
    print(f"  STDLIST XML ({size / 2**20:.0f} MiB)   {t_xml:8.2f} s")
    print(f"  plain table              {t_table:8.2f} s")
    if t_pandas is None:
        skipped("pandas.read_csv", "pandas is not installed")
    else:
        print(
            f"  pandas.read_csv of it    {t_pandas:8.2f} s   (focal / pandas = "
            f"{t_table / t_pandas:.2f}; pandas only splits and converts: no checks, no YES/NO)"
        )
    print(f"  RTTM ({len(from_rttm):,} LEXEME lines) {t_rttm:8.2f} s")
    skipped("NIST F4DE STDEval/KWSEval", "Perl tool, not a Python peer")
