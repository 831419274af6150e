"""Print the declared minimum version of every run-time and test dependency as an exact pin.

`.ci/run` installs these in a second virtual environment and runs the fast tests there, so the
floors in pyproject.toml (the one place they are declared) are proven, not hoped for.
"""

import pathlib
import re
import sys

import tomllib

project = tomllib.loads(pathlib.Path(sys.argv[1]).read_text())["project"]
pins = []
for spec in project["dependencies"] + project["optional-dependencies"]["test"]:
    spec = spec.split(";")[0].strip()
    # a '>=' floor is tested at exactly that version; an exact '==' pin (the CI gates) is its own
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(?:>=|==)\s*([0-9][0-9.]*)", spec)
    if match is None:
        sys.exit(f"{spec!r}: every dependency needs a '>=' floor (or an '==' pin) to be tested at")
    pins.append(f"{match[1]}{match[2] or ''}=={match[3]}")
print("\n".join(pins))
