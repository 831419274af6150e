"""Write a small spoken term detection sample set (MediaEval SWS 2013 style) with a fixed seed.

    python data_samples/make_term_detection.py [OUTPUT_DIR]

Writes, into ``data_samples/term_detection/`` by default, the same synthetic evaluation twice:

* NIST STD 2006 formats: ``sws_sample.ecf.xml`` (audio), ``sws_sample.tlist.xml`` (queries),
  ``sws_sample.rttm`` (reference occurrences, one LEXEME line each), ``sws_sample.stdlist.xml``
  (system detections with scores and YES/NO decisions);
* plain whitespace tables: ``audio.txt`` (file tbeg dur), ``queries.txt`` (query text),
  ``reference.txt`` (query file tbeg dur), ``detections.txt`` (query file tbeg dur score decision).

Only the standard library and NumPy are used; the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import math
import pathlib
import sys
import xml.etree.ElementTree as ET

import numpy as np

SEED = 20130530  # the date of the SWS 2013 performance-measures document
N_FILES = 6
N_QUERIES = 8  # the last query never occurs: scorers must exclude it
P_TARGET, C_MISS, C_FA = 0.00015, 100.0, 1.0
BAYES_THRESHOLD = -math.log(P_TARGET * C_MISS / ((1 - P_TARGET) * C_FA))  # -logit(P_tar), eq. 31


def _occurrences(rng, queries, files, durations):
    """Non-overlapping occurrences: ~4 per query (none for the last one), 0.4-1.2 s long."""
    rows = []
    for q in queries[:-1]:
        for _ in range(int(rng.poisson(4)) + 1):
            f = int(rng.integers(len(files)))
            dur = round(float(rng.uniform(0.4, 1.2)), 2)
            tbeg = round(float(rng.uniform(1.0, durations[f] - 2.0)), 2)
            if all(not (r[1] == files[f] and abs(r[2] - tbeg) < 3.0) for r in rows if r[0] == q):
                rows.append((q, files[f], tbeg, dur))
    return sorted(rows)


def _detections(rng, queries, files, durations, occurrences):
    """1-2 detections near 85% of the occurrences (LLR-like scores around +5), ~20 false alarms
    per query spread over the audio (scores around -2); YES at the Bayes threshold.
    """
    rows = []
    for q, f, tbeg, dur in occurrences:
        if rng.random() < 0.85:
            for _ in range(int(rng.integers(1, 3))):
                d = round(dur * float(rng.uniform(0.8, 1.2)), 2)
                mid = tbeg + dur / 2 + float(rng.normal(0.0, 0.35))
                rows.append((q, f, round(max(mid - d / 2, 0.0), 2), d, float(rng.normal(5.0, 2.0))))
    for q in queries:
        for _ in range(int(rng.poisson(20))):
            k = int(rng.integers(len(files)))
            d = round(float(rng.uniform(0.4, 1.2)), 2)
            rows.append(
                (
                    q,
                    files[k],
                    round(float(rng.uniform(0.0, durations[k] - d)), 2),
                    d,
                    float(rng.normal(-2.0, 2.0)),
                )
            )
    rows = [(q, f, t, d, round(s, 4)) for q, f, t, d, s in rows]
    return sorted(rows, key=lambda r: (r[0], r[1], r[2], -r[4]))


def _xml(root: ET.Element, path: pathlib.Path):
    ET.indent(root)
    path.write_bytes(
        b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"
    )


def _table(path: pathlib.Path, header: str, lines):
    path.write_text(f"# {header}\n" + "".join(line + "\n" for line in lines), encoding="utf-8")


def main(out_dir: pathlib.Path) -> None:
    rng = np.random.default_rng(SEED)
    files = [f"sws2013_{i:05d}" for i in range(1, N_FILES + 1)]
    durations = [round(float(rng.uniform(60.0, 180.0)), 2) for _ in files]
    queries = [f"sws2013_dev_{i:03d}" for i in range(1, N_QUERIES + 1)]
    occ = _occurrences(rng, queries, files, durations)
    det = _detections(rng, queries, files, durations, occ)
    out_dir.mkdir(parents=True, exist_ok=True)

    ecf = ET.Element("ecf", source_signal_duration=f"{sum(durations):.2f}", version="sample-1")
    for f, d in zip(files, durations):
        ET.SubElement(
            ecf,
            "excerpt",
            audio_filename=f"{f}.wav",
            channel="1",
            tbeg="0.00",
            dur=f"{d:.2f}",
            language="multiple",
            source_type="sws2013",
        )
    _xml(ecf, out_dir / "sws_sample.ecf.xml")

    tlist = ET.Element(
        "termlist", ecf_filename="sws_sample.ecf.xml", language="multiple", version="sample-1"
    )
    for q in queries:
        ET.SubElement(ET.SubElement(tlist, "term", termid=q), "termtext").text = q
    _xml(tlist, out_dir / "sws_sample.tlist.xml")

    rttm = [";; reference occurrences: LEXEME file channel tbeg tdur query-id stype name conf"]
    rttm += [f"SPEAKER {f} 1 0.00 {d:.2f} <NA> <NA> spk_{f} <NA>" for f, d in zip(files, durations)]
    rttm += [f"LEXEME {f} 1 {t:.2f} {d:.2f} {q} lex spk_{f} <NA>" for q, f, t, d in occ]
    (out_dir / "sws_sample.rttm").write_text("\n".join(rttm) + "\n", encoding="utf-8")

    std = ET.Element(
        "stdlist",
        termlist_filename="sws_sample.tlist.xml",
        indexing_time="1.00",
        language="multiple",
        index_size="1",
        system_id="sample system",
    )
    for q in queries:
        lst = ET.SubElement(
            std, "detected_termlist", termid=q, term_search_time="1.00", oov_term_count="0"
        )
        for _, f, t, d, s in (r for r in det if r[0] == q):
            ET.SubElement(
                lst,
                "term",
                file=f,
                channel="1",
                tbeg=f"{t:.2f}",
                dur=f"{d:.2f}",
                score=f"{s:.4f}",
                decision="YES" if s >= BAYES_THRESHOLD else "NO",
            )
    _xml(std, out_dir / "sws_sample.stdlist.xml")

    _table(
        out_dir / "audio.txt",
        "file tbeg dur",
        (f"{f} 0.00 {d:.2f}" for f, d in zip(files, durations)),
    )
    _table(out_dir / "queries.txt", "query text", (f"{q} {q}" for q in queries))
    _table(
        out_dir / "reference.txt",
        "query file tbeg dur",
        (f"{q} {f} {t:.2f} {d:.2f}" for q, f, t, d in occ),
    )
    _table(
        out_dir / "detections.txt",
        "query file tbeg dur score decision",
        (
            f"{q} {f} {t:.2f} {d:.2f} {s:.4f} {'YES' if s >= BAYES_THRESHOLD else 'NO'}"
            for q, f, t, d, s in det
        ),
    )


if __name__ == "__main__":
    here = pathlib.Path(__file__).resolve().parent
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here / "term_detection")
