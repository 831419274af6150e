"""`focal sws --prefer` (which of two competing detections is aligned) and `--cnxe-queries`
(C_nxe over the evaluated queries, or every query: MediaEval 2013 SWS measures eq. 41).
"""

import json

from focal.cli import main


def _files(tmp_path):
    # query a occurs at 1.0 s; two detections compete for it: score 3 with NO, score 2 with
    # YES (decisions not monotone in score). Query b has no occurrence but a YES at 30 s.
    det = tmp_path / "det.txt"
    det.write_text(
        "# query file tbeg dur score decision\n"
        "a f 1.0 0.5 3.0 NO\n"
        "a f 1.2 0.5 2.0 YES\n"
        "a f 50.0 0.5 -1.0 NO\n"
        "b f 30.0 0.5 4.0 YES\n"
    )
    ref = tmp_path / "ref.txt"
    ref.write_text("# query file tbeg dur\na f 1.0 0.5\n")
    queries = tmp_path / "queries.txt"
    queries.write_text("# query text\na a\nb b\n")
    return [str(det), str(ref), "100", str(queries)]


def _report(tmp_path, capsys, *extra):
    assert main(["sws", *_files(tmp_path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_prefer_decision_aligns_the_yes_detection(tmp_path, capsys):
    by_score = _report(tmp_path, capsys)
    by_decision = _report(tmp_path, capsys, "--prefer", "decision")
    # by score: the NO at score 3 takes the occurrence (a miss for ATWV) and the YES at score 2
    # is a false alarm; by decision: the YES is the hit and the NO goes unaligned
    assert by_score["atwv"]["n_hits"] == 0 and by_score["atwv"]["n_false_alarms"] == 1
    assert by_decision["atwv"]["n_hits"] == 1 and by_decision["atwv"]["n_false_alarms"] == 0
    assert by_decision["atwv"]["twv"] > by_score["atwv"]["twv"]


def test_cnxe_queries_all_keeps_the_query_without_occurrences(tmp_path, capsys):
    evaluated = _report(tmp_path, capsys)
    every = _report(tmp_path, capsys, "--cnxe-queries", "all")
    assert evaluated["atwv"] == every["atwv"]  # TWV is unchanged
    # the confident false alarm on b (llr 4) now costs C_nxe something
    assert every["cnxe"] > evaluated["cnxe"]
    assert any("but C_nxe (eq. 41)" in note for note in every["notes"])
