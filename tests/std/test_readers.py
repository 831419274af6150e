"""STD file formats (ECF, TLIST, RTTM, STDLIST, plain tables), the sample set and the report."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

from focal.std import (
    Detections,
    Reference,
    STDTask,
    read_audio_table,
    read_detection_table,
    read_ecf,
    read_query_table,
    read_reference_table,
    read_rttm,
    read_stdlist,
    read_task,
    read_tlist,
    term_detection_report,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data_samples" / "term_detection"
XML_SET = [
    SAMPLE / n
    for n in (
        "sws_sample.stdlist.xml",
        "sws_sample.rttm",
        "sws_sample.ecf.xml",
        "sws_sample.tlist.xml",
    )
]
TABLE_SET = [SAMPLE / n for n in ("detections.txt", "reference.txt", "audio.txt", "queries.txt")]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------------------------------------
# the committed sample set


def test_sample_xml_and_tables_give_the_same_report():
    xml = term_detection_report(read_task(*XML_SET), name="sample")
    table = term_detection_report(read_task(*TABLE_SET), name="sample")
    a, b = xml.to_dict(per_query=True), table.to_dict(per_query=True)
    assert a == b
    assert str(xml) == str(table)
    assert a["excluded_queries"] == ["sws2013_dev_008"]  # the query that never occurs
    assert a["n_queries"] == 7


def test_sample_files_are_read_completely():
    text = (SAMPLE / "sws_sample.stdlist.xml").read_text()
    det = read_stdlist(SAMPLE / "sws_sample.stdlist.xml")
    assert len(det) == text.count("<term ")
    assert int(det.decision.sum()) == text.count('decision="YES"')
    rttm = (SAMPLE / "sws_sample.rttm").read_text().splitlines()
    assert len(read_rttm(SAMPLE / "sws_sample.rttm")) == sum(ln.startswith("LEXEME") for ln in rttm)
    ecf = read_ecf(SAMPLE / "sws_sample.ecf.xml")
    assert ecf.duration == pytest.approx(ecf.source_signal_duration, abs=1e-9)
    assert all(not f.endswith(".wav") for f in ecf.file)
    assert list(read_tlist(SAMPLE / "sws_sample.tlist.xml")) == [
        f"sws2013_dev_{i:03d}" for i in range(1, 9)
    ]
    assert (
        read_stdlist(SAMPLE / "sws_sample.stdlist.xml").score.tolist()
        == read_detection_table(SAMPLE / "detections.txt").score.tolist()
    )


def test_sample_generator_is_reproducible(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_td", ROOT / "data_samples" / "make_term_detection.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    committed = sorted(p.name for p in SAMPLE.iterdir() if p.name != "README.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == committed
    for name in committed:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name
    assert sum((SAMPLE / n).stat().st_size for n in committed) < 1 << 20


# ---------------------------------------------------------------------------------------------
# XML readers: content and errors

STDLIST = """<?xml version="1.0" encoding="UTF-8"?>
<stdlist termlist_filename="t.tlist.xml" indexing_time="1" language="x" index_size="1"
 system_id="S">
  <detected_termlist termid="q1" term_search_time="1" oov_term_count="0">
    <term file="f1" channel="1" tbeg="1.5" dur="0.5" score="-2.25" decision="YES"/>
    {second}
  </detected_termlist>
</stdlist>
"""
GOOD = '<term file="f2" channel="2" tbeg="3" dur="1" score="-inf" decision="no"/>'


def test_read_stdlist_content(tmp_path):
    det = read_stdlist(write(tmp_path, "s.xml", STDLIST.format(second=GOOD)))
    assert det.query.tolist() == ["q1", "q1"]
    assert det.file.tolist() == ["f1", "f2"] and det.channel.tolist() == ["1", "2"]
    assert det.tbeg.tolist() == [1.5, 3.0] and det.dur.tolist() == [0.5, 1.0]
    assert det.score.tolist() == [-2.25, -np.inf]
    assert det.decision.tolist() == [True, False]
    kws = (
        STDLIST.format(second=GOOD)
        .replace("stdlist", "kwslist")
        .replace("detected_termlist termid", "detected_kwlist kwid")
        .replace("detected_termlist", "detected_kwlist")
    )
    kws = kws.replace("<term ", "<kw ")
    assert read_stdlist(write(tmp_path, "k.xml", kws)).score.tolist() == [-2.25, -np.inf]


@pytest.mark.parametrize(
    "second,message",
    [
        (
            '<term file="f2" tbeg="3" dur="1" decision="NO"/>',
            r"<term> #2 of <detected_termlist termid='q1'>: missing attribute\(s\) score",
        ),
        (
            '<term file="f2" tbeg="3" dur="1" score="high" decision="NO"/>',
            r"<term> #2 .*score 'high' is not a number",
        ),
        (
            '<term file="f2" tbeg="3" dur="1" score="nan" decision="NO"/>',
            r"<term> #2 .*score is NaN",
        ),
        (
            '<term file="f2" tbeg="3" dur="-1" score="0" decision="NO"/>',
            r"<term> #2 .*dur must be >= 0",
        ),
        (
            '<term file="f2" tbeg="3" dur="1" score="0" decision="MAYBE"/>',
            r"<term> #2 .*decision must be YES or NO",
        ),
        ('<hit file="f2"/>', r"<hit> inside <detected_termlist>: unexpected element"),
        (
            '<term file="f2" tbeg="3" dur="1" score="0" decision="NO">',
            r"not well-formed XML \(mismatched tag: line 7",
        ),
    ],
)
def test_read_stdlist_errors_name_file_and_element(tmp_path, second, message):
    p = write(tmp_path, "bad.stdlist.xml", STDLIST.format(second=second))
    with pytest.raises(ValueError, match=message) as err:
        read_stdlist(p)
    assert "bad.stdlist.xml" in str(err.value)


@pytest.mark.parametrize(
    "column,token,message",
    [
        ("tbeg", "\u0663", "tbeg '\u0663' is not a number"),  # float() reads 3; score files do not
        ("tbeg", "1_0", "tbeg '1_0' is not a number"),
        ("dur", "inf", "dur must be a finite number, got 'inf'"),
        ("dur", "-0.5", "dur must be >= 0 seconds, got '-0.5'"),
        ("score", "1e400", "score '1e400' is out of the float64 range"),
        ("score", "nan", "score is NaN"),
    ],
)
def test_xml_and_table_numbers_follow_one_rule(tmp_path, column, token, message):
    values = {"tbeg": "3", "dur": "1", "score": "0", column: token}
    term = '<term file="f2" tbeg="{tbeg}" dur="{dur}" score="{score}" decision="NO"/>'
    with pytest.raises(ValueError, match=f"<term> #2 .*: {message}"):
        read_stdlist(write(tmp_path, "s.xml", STDLIST.format(second=term.format(**values))))
    row = "q1 f2 {tbeg} {dur} {score} NO\n".format(**values)
    with pytest.raises(ValueError, match=f"t.txt:2: {message}"):
        read_detection_table(write(tmp_path, "t.txt", "q1 f1 1.5 0.5 2 YES\n" + row))


def test_doctype_and_entities_are_refused(tmp_path):
    lol = '<!ENTITY a0 "lol">' + "".join(
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)
    )
    bomb = f'<?xml version="1.0"?>\n<!DOCTYPE stdlist [{lol}]>\n<stdlist>&a9;</stdlist>\n'
    with pytest.raises(ValueError, match="DOCTYPE"):
        read_stdlist(write(tmp_path, "bomb.xml", bomb))
    external = '<?xml version="1.0"?>\n<!DOCTYPE ecf SYSTEM "file:///etc/passwd">\n<ecf/>\n'
    with pytest.raises(ValueError, match="DOCTYPE"):
        read_ecf(write(tmp_path, "ext.xml", external))
    # the hook fires before the internal subset is read: a broken subset is never parsed
    broken = (
        '<?xml version="1.0"?>\n<!DOCTYPE ecf [ <!ENTITY % p "x"> %p; <!ENTITY oops\n]>\n<ecf/>\n'
    )
    with pytest.raises(ValueError, match="DOCTYPE"):
        read_ecf(write(tmp_path, "broken.xml", broken))
    undefined = '<?xml version="1.0"?>\n<termlist><term termid="a">&x;</term></termlist>\n'
    with pytest.raises(ValueError, match="not well-formed"):
        read_tlist(write(tmp_path, "u.xml", undefined))


def test_read_ecf_union_of_excerpts(tmp_path):
    ecf = write(
        tmp_path,
        "e.ecf.xml",
        """<ecf source_signal_duration="100" version="1">
      <excerpt audio_filename="a.wav" channel="1" tbeg="0" dur="10" language="x" source_type="y"/>
      <excerpt audio_filename="a.wav" channel="2" tbeg="5" dur="10" language="x" source_type="y"/>
      <excerpt audio_filename="b.sph" channel="1" tbeg="100" dur="2.5"/>
      <excerpt audio_filename="c.flac" channel="1" tbeg="0" dur="1"/>
    </ecf>""",
    )
    e = read_ecf(ecf)
    # a: [0, 10] u [5, 15] = 15 s (channels share the time line); b: 2.5 s; c: 1 s
    assert e.duration == 18.5
    assert e.source_signal_duration == 100.0
    assert e.sources() == {("a", "1"), ("a", "2"), ("b", "1"), ("c.flac", "1")}
    with pytest.raises(ValueError, match=r"<excerpt> #1: missing attribute\(s\) dur"):
        read_ecf(write(tmp_path, "x.xml", '<ecf><excerpt audio_filename="a" tbeg="0"/></ecf>'))
    with pytest.raises(ValueError, match="lists no <excerpt>"):
        read_ecf(write(tmp_path, "y.xml", "<ecf/>"))


def test_read_tlist(tmp_path):
    t = write(
        tmp_path,
        "t.xml",
        """<termlist ecf_filename="e" language="x" version="1">
      <term termid="q1"><termtext>hello
         world</termtext></term>
      <term termid="q2"><termtext>x</termtext></term></termlist>""",
    )
    assert read_tlist(t) == {"q1": "hello world", "q2": "x"}
    kw = write(
        tmp_path, "k.xml", '<kwlist><kw kwid="K1"><kwtext>a b</kwtext><kwinfo/></kw></kwlist>'
    )
    assert read_tlist(kw) == {"K1": "a b"}
    with pytest.raises(ValueError, match="duplicate termid 'q1'"):
        read_tlist(
            write(tmp_path, "d.xml", '<termlist><term termid="q1"/><term termid="q1"/></termlist>')
        )
    with pytest.raises(ValueError, match="unexpected element"):
        read_tlist(write(tmp_path, "r.xml", "<terms/>"))


# ---------------------------------------------------------------------------------------------
# text formats


def test_read_rttm(tmp_path):
    p = write(
        tmp_path,
        "r.rttm",
        ";; comment\nSPEAKER f 1 0 10 <NA> <NA> s <NA>\n\n"
        "LEXEME f 1 2.5 0.5 q1 lex s <NA>\nLEXEME g 2 4 1 q2 lex s <NA> <NA>\n",
    )
    ref = read_rttm(p)
    assert ref.query.tolist() == ["q1", "q2"] and ref.file.tolist() == ["f", "g"]
    assert ref.channel.tolist() == ["1", "2"]
    assert ref.tbeg.tolist() == [2.5, 4.0] and ref.dur.tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match=r"r2.rttm:2: tbeg 'x' is not a number"):
        read_rttm(
            write(tmp_path, "r2.rttm", "LEXEME f 1 0 1 q lex s <NA>\nLEXEME f 1 x 1 q lex s <NA>\n")
        )
    with pytest.raises(ValueError, match=r"r3.rttm:1: a LEXEME line needs"):
        read_rttm(write(tmp_path, "r3.rttm", "LEXEME f 1 0 1\n"))


def test_read_tables(tmp_path):
    det = read_detection_table(
        write(tmp_path, "d.txt", "# header\nq f 1.0 0.5 2.5 YES\nq g 2 1 -inf no\n")
    )
    assert det.score.tolist() == [2.5, -np.inf] and det.decision.tolist() == [True, False]
    assert det.channel.tolist() == ["1", "1"]
    no_dec = read_detection_table(write(tmp_path, "n.txt", "q f 1.0 0.5 2.5\n"))
    assert no_dec.decision is None
    with pytest.raises(ValueError, match=r"m.txt:3: a detection .* has 6 fields, got 5"):
        read_detection_table(write(tmp_path, "m.txt", "#\nq f 1 1 1 YES\nq f 1 1 1\n"))
    ref = read_reference_table(write(tmp_path, "r.txt", "q f 1.0 0.5\n"))
    assert ref.tbeg.tolist() == [1.0]
    with pytest.raises(ValueError, match=r"r2.txt:1: dur must be >= 0"):
        read_reference_table(write(tmp_path, "r2.txt", "q f 1.0 -0.5\n"))
    audio = read_audio_table(write(tmp_path, "a.txt", "f 0 10\ng 0 5\n"))
    assert audio.duration == 15.0
    assert read_query_table(write(tmp_path, "q.txt", "q1 some words\nq2\n")) == {
        "q1": "some words",
        "q2": "",
    }
    with pytest.raises(ValueError, match="q2.txt:2: duplicate query id 'q1'"):
        read_query_table(write(tmp_path, "q2.txt", "q1\nq1\n"))


def test_read_task_checks_and_notes(tmp_path):
    det = write(tmp_path, "d.txt", "q1 f 1.0 1.0 2.0 YES\nq2 f 5.0 1.0 -1.0 NO\n")
    ref = write(
        tmp_path, "r.rttm", "LEXEME f 1 1.0 1.0 q1 lex s <NA>\nLEXEME f 1 9.0 1.0 zz lex s <NA>\n"
    )
    audio = write(tmp_path, "a.txt", "f 0 100\n")
    task = read_task(det, ref, audio, ["q1", "q2"], n_tps=2.0)
    assert task.t_audio == 100.0 and task.n_tps == 2.0 and task.queries == ("q1", "q2")
    assert len(task.reference) == 1 and "left out 1 reference line" in task.notes[0]
    report = term_detection_report(task)
    assert report.trials.excluded_queries == ("q2",)
    assert "left out 1 reference line" in str(report)
    with pytest.raises(
        ValueError,
        match=r"d.txt: the system output names 1 query id\(s\) not in the term list: 'q2'",
    ):
        read_task(det, ref, audio, ["q1"])
    with pytest.raises(ValueError, match=r"d.txt: .*not in the audio list, e.g. file 'f'"):
        read_task(det, ref, write(tmp_path, "a2.txt", "g 0 100\n"))
    assert read_task(det, ref, 50.0).t_audio == 50.0
    ecf = write(
        tmp_path,
        "e.xml",
        '<ecf source_signal_duration="120"><excerpt audio_filename="f.wav" '
        'channel="1" tbeg="0" dur="100"/></ecf>',
    )
    assert any("source_signal_duration says 120" in n for n in read_task(det, ref, ecf).notes)


# ---------------------------------------------------------------------------------------------
# the report


def test_report_contents():
    task = read_task(*XML_SET)
    report = term_detection_report(task)
    d = report.to_dict(per_query=True)
    assert d["name"] == "sample system"  # the STDLIST system_id
    assert d["operating_point"]["beta"] == pytest.approx(66.6567, abs=1e-4)
    assert d["mtwv"]["twv"] >= d["atwv"]["twv"]
    assert d["min_cnxe"] <= d["cnxe"] and d["calibration_loss"] >= 0
    assert d["atwv"]["n_hits"] + d["atwv"]["n_misses"] == d["n_occurrences"]
    rows = d["queries"]
    assert sum(r["n_hits"] for r in rows) == d["atwv"]["n_hits"]
    assert sum(r["n_false_alarms"] for r in rows) == d["atwv"]["n_false_alarms"]
    assert np.mean([r["twv"] for r in rows]) == pytest.approx(d["atwv"]["twv"], abs=1e-12)
    text = report.to_text(per_query=True)
    for word in ("ATWV", "MTWV", "C_nxe", "C_nxe^min", "excluded", "sws2013_dev_001"):
        assert word in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_report_docstring_example():
    import doctest

    import focal.std.report as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 4


def test_report_without_decisions_and_with_infinite_scores():
    ref = Reference(query=["q"], file=["a"], tbeg=[1.0], dur=[1.0])
    det = Detections(["q", "q"], ["a", "a"], [1.0, 5.0], [1.0, 1.0], [3.0, -np.inf])
    report = term_detection_report(STDTask(det, ref, 10.0))
    assert report.atwv is None and report.to_dict()["atwv"] is None
    assert report.cnxe is not None and report.min_cnxe is None
    assert any("+/-inf" in n for n in report.notes)
    assert "no decisions" in str(report)
    assert report.per_query()[0]["n_hits"] == 1  # at the MTWV threshold
    with_thr = term_detection_report(STDTask(det, ref, 10.0), decision_threshold=4.0)
    assert with_thr.atwv.twv == 0.0 and with_thr.per_query()[0]["n_hits"] == 0
    silent = term_detection_report(STDTask(Detections([], [], [], [], []), ref, 10.0))
    assert silent.cnxe is None and silent.mtwv.twv == 0.0
    assert math.isinf(silent.mtwv.threshold)


def test_batched_reading_keeps_line_numbers(tmp_path, monkeypatch):
    import focal._text.blocks as _textfiles
    import focal.std._xml as xml_readers

    lines = [f"q f{i % 3} {i}.5 0.25 {i / 10} {'YES' if i % 2 else 'NO'}" for i in range(10)]
    whole = read_detection_table(write(tmp_path, "ok.txt", "# h\n" + "\n".join(lines) + "\n"))
    monkeypatch.setattr(_textfiles, "BLOCK_BYTES", 16)  # a block per line or two
    batched = read_detection_table(tmp_path / "ok.txt")
    for name in ("query", "file", "tbeg", "dur", "score", "decision"):
        assert getattr(batched, name).tolist() == getattr(whole, name).tolist()
    lines[7] = "q f1 7.5 0.25 oops NO"
    with pytest.raises(ValueError, match=r"bad.txt:9: score 'oops' is not a number") as err:
        read_detection_table(write(tmp_path, "bad.txt", "# h\n" + "\n".join(lines) + "\n"))
    assert err.value.line == 9 and err.value.path.endswith("bad.txt")
    monkeypatch.setattr(xml_readers._Rows, "BATCH", 3)
    xml = (
        "<stdlist>"
        + "".join(
            f'<detected_termlist termid="q{j}">'
            + "".join(
                f'<term file="f" tbeg="{k}" dur="{-1 if (j, k) == (2, 1) else 1}" score="0" '
                'decision="NO"/>'
                for k in range(3)
            )
            + "</detected_termlist>"
            for j in range(4)
        )
        + "</stdlist>"
    )
    with pytest.raises(ValueError, match=r"<term> #2 of <detected_termlist termid='q2'>: dur must"):
        read_stdlist(write(tmp_path, "b.xml", xml))


def test_text_files_must_be_utf8(tmp_path):
    p = tmp_path / "latin.txt"
    p.write_bytes(b"q f 1 1 0 YES\nq f\xe9 1 1 0 YES\n")
    with pytest.raises(ValueError, match=r"latin.txt:2: not a UTF-8 text file"):
        read_detection_table(p)


def test_missing_files_are_value_errors_naming_the_file(tmp_path):
    from focal.std import read_ecf, read_rttm, read_stdlist

    for reader in (read_ecf, read_rttm, read_stdlist):
        path = tmp_path / f"absent_{reader.__name__}"
        with pytest.raises(ValueError, match=f"absent_{reader.__name__}.*cannot open"):
            reader(path)
