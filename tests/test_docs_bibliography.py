"""The bibliography holds each work once, and every citation by key names one of its works.

Docstrings and pages cite works by their key in ``docs/references.bib`` with the ``:cite:p:``
(or ``:cite:t:``) role; the site's build links them to the bibliography page.
"""

from __future__ import annotations

import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIB = (ROOT / "docs" / "references.bib").read_text(encoding="utf-8")
ENTRIES = re.findall(r"^@\w+\{([^,\s]+),(.*?)^\}", BIB, re.M | re.S)
CITE = re.compile(r":cite:[pt]?:`([^`]+)`")


def _cited():
    """``{key: [where, ...]}`` of every citation by key in focal/ and docs/."""
    sources = [*(ROOT / "focal").rglob("*.py"), *(ROOT / "docs").rglob("*.rst")]
    cited = collections.defaultdict(list)
    for path in sources:
        if "_build" in path.parts:
            continue
        for keys in CITE.findall(path.read_text(encoding="utf-8")):
            for key in keys.split(","):
                cited[key.strip()].append(str(path.relative_to(ROOT)))
    return cited


def test_each_work_is_in_the_bibliography_once():
    keys = [key for key, _ in ENTRIES]
    assert len(keys) == len(set(keys)) > 10
    title = re.compile(r"title\s*=\s*\{(.*)\},?\s*$", re.M)
    titles = [title.search(body)[1].lower() for _, body in ENTRIES]
    assert len(titles) == len(set(titles))


def test_every_citation_names_a_work_of_the_bibliography():
    keys = {key for key, _ in ENTRIES}
    cited = _cited()
    assert cited  # the convention is in use
    unknown = {key: where for key, where in cited.items() if key not in keys}
    assert not unknown, unknown


def test_the_convention_is_found():
    assert CITE.findall("eq. 7.41 :cite:p:`brummer2010thesis`; :cite:t:`a,b`") == [
        "brummer2010thesis",
        "a,b",
    ]
